"""Correcting evidence over the real API and refresh handlers on moto: a retracted trial stays,
marked with who, when and why; every estimate of its workload is recomputed without it (admission
`retracted`, not even as cost) and the new version lists the change; a corrected trial names
the one it supersedes; a retracted workload stays readable and takes nothing new."""

from __future__ import annotations

from tests.integration.test_trial_refresh import WL, world  # noqa: F401  (the fixture)
from tests.support.factories import trial


def _latest(world):  # noqa: F811
    eid = world.call("GET", f"/workloads/{WL}/estimates")[1]["items"][0]["estimate_id"]
    return world.call("GET", f"/estimates/{eid}")[1]


def test_a_mistaken_trial_retracted_leaves_every_figure_and_a_version_says_so(world):  # noqa: F811
    # Given a mistaken import: a trn2 trial of another dataset, excluded with a mismatch
    wrong = trial("t-wrong", count=2, workload_id=WL, dataset_id="ds-other")
    assert world.post_trial(wrong)[0] == 201
    world.refresh.drain()
    before = _latest(world)
    adm = {a["trial_id"]: a for a in before["estimate"]["admission"]}
    assert adm["t-wrong"]["reasons"][0]["code"] == "other_dataset"
    costly = {li["name"] for li in before["estimate"]["line_items"]}
    assert any("t-wrong" in name for name in costly)  # an excluded trial still counts as cost

    # When it is retracted, with a reason
    status, done = world.call(
        "POST",
        f"/workloads/{WL}/trials/t-wrong/retract",
        {"reason": "imported to the wrong workload"},
    )
    assert status == 200, done
    mark = done["trial"]["retracted"]
    assert mark["reason"] == "imported to the wrong workload" and mark["by"] and mark["at"]
    world.refresh.drain()

    # Then the record stays, marked; the estimate has a new version without it, saying why
    stored = world.call("GET", f"/workloads/{WL}/trials")[1]["items"]
    assert {t["trial_id"]: t["retracted"] is not None for t in stored}["t-wrong"] is True
    after = _latest(world)
    assert after["version"] == before["version"] + 1
    assert after["reason"].startswith("trial t-wrong retracted: imported to the wrong workload")
    adm = {a["trial_id"]: a for a in after["estimate"]["admission"]}
    assert adm["t-wrong"]["admission"] == "excluded"
    assert [r["code"] for r in adm["t-wrong"]["reasons"]] == ["retracted"]
    assert not any("t-wrong" in li["name"] for li in after["estimate"]["line_items"])
    moved = {c["figure"] for c in after["changes"]}
    assert "total_usd" in moved and any(f.startswith("warning") for f in moved), moved
    codes = {w["code"] for w in after["estimate"]["warnings"]}
    assert "trials_retracted" in codes and "trials_excluded" not in codes

    # And a second retraction is a conflict; an unknown trial is a 404
    again = world.call("POST", f"/workloads/{WL}/trials/t-wrong/retract", {"reason": "x"})
    assert again[0] == 409
    assert world.call("POST", f"/workloads/{WL}/trials/nope/retract", {"reason": "x"})[0] == 404
    assert world.call("POST", f"/workloads/{WL}/trials/t-wrong/retract", {})[0] == 422


def test_a_corrected_trial_supersedes_the_one_it_names(world):  # noqa: F811
    # Given t-1 recorded with twice the real work (a unit slip), when the corrected record
    # arrives naming it
    fixed = trial("t-1b", count=2, work=1.8e8, workload_id=WL, supersedes="t-1")
    assert world.post_trial(fixed)[0] == 201
    world.refresh.drain()
    # Then t-1 is retracted, naming its correction, and the estimate rests on t-1b alone
    old = world.call("GET", f"/workloads/{WL}/trials")[1]["items"]
    mark = {t["trial_id"]: t["retracted"] for t in old}["t-1"]
    assert mark["superseded_by"] == "t-1b" and "superseded" in mark["reason"]
    adm = {a["trial_id"]: a for a in _latest(world)["estimate"]["admission"]}
    assert adm["t-1"]["reasons"][0]["code"] == "retracted" and adm["t-1b"]["admission"] == "pooled"
    # A second correction of t-1 is refused, naming the field
    status, err = world.post_trial(trial("t-1c", count=2, workload_id=WL, supersedes="t-1"))
    assert status == 409 and err["fields"] == ["supersedes"]
    # A record that claims to be retracted already is refused
    claimed = trial("t-x", count=2, workload_id=WL).model_dump(mode="json")
    claimed["retracted"] = {"at": "2026-01-01T00:00:00Z", "reason": "mine"}
    assert world.call("POST", f"/workloads/{WL}/trials", claimed)[0] == 422


def test_a_retracted_workload_stays_readable_and_takes_nothing_new(world):  # noqa: F811
    status, done = world.call("POST", f"/workloads/{WL}/retract", {"reason": "wrong target"})
    assert status == 200 and done["retracted"]["reason"] == "wrong target"
    status, got = world.call("GET", f"/workloads/{WL}")
    assert status == 200 and got["retracted"]["reason"] == "wrong target"
    status, err = world.post_trial(trial("t-9", count=2, workload_id=WL))
    assert status == 409 and "retracted" in err["message"]
    request = {
        "candidate": {"instance_type": "trn2.48xlarge", "instance_count": 2, "region": "us-east-1"}
    }
    assert world.call("POST", f"/workloads/{WL}/estimates", request)[0] == 409
    assert world.call("POST", f"/workloads/{WL}/retract", {"reason": "again"})[0] == 409

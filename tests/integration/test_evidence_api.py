"""Issue 13 over the real API handler on moto: real names only (botocore's EC2 model and
partition data, plus the stage catalog), which trials count (visible in the estimate), the
per-candidate assumptions merged key by key, and trial ids per workload."""

from __future__ import annotations

from tests.integration.test_api import api, seed  # noqa: F401  (the fixture)
from tests.support.factories import trial, workload

CAND = {"instance_type": "trn2.48xlarge", "instance_count": 2, "region": "us-east-1"}


def test_a_misspelt_instance_type_is_a_422_with_the_close_match(api):  # noqa: F811
    seed(api)
    body = {"candidate": {**CAND, "instance_type": "p5.48xlarg"}}
    status, err = api("POST", "/workloads/wl-api/estimates", body)
    # botocore's EC2 InstanceType enum has no p5.48xlarg: before, an estimate was made
    assert status == 422 and err["fields"] == ["candidate.instance_type"]
    assert "did you mean p5.48xlarge" in err["message"]


def test_an_unknown_region_is_a_422_not_an_estimate_of_pending_prices(api):  # noqa: F811
    seed(api)
    status, err = api(
        "POST", "/workloads/wl-api/estimates", {"candidate": {**CAND, "region": "us-east-9"}}
    )
    # before: an estimate with every price PENDING; botocore's partitions name no us-east-9
    assert status == 422 and err["fields"] == ["candidate.region"]
    assert "'us-east-9' is not an AWS region" in err["message"] and "did you mean" in err["message"]


def test_a_type_newer_than_botocore_is_accepted_when_the_stage_catalog_lists_it(api):  # noqa: F811
    seed(api)
    # trn3.48xlarge is not in botocore 1.44's EC2 model; the test stage's catalog lists it
    t = trial("t-3", instance_type="trn3.48xlarge", phase="target", workload_id="wl-api")
    assert api("POST", "/workloads/wl-api/trials", t.model_dump(mode="json"))[0] == 201
    ok = {"candidate": {**CAND, "instance_type": "trn3.48xlarge"}}
    status, created = api("POST", "/workloads/wl-api/estimates", ok)
    assert status == 201 and created["estimate"]["status"] == "incomplete"  # no trn3 price
    # a SageMaker type: the part after ml. is checked too
    bad = {"candidate": {**CAND, "instance_type": "ml.p5.48xlarg", "platform": "sagemaker"}}
    status, err = api("POST", "/workloads/wl-api/estimates", bad)
    assert status == 422 and "did you mean ml.p5.48xlarge" in err["message"]


def test_a_trial_of_a_misspelt_type_is_refused_on_import(api):  # noqa: F811
    seed(api)
    t = trial("t-typo", instance_type="p5.48xlarg", workload_id="wl-api").model_dump(mode="json")
    status, err = api("POST", "/workloads/wl-api/trials", t)
    assert status == 422 and err["fields"] == ["candidate.instance_type"]


def test_the_estimate_lists_which_trials_count(api):  # noqa: F811
    seed(api)
    zero = trial("t-zero", count=2, phase="target", work=0, workload_id="wl-api")
    other = trial("t-ds2", count=2, phase="target", workload_id="wl-api", dataset_id="ds-2")
    for t in (zero, other):
        assert api("POST", "/workloads/wl-api/trials", t.model_dump(mode="json"))[0] == 201
    status, created = api("POST", "/workloads/wl-api/estimates", {"candidate": CAND})
    assert status == 201
    adm = {a["trial_id"]: a for a in created["estimate"]["admission"]}
    assert {k: a["admission"] for k, a in adm.items()} == {
        "t-1": "pooled",
        "t-2": "pooled",
        "t-zero": "excluded",
        "t-ds2": "excluded",
    }
    assert [r["code"] for r in adm["t-zero"]["reasons"]] == ["no_work"]
    assert [r["code"] for r in adm["t-ds2"]["reasons"]] == ["other_dataset"]
    rows = {r["id"] for r in created["estimate"]["inputs"]}
    assert {"admission:t-zero", "admission:t-ds2"} <= rows
    # opted in: the other dataset's trial is pooled, and the warnings say so
    flagged = {"candidate": CAND, "assumptions": {"pool_mismatched_trials": True}}
    status, created = api("POST", "/workloads/wl-api/estimates", flagged)
    adm = {a["trial_id"]: a["admission"] for a in created["estimate"]["admission"]}
    assert adm["t-ds2"] == "pooled" and adm["t-zero"] == "excluded"
    codes = {w["code"] for w in created["estimate"]["warnings"]}
    assert {"mismatched_trials_pooled", "dataset_id_mismatch"} <= codes


def test_a_candidates_own_assumptions_override_key_by_key(api):  # noqa: F811
    seed(api)
    shared = {
        "ebs_gb_per_instance": 500,
        "checkpoint_interval_s": 1800,
        "engineering_hourly_usd": "110",
    }
    body = {
        "assumptions": shared,
        "candidates": [
            # only its engineering hours: the pair check sees the shared hourly cost
            {"candidate": CAND, "assumptions": {"engineering_hours": 120}},
            {"candidate": {**CAND, "instance_count": 1}},
        ],
        "samples": 1000,
    }
    # the second candidate states no hours: with the shared hourly cost alone, the merged set
    # breaks the pair check, and the 422 names it
    status, err = api("POST", "/workloads/wl-api/comparisons", body)
    assert status == 422 and err["fields"] == ["candidates.1.assumptions"]
    assert "engineering_hours and engineering_hourly_usd go together" in err["message"]
    body["candidates"][1]["assumptions"] = {"engineering_hours": 0}
    status, analysis = api("POST", "/workloads/wl-api/comparisons", body)
    assert status == 201, analysis  # stored (issue 16)
    two, one = analysis["analysis"]["candidates"]
    rows = {r["id"]: r for r in two["estimate"]["inputs"]}
    # the shared EBS and checkpoint interval stay; before, a candidate's own set replaced them
    assert rows["assumption:ebs_gb_per_instance"]["value"] == 500
    assert rows["assumption:ebs_gb_per_instance"]["provenance"]["given_by"] == "shared"
    assert rows["assumption:checkpoint_interval_s"]["value"] == 1800
    eng = [li for li in two["estimate"]["line_items"] if li["cost"] == "labour"]
    assert len(eng) == 1 and eng[0]["amount_usd"] == "13200.000000"  # 120 h × $110
    given = {r["provenance"].get("given_by") for r in two["estimate"]["inputs"]}
    assert {"shared", "candidate"} <= given
    ids = {r["id"] for r in one["estimate"]["inputs"]}
    assert "assumption:ebs_gb_per_instance" in ids


def test_trial_ids_are_per_workload(api):  # noqa: F811
    seed(api)
    other = workload(workload_id="wl-b", dataset_gb=100).model_dump(mode="json")
    assert api("POST", "/workloads", other)[0] == 201
    # workload B may use workload A's trial id t-1 (before: dropped as "already recorded")
    t = trial("t-1", count=4, phase="target", workload_id="wl-b").model_dump(mode="json")
    assert api("POST", "/workloads/wl-b/trials", t)[0] == 201
    status, page = api("GET", "/workloads/wl-b/trials")
    assert [x["candidate"]["instance_count"] for x in page["items"]] == [4]
    status, page = api("GET", "/workloads/wl-api/trials")
    assert sorted(x["trial_id"] for x in page["items"]) == ["t-1", "t-2"]
    # the global read answers the id's first record: a later one cannot squat it (issue 23);
    # naming the workload reads that workload's
    status, first = api("GET", "/trials/t-1")
    assert status == 200 and first["trial"]["workload_id"] == "wl-api"
    status, theirs = api("GET", "/trials/t-1", query={"workload_id": "wl-b"})
    assert status == 200 and theirs["trial"]["candidate"]["instance_count"] == 4
    status, nested = api("GET", "/workloads/wl-b/trials/t-1")
    assert status == 200 and nested["trial"]["workload_id"] == "wl-b"
    # inside one workload a different record under a taken id is refused with the reason
    clash = trial("t-2", count=8, phase="target", workload_id="wl-api").model_dump(mode="json")
    status, err = api("POST", "/workloads/wl-api/trials", clash)
    assert status == 409 and "other content" in err["message"] and "candidate" in err["message"]

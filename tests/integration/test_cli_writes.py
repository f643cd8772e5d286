"""`trncost workload create`, `trncost trial add` and `trncost compare --workload` against the
real API handler over real HTTP (the local API Gateway in a thread, on moto), with the example
files of examples/llama-8b/: each command writes and prints where; a record already there
with the same content is left unchanged, one with other content is an error naming it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.support.examples import EXAMPLE, EXAMPLE_DIR, ROOT
from tests.support.handlers import FakeContext, lambda_env, load_handler
from tests.support.http import serve_http
from trncost.settings import ACCEPT_UPLOADS_ENV, CATALOG_ENV
from trncost_client.cli import main
from trncost_client.http import TrncostClient
from trncost_client.local.gateway import WsgiGateway

WID = "llama31-8b-cpt"
CATALOG = {
    "instance_types": ["trn2.48xlarge", "trn3.48xlarge", "p5.48xlarge", "c7i.16xlarge"],
    "regions": ["us-east-2"],
}
BUNDLED_PRICES = ROOT / "client" / "trncost_client" / "local" / "data" / "saved_price_list.json"


@pytest.fixture
def url(table, monkeypatch) -> Iterator[str]:
    lambda_env(
        monkeypatch, table, POWERTOOLS_METRICS_DISABLED="true", **{CATALOG_ENV: json.dumps(CATALOG)}
    )
    monkeypatch.setenv(ACCEPT_UPLOADS_ENV, "true")  # as the local runtime: uploads may publish
    monkeypatch.delenv("TRNCOST_URL", raising=False)
    module = load_handler("api")
    yield from serve_http(WsgiGateway(module.handler, FakeContext()))


def _error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_workload_create_prints_where_and_is_harmless_to_repeat(url, capsys, tmp_path):
    file = EXAMPLE_DIR / "workload.json"
    assert main(["workload", "create", str(file), "--url", url]) == 0
    out = capsys.readouterr().out
    assert f"workload {WID} created at {url}/workloads/{WID} (by local)" in out
    assert TrncostClient(url).get_object(f"/workloads/{WID}")["workload"]["workload_id"] == WID
    # the same file again: the same workload, left as it is
    assert main(["workload", "create", str(file), "--url", url]) == 0
    assert "already exists" in capsys.readouterr().out
    # other content under the same id: an error that names it
    other = json.loads(file.read_text())
    other["dataset_gb"] = 999
    changed = tmp_path / "w.json"
    changed.write_text(json.dumps(other))
    assert main(["workload", "create", str(changed), "--url", url]) == 2
    assert "with other content" in _error(capsys.readouterr().err)
    # the workload of an estimate request file (a file it names)
    assert main(["workload", "create", str(EXAMPLE), "--url", url, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["url"] == f"{url}/workloads/{WID}"


def test_trial_add_takes_one_trial_or_a_list(url, capsys, tmp_path):
    assert main(["workload", "create", str(EXAMPLE_DIR / "workload.json"), "--url", url]) == 0
    capsys.readouterr()
    trials = json.loads((EXAMPLE_DIR / "trials.json").read_text())
    one = tmp_path / "one.json"
    one.write_text(json.dumps(trials[0]))
    assert main(["trial", "add", str(one), "--url", url]) == 0
    out = capsys.readouterr().out
    assert f"trial trn2-fit-01 of workload {WID} recorded at {url}/trials/trn2-fit-01" in out
    # the whole list: the one already there is left unchanged, the rest recorded
    assert main(["trial", "add", str(EXAMPLE_DIR / "trials.json"), "--url", url, "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert [d["trial_id"] for d in done] == [t["trial_id"] for t in trials]
    assert done[0]["outcome"].startswith("already recorded")
    assert {d["outcome"] for d in done[1:]} == {"recorded"}
    listed = list(TrncostClient(url).paginate(f"/workloads/{WID}/trials"))
    assert len(listed) == len(trials)
    # other content under a recorded id: an error naming the trial
    changed = {**trials[1], "status": "failed"}
    one.write_text(json.dumps(changed))
    assert main(["trial", "add", str(one), "--url", url]) == 2
    assert "trial trn2-base-01 is recorded" in _error(capsys.readouterr().err)
    # an unknown workload: the API's 404, one line
    assert main(["trial", "add", str(one), "--url", url, "--workload", "nope"]) == 2
    assert "nope" in _error(capsys.readouterr().err)


def test_compare_on_the_api_is_stored_and_prints_its_report_url(url, capsys, tmp_path):
    api = TrncostClient(url)
    assert main(["workload", "create", str(EXAMPLE_DIR / "workload.json"), "--url", url]) == 0
    assert main(["trial", "add", str(EXAMPLE_DIR / "trials.json"), "--url", url]) == 0
    api.take_snapshot(json.loads(BUNDLED_PRICES.read_text()), note="bundled", publish=True)
    capsys.readouterr()
    argv = ["compare", "--workload", WID, str(EXAMPLE), "--samples", "1000", "--url", url]
    assert main(argv) == 0
    out = capsys.readouterr().out
    stored = list(api.paginate(f"/workloads/{WID}/estimates"))  # none: a comparison is not one
    assert stored == []
    line = next(x for x in out.splitlines() if x.startswith("comparison cmp-"))
    cid = line.split()[1]
    assert f"stored at {url}/comparisons/{cid}" in line
    assert f"report: {url}/comparisons/{cid}/report" in out
    for instance_type in ("trn2.48xlarge", "trn3.48xlarge", "p5.48xlarge"):
        assert instance_type in out
    # every candidate's range, sensitivity, next trial and decision, as offline
    assert out.count("P10–P90") >= 3 and out.count("decision: ") >= 3
    assert "  #1 " in out and "next trial worth running" in out
    # and the stored comparison is fetched by the report command, in every format
    for fmt in ("html", "csv", "md"):
        path = tmp_path / f"cmp.{fmt}"
        argv = ["report", cid, "--url", url, "--format", fmt, "--out", str(path)]
        assert main(argv) == 0
        assert f"of comparison {cid} written to" in capsys.readouterr().out
        assert path.stat().st_size > 1000
    assert "decision_reason" in (tmp_path / "cmp.csv").read_text()
    assert main(["report", cid, "--url", url, "--version", "2"]) == 2
    record = api.get_object(f"/comparisons/{cid}")
    assert record["request"]["samples"] == 1000
    assert len(record["request"]["candidates"]) == 3  # the file's candidates, its assumptions
    assert record["request"]["assumptions"]["idle_fraction"]["value"] == 0.05
    page = api.request("GET", f"/comparisons/{cid}/report", accept="text/html").text
    assert page.lstrip().startswith("<!DOCTYPE html>")
    # candidates from flags; the same again is the same comparison
    flags = ["compare", "--workload", WID, "--candidate", "trn2.48xlarge:4@us-east-2"]
    flags += ["--samples", "1000", "--url", url, "--json"]
    assert main(flags) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(flags) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["comparison_id"] == first["comparison_id"] != cid
    assert first["report_url"] == f"{url}/comparisons/{first['comparison_id']}/report"


def test_compare_arguments_that_do_not_fit(url, capsys):
    assert main(["compare", "--candidate", "trn2.48xlarge:4"]) == 2
    assert "needs --workload" in _error(capsys.readouterr().err)
    assert main(["compare"]) == 2
    assert "FILE" in _error(capsys.readouterr().err)
    argv = ["compare", "--workload", WID, "--candidate", "trn2", "--url", url]
    assert main(argv) == 2
    assert "TYPE:COUNT" in _error(capsys.readouterr().err)
    argv = ["compare", "--workload", WID, "--candidate", "trn2.48xlarge:4", "--url", url]
    assert main(argv) == 2
    assert WID in _error(capsys.readouterr().err)  # no such workload yet: the API's 404

"""One path for every driver (issue 21): every request file under examples/ answered both ways —
offline by the CLI (`trncost estimate|compare FILE`, no server: the file held in memory) and
by the API (the real API handler over HTTP on moto: the file's workload, trials and prices
put there, then `POST …/comparisons` and `POST …/estimates`) — gives the same figures, the
same percentiles and the same decisions, because both run the same services.

Also the two faults the issue measured: a shared price override that one candidate uses and
the others do not is accepted by `estimate` as by `compare` (the file's candidates are checked
together, as a comparison's are), and a wrong-unit override exits 2 from both, naming the
field, as the API answers 422.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.support.examples import ROOT
from tests.support.handlers import FakeContext, lambda_env, load_handler
from tests.support.http import serve_http
from trncost.settings import CATALOG_ENV
from trncost.store.prices import PriceStore
from trncost_client.cli import main
from trncost_client.http import ApiError, TrncostClient
from trncost_client.local.gateway import WsgiGateway
from trncost_client.local.runtime import default_catalog
from trncost_client.requestfile import load_request_file

REQUEST_FILES = sorted((ROOT / "examples").glob("*/estimate.json"))
SEED, SAMPLES = 7, 2_000


@pytest.fixture
def api(table, monkeypatch) -> Iterator[tuple[str, str]]:
    """The API handler over real HTTP on moto, with the catalog the CLI accepts offline."""
    lambda_env(
        monkeypatch,
        table,
        POWERTOOLS_METRICS_DISABLED="true",
        **{CATALOG_ENV: json.dumps(default_catalog())},
    )
    module = load_handler("api")
    for url in serve_http(WsgiGateway(module.handler, FakeContext())):
        yield url, table


def _offline(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main([*args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def _put_on_the_api(url: str, table: str, file: Path) -> dict[str, Any]:
    """The request file's workload and trials through the API; its prices (as the CLI reads
    them: capped at saved_file) into the stage's snapshots. The comparison request of it."""
    request = load_request_file(file)
    client = TrncostClient(url)
    client.post_object("/workloads", request.workload.model_dump(mode="json"))
    wid = request.workload.workload_id
    for trial in request.trials:
        client.post_object(f"/workloads/{wid}/trials", trial.model_dump(mode="json"))
    store = PriceStore(table)
    store.put_snapshot(request.prices)
    store.publish_latest(request.prices)
    return {
        "candidates": [p.model_dump(mode="json", exclude_unset=True) for p in request.candidates],
        "assumptions": request.assumptions.model_dump(mode="json", exclude_unset=True),
        "snapshot_id": request.prices.snapshot_id,
        "seed": SEED,
        "samples": SAMPLES,
    }


@pytest.mark.parametrize("source", REQUEST_FILES, ids=lambda p: p.parent.name)
def test_every_example_request_file_answers_alike_offline_and_on_the_api(
    api, capsys, tmp_path, source
):
    url, table = api
    # Given the request file as loaded once (a saved Price List file becomes a snapshot with an
    # id of its own at each load: loaded once, both ways price with the same snapshot)
    file = tmp_path / "request.json"
    file.write_text(load_request_file(source).model_dump_json())
    # offline
    code, offline = _offline(
        capsys, "compare", str(file), "--seed", str(SEED), "--samples", str(SAMPLES)
    )
    assert code == 0
    # When the same evidence, prices and request go through the API
    body = _put_on_the_api(url, table, file)
    wid = load_request_file(file).workload.workload_id
    stored = TrncostClient(url).post_object(f"/workloads/{wid}/comparisons", body)
    online = stored["analysis"]
    # Then every figure, percentile, ranking and decision is the same
    assert online == offline
    assert [c["candidate_id"] for c in online["candidates"]] == [
        c["candidate_id"] for c in offline["candidates"]
    ]
    ranged = [c for c in online["candidates"] if c.get("range")]
    assert ranged, "the example has ranges to compare"
    # And `trncost estimate` gives each candidate the figures of the comparison's estimate
    code, estimates = _offline(capsys, "estimate", str(file))
    analysed = [c["estimate"] for c in online["candidates"] if c["estimate"]]
    assert code == 0 and estimates == analysed
    # And POST /estimates with a candidate's merged assumptions gives the same figures
    for plan, analysed_one in zip(body["candidates"], online["candidates"], strict=True):
        if analysed_one["estimate"] is None:
            continue
        merged = {**body["assumptions"], **(plan.get("assumptions") or {})}
        made = TrncostClient(url).post_object(
            f"/workloads/{wid}/estimates",
            {
                "candidate": plan["candidate"],
                "assumptions": merged,
                "snapshot_id": body["snapshot_id"],
            },
        )["estimate"]
        est = analysed_one["estimate"]
        for key in FIGURES:
            assert made[key] == est[key], (analysed_one["candidate_id"], key)
        assert [li["amount_usd"] for li in made["line_items"]] == [
            li["amount_usd"] for li in est["line_items"]
        ]


# what a single estimate and a comparison's estimate of the same candidate must agree on (the
# input table differs only in saying which assumptions were shared)
FIGURES = (
    "status",
    "total_usd",
    "total_known_usd",
    "cloud_usd",
    "labour_usd",
    "time",
    "effective_throughput",
    "pending_terms",
    "price_basis",
)


# -- the two faults the issue measured ----------------------------------------------------------
def _with_overrides(tmp_path: Path, overrides: list[dict[str, Any]]) -> Path:
    """The llama-8b request file with `overrides` as a shared assumption."""
    source = ROOT / "examples" / "llama-8b"
    raw = json.loads((source / "estimate.json").read_text())
    for part in ("workload", "trials", "prices"):
        raw[part] = json.loads((source / raw[part]).read_text())
    raw["assumptions"]["price_overrides"] = overrides
    path = tmp_path / "estimate.json"
    path.write_text(json.dumps(raw))
    return path


P5 = {"service": "AmazonEC2", "region": "us-east-2", "item": "p5.48xlarge"}


def test_a_shared_override_one_candidate_uses_is_accepted_by_estimate_as_by_compare(
    tmp_path, capsys
):
    # Given a shared negotiated rate for p5 only (trn2 and trn3 do not use that key)
    file = _with_overrides(tmp_path, [{"key": P5, "usd": "40.00", "unit": "Hrs"}])
    # When both commands run on it
    code_estimate, estimates = _offline(capsys, "estimate", str(file))
    code_compare, analysis = _offline(capsys, "compare", str(file), "--samples", "1000")
    # Then both accept it, and p5 is priced at the override in both
    assert (code_estimate, code_compare) == (0, 0)
    (p5,) = [e for e in estimates if e["candidate"]["instance_type"] == "p5.48xlarge"]
    (p5_analysed,) = [
        c["estimate"]
        for c in analysis["candidates"]
        if c["estimate"] and c["estimate"]["candidate"]["instance_type"] == "p5.48xlarge"
    ]
    assert p5["total_usd"] == p5_analysed["total_usd"]
    rates = {
        li["rate_usd"]
        for li in p5["line_items"]
        if (li["price_key"] or "").endswith("p5.48xlarge/on_demand")
    }
    assert {Decimal(r) for r in rates} == {Decimal("40.00")}


def test_a_wrong_unit_override_exits_2_from_both_commands_naming_the_field(tmp_path, capsys):
    # Given an hourly instance price stated per GB-month
    file = _with_overrides(tmp_path, [{"key": P5, "usd": "40.00", "unit": "GB-Mo"}])
    for args in (["estimate", str(file)], ["compare", str(file), "--samples", "1000"]):
        # When the command runs
        assert main(args) == 2
        captured = capsys.readouterr()
        # Then one line on stderr names the field; nothing on stdout
        (line,) = captured.err.splitlines()
        assert "assumptions.price_overrides.0.unit" in line and str(file) in line
        assert captured.out == ""


def test_json_output_is_only_json_even_when_a_candidate_cannot_be_estimated(tmp_path, capsys):
    # Given a request file whose GPU candidate has no trial at all and no chip on record to be
    # projected from (g5.48xlarge: missing evidence)
    source = ROOT / "examples" / "llama-8b"
    raw = json.loads((source / "estimate.json").read_text())
    trials = [
        t for t in json.loads((source / "trials.json").read_text()) if "p5" not in t["trial_id"]
    ]
    raw["candidates"][2]["candidate"]["instance_type"] = "g5.48xlarge"
    raw["workload"] = json.loads((source / raw["workload"]).read_text())
    raw["prices"] = json.loads((source / raw["prices"]).read_text())
    raw["trials"] = trials
    file = tmp_path / "estimate.json"
    file.write_text(json.dumps(raw))
    # When estimated with --json
    code = main(["estimate", str(file), "--json"])
    captured = capsys.readouterr()
    # Then it exits 1, stdout is JSON (the others' estimates), the reason is on stderr
    assert code == 1
    estimates = json.loads(captured.out)
    assert {e["candidate"]["instance_type"] for e in estimates} == {
        "trn2.48xlarge",
        "trn3.48xlarge",
    }
    assert "g5.48xlarge" in captured.err


def test_the_api_refuses_what_the_cli_refuses(api, tmp_path, capsys):
    # Given a wrong-unit override sent to the API as a comparison
    url, table = api
    file = _with_overrides(tmp_path, [{"key": P5, "usd": "40.00", "unit": "GB-Mo"}])
    body = _put_on_the_api(url, table, file)
    wid = load_request_file(file).workload.workload_id
    # When posted
    with pytest.raises(ApiError) as refused:
        TrncostClient(url).post_object(f"/workloads/{wid}/comparisons", body)
    # Then 422 naming the same field as the CLI's exit-2 line
    assert refused.value.status == 422
    assert "assumptions.price_overrides.0.unit" in str(refused.value)

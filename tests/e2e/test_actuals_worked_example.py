"""The worked example of estimate vs actual, under `trncost serve` (what `make run` starts), over
real HTTP: the example's estimates, a FOCUS 1.2 file of each run's bill, POST /actuals, each
estimate against its bill, the scorecard and its page; Cost Explorer's figures through the
actuals Lambda the runtime runs; and `trncost actuals import` on a bill in parts.

It prints the figures (the closing note of issue 27)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import boto3
import pytest

from tests.support import actuals_kit as kit
from tests.support.examples import ROOT

pytestmark = pytest.mark.slow

WORKLOAD = "llama31-8b-cpt"


def _state(server) -> dict:
    port = server.url.rsplit(":", 1)[1]
    return json.loads((server.output.parent / f"local-{port}.json").read_text())


def _usd(x) -> str:
    return "—" if x is None else f"${Decimal(str(x)):,.2f}"


def test_the_worked_example_estimate_bill_actuals_scorecard(server, tmp_path):
    estimates = _state(server)["estimates"][WORKLOAD]
    start = datetime.now(UTC).date() + timedelta(days=1)  # the runs start after the estimates
    # the trn2 run took 1.8 % longer than forecast; the p5 run 15 % longer (a restart storm)
    bills = {
        "trn2.48xlarge": kit.RunBill(),
        "p5.48xlarge": kit.RunBill(
            instance_type="p5.48xlarge", instance_rate=Decimal("55.04"),
            hours_each=Decimal("88.1"), ebs_gb_months=Decimal("230"),
        ),
    }  # fmt: skip
    # the account's bill of the month holds both runs: one file, one delivery
    texts = [
        kit.run_bill(estimates[t], WORKLOAD, start, bill).splitlines(keepends=True)
        for t, bill in bills.items()
    ]
    text = "".join(texts[0] + texts[1][1:])
    status, imported = server.call("POST", "/actuals", text.encode(), "text/csv")
    assert status == 201, imported
    assert imported["unmatched"] == 2  # each run's neighbour: another team's untagged instance
    assert sorted(imported["estimate_ids"]) == sorted(estimates[t] for t in bills)
    # the same file again: nothing changes
    status, again = server.call("POST", "/actuals", text.encode(), "text/csv")
    assert status == 200 and again["changed"] is False
    figures = {}
    for instance_type, bill in bills.items():
        status, found = server.call("GET", f"/estimates/{estimates[instance_type]}/actuals")
        assert status == 200, found
        assert Decimal(found["actual_usd"]) == kit.billed_total(bill)
        gap = {k: Decimal(v) for k, v in found["gap"].items()}
        assert sum(gap.values()) == Decimal(found["actual_usd"]) - Decimal(found["estimate_usd"])
        figures[instance_type] = found
    assert figures["trn2.48xlarge"]["inside_range"] is True
    assert figures["p5.48xlarge"]["inside_range"] is False
    status, card = server.call("GET", "/actuals/scorecard", None)
    assert status == 200
    assert (card["estimates_with_actuals"], card["inside_p10_p90"]) == (2, 1)
    status, page = server.call("GET", f"/actuals/scorecard/report?workload_id={WORKLOAD}")
    assert status == 200 and 'data-fig="inside">1<' in page
    status, report = server.call("GET", f"/estimates/{estimates['trn2.48xlarge']}/report")
    assert status == 200 and "Estimate vs actual" in report
    print(
        f"\nworked example: {imported['rows_read']} rows, {imported['matched']} matched to "
        f"{len(imported['estimate_ids'])} estimates (the bundled example prices, illustrative):"
    )
    for instance_type, f in figures.items():
        g = f["gap"]
        print(
            f"  {instance_type} {f['estimate_id']}: forecast {_usd(f['estimate_usd'])} "
            f"(P10 {_usd(f['p10_usd'])} – P90 {_usd(f['p90_usd'])}), billed "
            f"{_usd(f['actual_usd'])}: {'inside' if f['inside_range'] else 'outside'}, "
            f"error {f['relative_error']:+.2%}; gap hours {_usd(g['hours'])}, rate "
            f"{_usd(g['rate'])}, not estimated {_usd(g['not_estimated'])}"
        )
    print(
        f"  scorecard: {card['estimates_with_actuals']} estimates with actuals, "
        f"{card['inside_p10_p90']} inside P10–P90, median |error| "
        f"{card['median_abs_relative_error']:.2%}"
    )


def test_cost_explorer_figures_come_in_through_the_actuals_lambda(server):
    state = _state(server)
    eid = state["estimates"][WORKLOAD]["trn3.48xlarge"]  # its price is PENDING: no forecast
    month = (datetime.now(UTC).date() + timedelta(days=1)).replace(day=1)
    text = (kit.BILLING / "ce_get_cost_and_usage_by_tag_and_usage_type.json").read_text()
    text = text.replace(kit.SAMPLE_ESTIMATE, eid).replace("2025-06", month.isoformat()[:7])
    pages = json.loads(text)["response_pages"]
    # Given the embedded Cost Explorer holding the two pages (moto's queue)
    queue = f"{state['aws_endpoint']}/moto-api/static/ce/cost-and-usage-results"
    import urllib.request

    request = urllib.request.Request(
        queue, json.dumps({"results": pages}).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - the local moto
        assert answer.status == 201
    # When the actuals Lambda runs (as its schedule would), for that month
    client = boto3.client(
        "lambda", endpoint_url=state["aws_endpoint"], region_name=state["region"],
        aws_access_key_id="local", aws_secret_access_key="local",
    )  # fmt: skip
    nxt = (month + timedelta(days=32)).replace(day=1)
    payload = {"start": month.isoformat(), "end": nxt.isoformat()}
    answer = client.invoke(FunctionName=state["actuals_function"], Payload=json.dumps(payload))
    result = json.loads(answer["Payload"].read())
    # Then the estimate has its month from Cost Explorer, pages followed
    assert result["status"] == "ok" and result["requests"] == 2, result
    status, found = server.call("GET", f"/estimates/{eid}/actuals")
    assert status == 200
    assert [(p["source"], p["estimated"]) for p in found["periods"]] == [("cost_explorer", True)]
    assert found["estimate_usd"] is None and found["gap"] is None  # PENDING: no forecast
    print(f"\ncost explorer: {eid} billed {_usd(found['actual_usd'])} in {month:%Y-%m} (estimated)")


def test_trncost_actuals_import_sends_a_delivery_in_parts(server, tmp_path):
    eid = _state(server)["estimates"][WORKLOAD]["trn2.48xlarge"]
    start = date.today() + timedelta(days=40)  # another billing period than the test above
    lines = kit.run_bill(eid, WORKLOAD, start).splitlines(keepends=True)
    head, body = lines[0], lines[1:]
    folder = tmp_path / "BILLING_PERIOD"
    folder.mkdir()
    (folder / "export-00001.csv").write_text(head + "".join(body[:10]))
    (folder / "export-00002.csv").write_text(head + "".join(body[10:]))
    done = subprocess.run(
        [sys.executable, "-m", "trncost_client.cli", "actuals", "import", str(folder),
         "--url", server.url, "--json"],
        capture_output=True, text=True, cwd=ROOT, env=server.env, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["rows_read"] == len(body) and answer["estimate_ids"] == [eid]
    assert [p["outcome"] for p in answer["periods"]] == ["created"]

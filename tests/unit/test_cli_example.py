"""`make run` (for now): the CLI estimates the bundled example and prints tables."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from tests.support.examples import EXAMPLE, example_estimates
from trncost_client.cli import main


@pytest.fixture(scope="module")
def example():
    return example_estimates()


def test_example_covers_trn2_trn3_and_a_gpu(example):
    assert set(example) == {"trn2.48xlarge", "trn3.48xlarge", "p5.48xlarge"}
    assert example["trn2.48xlarge"].status == "complete"
    assert example["p5.48xlarge"].status == "complete"
    # Trainium3 has no published price in the example snapshot: PENDING, never 0.
    trn3 = example["trn3.48xlarge"]
    assert trn3.status == "incomplete" and trn3.total_usd is None
    assert [t.price_key for t in trn3.pending_terms] == [
        "AmazonEC2/us-east-2/trn3.48xlarge/on_demand"
    ]
    # The trn3 trials ran one instance; the candidate runs two: flagged, not hidden.
    codes = {w.code for w in trn3.warnings}
    assert {
        "unmeasured_instance_count",
        "no_target_phase_trial",
        "restore_never_verified",
        "quality_gate_not_verified",
    } <= codes


def test_example_says_its_prices_are_not_official(example):
    for est in example.values():
        assert any(w.code == "example_prices" for w in est.warnings)
        for row in est.inputs:
            if row.provenance.kind == "official_price":
                assert row.provenance.source == "example_file"
                assert row.provenance.sku.startswith("EXAMPLE-")


def test_every_component_is_present_in_the_example(example):
    est = example["trn2.48xlarge"]
    assert {li.component.value for li in est.line_items} == {
        "instances",
        "storage",
        "data_transfer",
        "logs",
        "data_preparation",
        "adaptation_reruns",
    }
    assert est.total_usd == sum(li.amount_usd for li in est.line_items)
    assert est.total_usd > Decimal(0)


def test_cli_prints_estimate_line_items_and_input_table(capsys):
    assert main(["estimate", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    for text in (
        "4× trn2.48xlarge",
        "2× trn3.48xlarge",
        "4× p5.48xlarge",
        "Line items",
        "Input table",
        "Cost per completed target",
        "INCOMPLETE",
        "P[AmazonEC2/us-east-2/trn3.48xlarge/on_demand]",
        "official_price",
        "trial_measurement",
        "user_assumption",
        "derived",
        "pending",
        "Break-even prices",
        "cheaper per completed target than 4× p5.48xlarge",
    ):
        assert text in out, text


def test_cli_json_round_trips(capsys):
    assert main(["estimate", str(EXAMPLE), "--json", "--candidate", "p5.48xlarge"]) == 0
    (est,) = json.loads(capsys.readouterr().out)
    assert est["candidate"]["instance_type"] == "p5.48xlarge"
    assert isinstance(est["total_usd"], str)


def test_cli_reports_a_bad_file_without_a_traceback(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"workload": {"target": {"unit": "bytes"}}}')
    assert main(["estimate", str(bad)]) == 2
    captured = capsys.readouterr()
    # one line on stderr naming the file and the field; nothing on stdout
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert str(bad) in line and "workload.target.unit" in line and "Traceback" not in line


def test_cli_reports_missing_evidence_and_fails(tmp_path, capsys):
    data = json.loads(EXAMPLE.read_text())
    data["candidates"] = [
        {
            "candidate": {
                "instance_type": "g5.48xlarge",
                "instance_count": 2,
                "region": "us-east-2",
            }
        }
    ]
    for part in ("workload", "trials", "prices"):
        data[part] = str(EXAMPLE.parent / data[part])
    path = tmp_path / "estimate.json"
    path.write_text(json.dumps(data))
    assert main(["estimate", str(path)]) == 1
    assert "no trial of g5.48xlarge" in capsys.readouterr().out


def test_cli_compare_ranks_ranges_and_decides(capsys, tmp_path):
    html = tmp_path / "analysis.html"
    assert main(["compare", str(EXAMPLE), "--samples", "2000", "--html", str(html)]) == 0
    out = capsys.readouterr().out
    for text in (
        "Decision: continue_trials",
        "Ranking within comparable groups, by expected total per target over paired draws",
        "4× p5.48xlarge",
        "P10–P90",
        "P50",
        "p cheapest",
        "break-even",
        "price_pending",
    ):
        assert text in out, text
    assert html.read_text().lstrip().startswith("<!DOCTYPE html>")
    assert main(["compare", str(EXAMPLE), "--samples", "2000", "--json"]) == 0
    analysis = json.loads(capsys.readouterr().out)
    assert analysis["decision"]["action"] == "continue_trials"
    assert {c["candidate_id"] for c in analysis["candidates"]} == {
        "4× trn2.48xlarge (us-east-2, on_demand)",
        "2× trn3.48xlarge (us-east-2, on_demand)",
        "4× p5.48xlarge (us-east-2, on_demand)",
    }

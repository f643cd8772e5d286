"""neuron-monitor reports (tests/events/neuron_monitor, assembled from the Neuron user guide's
documented blocks): execution errors from execution_summary's failures, never
error_summary.generic; instance_info cross-checked; neuron_hardware_info read; one report
per line or pretty-printed over many."""

from __future__ import annotations

import json
from pathlib import Path

from trncost_client.agent.monitors import ReportReader, cross_check, reading_of

REPORTS = Path(__file__).resolve().parents[1] / "events" / "neuron_monitor"


def feed(text: str):
    reader = ReportReader()
    return [r for line in text.splitlines(keepends=True) if (r := reader.feed(line))]


def test_a_healthy_report_has_no_execution_errors_whatever_error_summary_says() -> None:
    (healthy,) = feed((REPORTS / "report_line.json").read_text())
    assert healthy.execution_errors == 0.0
    assert healthy.utilization_pct == (42.01 + 42.02) / 2
    assert healthy.memory_bytes == 12519788544


def test_failed_executions_are_the_errors_not_the_generic_count() -> None:
    (bad,) = feed((REPORTS / "report_failures.json").read_text())
    assert bad.execution_errors == 2 + 1 + 1 + 0 + 3  # not 23,654 (error_summary.generic)


def test_a_pretty_printed_report_reads_like_a_one_line_report() -> None:
    pretty = feed((REPORTS / "report_pretty.json").read_text())
    line = feed((REPORTS / "report_line.json").read_text())
    assert pretty == line and len(pretty) == 1
    # two pretty-printed reports in a row, with noise between them
    text = (REPORTS / "report_pretty.json").read_text()
    assert len(feed(text + "neuron-monitor: warning\n" + text)) == 2


def test_hardware_and_instance_facts_and_a_mismatch_note() -> None:
    (r,) = feed((REPORTS / "report_line.json").read_text())
    hw = r.hardware
    assert hw is not None
    assert (hw.instance_type, hw.device_type, hw.device_count, hw.cores_per_device) == (
        "trn2n.48xlarge",
        "trainium2",
        16,
        4,
    )
    assert hw.device_memory_bytes == 103079215104
    mismatch, described = cross_check(hw, "ml.trn2.48xlarge")
    assert "reports instance type trn2n.48xlarge, the trial says ml.trn2.48xlarge" in mismatch
    assert "16 trainium2 device(s), 4 NeuronCores each, 96 GiB device memory each" in described
    assert cross_check(hw, "trn2n.48xlarge") == [described]


def test_a_truncated_report_yields_nothing_and_a_report_without_runtimes_only_facts() -> None:
    text = (REPORTS / "report_pretty.json").read_text()
    assert feed(text[: len(text) // 2]) == []
    only_facts = reading_of({"instance_info": {"instance_type": "trn1.32xlarge"}})
    assert only_facts is not None and only_facts.utilization_pct is None
    assert only_facts.hardware is not None and only_facts.execution_errors is None


def test_typed_errors_are_kept_when_every_execution_completed() -> None:
    # Given a report whose executions all completed but whose error_summary counts 2 hardware
    # and 1 runtime error (the generic count aside): they were published as 0 before
    report = json.loads(REPORTS.joinpath("report_line.json").read_text())
    stats = report["neuron_runtime_data"][0]["report"]["execution_stats"]
    stats["error_summary"].update({"generic": 500, "hardware": 2, "runtime": 1})
    reading = reading_of(report)
    # Then the larger view is kept: 3 errors (never the generic 500, never 0)
    assert reading is not None and reading.execution_errors == 3.0
    # and where both views count, the larger wins (an execution with a numerical error is
    # one error, not two)
    stats["execution_summary"]["completed_with_num_err"] = 4
    stats["error_summary"]["numerical"] = 4
    assert reading_of(report).execution_errors == 7.0

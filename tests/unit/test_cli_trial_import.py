"""`trncost trial import`: a dry run prints the record without a server; an unrecognised log
exits 2 naming every format tried; --json prints the record and what was measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trncost_client.cli import main

LOGS = Path(__file__).resolve().parents[1] / "events" / "logs"
ARGS = ["--workload", "wl-1", "--phase", "baseline", "--instance-type", "trn2.48xlarge",
        "--instance-count", "2", "--dry-run"]  # fmt: skip


def test_a_dry_run_of_a_log_and_a_compile_report_prints_one_trial(capsys) -> None:
    files = [str(LOGS / "nxdt_llama3_8b_pretrain.log"),
             str(LOGS / "neuron_parallel_compile_results_constructed.json")]  # fmt: skip
    assert main(["trial", "import", *files, *ARGS, "--json", "--status", "completed"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["recorded"] is False
    assert [f["format"] for f in out["files"]] == ["nemo", None]
    assert out["trial"]["wall"]["compile_s"] == 431.8805
    assert out["trial"]["work"]["done"] == 24320.0  # the bar's consumed samples, from 0
    assert {"work.done", "wall.compile_s"} <= set(out["measured"])
    assert out["trial"]["notes"][0].startswith("dry run against a stand-in workload")


def test_the_text_output_names_files_formats_and_lines(capsys) -> None:
    assert main(["trial", "import", str(LOGS / "megatron_mixtral_h100.log"), *ARGS]) == 0
    out = capsys.readouterr().out
    assert "megatron_mixtral_h100.log: megatron (confidence 1.00), 3 of 3 lines read" in out
    assert "measured work.done: megatron_mixtral_h100.log [megatron] lines 2-3" in out


def test_an_unrecognised_log_exits_2_listing_the_formats_tried(tmp_path, capsys) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("nothing to see\nhere\n")
    assert main(["trial", "import", str(junk), *ARGS]) == 2
    err = capsys.readouterr().err
    assert "not a log trncost can read" in err
    for name in ("nemo:", "megatron:", "hf_trainer:", "lightning:", "neuron_compile:"):
        assert name in err


def test_a_missing_file_exits_2(capsys) -> None:
    assert main(["trial", "import", "/nonexistent.log", *ARGS]) == 2
    assert "no such file" in capsys.readouterr().err


# -- what a log cannot say, and --explain ------------------------------------------------------
CORPUS = LOGS / "corpus"
BIONEMO = str(CORPUS / "nemo" / "bionemo-nemo2-training-epoch-iteration-lines.log")


def _gate_file(tmp_path, metric="eval_loss"):
    from tests.support.factories import workload

    path = tmp_path / "workload.json"
    wl = workload(workload_id="wl-1", quality_gate={"metric": metric, "threshold": 9,
                                                    "direction": "at_most"})  # fmt: skip
    path.write_text(wl.model_dump_json())
    return str(path)


def test_the_facts_a_log_cannot_say_go_to_the_record(capsys) -> None:
    # Given a NeMo 2 log and the trial's parallelism, precision and SDK version
    flags = ["--parallelism", "tp=8,pp=1,dp=4", "--precision", "bf16",
             "--neuron-sdk-version", "2.20.0", "--region", "us-west-2"]  # fmt: skip
    assert main(["trial", "import", BIONEMO, *ARGS, *flags, "--json"]) == 0
    trial = json.loads(capsys.readouterr().out)["trial"]
    # Then they are the candidate's (the log says none of them)
    assert trial["candidate"]["parallelism"]["tensor"] == 8
    assert trial["candidate"]["parallelism"]["data"] == 4
    assert trial["candidate"]["precision"] == "bf16" and trial["candidate"]["region"] == "us-west-2"
    assert trial["neuron_sdk_version"] == trial["candidate"]["neuron_sdk_version"] == "2.20.0"


def test_a_quality_metric_is_read_only_when_mapped_explicitly(tmp_path, capsys) -> None:
    # Given a log that evaluates val_loss and a workload gated on eval_loss
    gate = ["--workload-file", _gate_file(tmp_path)]
    # When imported without a mapping: quality is not measured, and a note says why
    assert main(["trial", "import", BIONEMO, *ARGS, *gate, "--json"]) == 0
    trial = json.loads(capsys.readouterr().out)["trial"]
    assert trial["quality"] is None or trial["quality"]["value"] is None
    assert any("they evaluate val_loss" in n and "--quality-metric" in n for n in trial["notes"])
    # When mapped: the log's val_loss is read as the gate's eval_loss, and the note says so
    mapped = ["--quality-metric", "val_loss=eval_loss"]
    assert main(["trial", "import", BIONEMO, *ARGS, *gate, *mapped, "--json"]) == 0
    trial = json.loads(capsys.readouterr().out)["trial"]
    assert trial["quality"]["metric"] == "eval_loss" and trial["quality"]["value"] == 4.106
    assert any("val_loss read as the gate's eval_loss" in n for n in trial["notes"])


def test_a_mapping_to_another_metric_than_the_gate_exits_2(tmp_path, capsys) -> None:
    flags = ["--workload-file", _gate_file(tmp_path), "--quality-metric", "val_loss=accuracy"]
    assert main(["trial", "import", BIONEMO, *ARGS, *flags]) == 2
    assert "quality gate is eval_loss" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "value", "why"),
    [
        ("--parallelism", "tp=0", "tensor"),
        ("--parallelism", "tp=8,xx=2", "tp, pp, dp, ep, sp"),
        ("--parallelism", "tp=eight", "whole number"),
        ("--quality-metric", "val_loss", "LOG_NAME=GATE_METRIC"),
        ("--precision", "fp64", "invalid choice"),
    ],
)
def test_a_malformed_fact_exits_2_naming_its_flag(flag, value, why, capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["trial", "import", BIONEMO, *ARGS, flag, value])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert flag in err and why in err


def test_explain_names_the_lines_and_rule_of_every_figure_and_what_was_skipped(capsys) -> None:
    # Given a SageMaker capture (ANSI, #015 refreshes, an evaluation bar, dicts out of order)
    log = str(CORPUS / "hf_trainer" / "sagemaker-p3-distilbert-ansi-cr-escaped-out-of-order.log")
    assert main(["trial", "import", log, *ARGS, "--explain", "--json"]) == 0
    explain = json.loads(capsys.readouterr().out)["explain"]
    figures = {f["figure"]: f for f in explain["figures"]}
    # Then each figure names its lines and the rule that read it
    assert figures["steps_done"]["value"] == 782 and figures["steps_done"]["lines"] == [[177, 177]]
    assert "progress bar" in figures["steps_done"]["rule"]
    assert figures["elapsed_s"]["lines"] == [[3, 3]]
    assert "train_runtime" in figures["elapsed_s"]["rule"]
    assert figures["eval_s"]["value"] == 50.7142
    record = {r["figure"]: r for r in explain["record"]}
    assert record["work.done"]["lines"] and record["work.done"]["rule"]
    # And the evaluation's bar is skipped with its reason, the noise counted
    whys = [s["why"] for s in explain["skipped"]]
    assert any("not the training bar of 782 steps" in w for w in whys)
    assert any("held none of the formats' keywords" in w for w in whys)


def test_explain_as_text(capsys) -> None:
    assert main(["trial", "import", BIONEMO, *ARGS, "--explain"]) == 0
    out = capsys.readouterr().out
    assert "as the log states them:" in out and "the record:" in out and "skipped:" in out
    assert "steps_done         125" in out and "line(s) 6" in out

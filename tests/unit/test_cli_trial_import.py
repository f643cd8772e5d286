"""`trncost trial import`: a dry run prints the record without a server; an unrecognised log
exits 2 naming every format tried; --json prints the record and what was measured."""

from __future__ import annotations

import json
from pathlib import Path

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

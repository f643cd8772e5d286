"""The records real excerpts make (issue 24): a lone final progress line or a lone Megatron
line counts its work and clock, a bar at its total is a completed run, evaluation time is kept
apart from training, and compile reports of nodes that compiled in parallel take the critical
path, not the sum."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.factories import workload
from trncost.metrics.logs import FORMATS
from trncost.metrics.logs.scan import Reader
from trncost.metrics.logs.timeline import Timeline
from trncost.metrics.logs.trial import trial_from_logs
from trncost.model import Phase

CORPUS = Path(__file__).resolve().parents[1] / "events" / "logs" / "corpus"
WHEN = datetime(2026, 12, 1, tzinfo=UTC)


def record(files: dict[str, bytes], **wl):
    tl = Timeline()
    reader = Reader(tl, FORMATS)
    results = [reader.read_bytes(name, data) for name, data in files.items()]
    got = trial_from_logs(
        tl, results, workload(**wl), trial_id="t", phase=Phase.baseline,
        instance_type="trn2.48xlarge", instance_count=1, region="us-east-1", imported_at=WHEN,
    )  # fmt: skip
    return tl, got.trial


def corpus(path: str) -> dict[str, bytes]:
    return {Path(path).name: (CORPUS / path).read_bytes()}


def test_a_lone_final_bar_counts_its_work_over_its_clock_and_is_completed() -> None:
    # Given the one line a README prints: NeMo's final bar, no rate, 50/50 [16:26<00:00]
    tl, trial = record(corpus("nemo/dgxc-llama31-405b-final-bar-no-rate.log"))
    # Then its 12,600 consumed samples were done in its 986 s, and the run completed
    assert trial.status == "completed"
    assert trial.work.unit == "samples" and trial.work.done == 12_600
    assert trial.wall.steady_s == pytest.approx(986)
    assert any("the step counter reached its total (50 of 50)" in n for n in trial.notes)


def test_a_lone_megatron_line_counts_its_own_step_over_its_own_step_time() -> None:
    # Given one Megatron line (Neuron's reference, in backticks): iteration 4873/10000,
    # 8718.9 ms per iteration, global batch 64
    tl, trial = record(
        corpus("megatron/neuron-megatron-lm-gpt3-6.7b-trn1-backticked-single-line.log")
    )
    # Then its one step's 64 samples in its 8.7189 s stand for the work: not 0, no clock lost
    assert trial.work.done == 64 and trial.wall.steady_s == pytest.approx(8.7189)
    assert trial.status == "stopped"  # 4873 of 10000: short of its total
    assert any("one step line counts its own step (64 samples)" in n for n in trial.notes)


def test_evaluation_time_is_kept_apart_from_training(capsys) -> None:
    # Given a trainer_state.json whose 5 evaluations took 8,585 s of its 77,351 s runtime
    tl, trial = record(corpus("hf_trainer_state/whisper-large-v2-ja-5k-completed-with-evals.json"))
    # Then evaluation is its own part of the wall and the steady clock is the rest
    assert trial.wall.evaluation_s == pytest.approx(8585.4949)
    assert trial.wall.steady_s == pytest.approx(77350.9963 - 8585.4949)
    assert trial.work.done == 5000 and trial.status == "completed"


def test_prediction_entries_are_evaluation_time_too() -> None:
    # Given a state whose prediction took most of the runtime (the real file: eval
    # and predict entries ~95 % of train_runtime)
    doc = json.loads(
        (CORPUS / "hf_trainer_state/t5-summarization-215k-steps-no-eval.json").read_text()
    )
    summary = doc["log_history"].pop()
    doc["log_history"] += [
        {"epoch": 3.0, "predict_loss": 1.7, "predict_runtime": 52000.0, "step": 215337},
        summary,
    ]
    tl, trial = record({"trainer_state.json": json.dumps(doc).encode()})
    # Then the steady clock is the runtime less the prediction: the rate is not 20× too low
    assert trial.wall.evaluation_s == pytest.approx(52000.0)
    assert trial.wall.steady_s == pytest.approx(54713.1806 - 52000.0)


def _report(seconds: float) -> bytes:
    return json.dumps(
        {
            "compilation_summary": {"true": 2},
            "compilation_report": {"a.hlo_module.pb": {"status": True, "compile_time": seconds}},
            "start_time": 1718686500.0,
            "compilation_time": seconds,
        }
    ).encode()


def test_compile_reports_of_nodes_compiling_in_parallel_take_the_critical_path() -> None:
    # Given a training log and two nodes' neuron_parallel_compile reports: 195 s and 226 s
    files = corpus("neuronx_distributed/nxdt-megatron-gpt-bar.log")
    files |= {"node1.json": _report(195.0), "node2.json": _report(226.0)}
    tl, trial = record(files)
    # Then the compile time is the longest node's (they ran side by side), not the 421 s sum
    assert trial.wall.compile_s == pytest.approx(226.0)
    figure = tl.reading().figures["compile_s"]
    assert figure.value == 226.0 and figure.file == "node2.json"
    assert "the longest of 2 files" in figure.rule

"""Every log format on its real published lines (tests/events/logs, sources in its README),
and on truncated and corrupted copies: the figures each yields, the lines they came from, and
what stays not measured."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.factories import workload
from trncost.errors import LogFormatError
from trncost.metrics.logs import FORMAT_NAMES, FORMATS
from trncost.metrics.logs.scan import Reader
from trncost.metrics.logs.timeline import Timeline
from trncost.metrics.logs.trial import trial_from_logs
from trncost.model import Phase, TrialStatus

LOGS = Path(__file__).resolve().parents[1] / "events" / "logs"
WHEN = datetime(2026, 12, 1, tzinfo=UTC)


def read(*names: str, data: dict[str, bytes] | None = None, **timeline):
    tl = Timeline(**timeline)
    reader = Reader(tl, FORMATS)
    results = []
    for name in names:
        raw = data[name] if data and name in data else (LOGS / name).read_bytes()
        results.append(reader.read_bytes(name, raw))
    return tl, results


def record(tl, results, status=TrialStatus.completed, **wl):
    return trial_from_logs(
        tl, results, workload(**wl), trial_id="t-log", phase=Phase.baseline,
        instance_type="trn2.48xlarge", instance_count=1, region="us-east-1",
        imported_at=WHEN, status=status,
    )  # fmt: skip


# (file, format, lines matched, work unit, work done) on the real published lines. A progress
# bar counts from the run's start: NxD Training's bar 191/301501 [59:48…] consumed 24,320
# samples in its 59:48, so that is the work on its clock (not the 256 of its last two lines)
REAL = [
    ("nxdt_llama3_8b_pretrain.log", "nemo", 6, "samples", 24320.0),
    ("nxdt_llama3_8b_dpo.log", "nemo", 6, "samples", 64.0),
    ("nemo2_bionemo_esm2.log", "nemo", 6, "samples", 5.0),
    ("megatron_mixtral_h100.log", "megatron", 3, "samples", 256.0),
    ("megatron_llm_epfl.log", "megatron", 4, "samples", 3072.0),
    ("neuron_bert_tutorial.log", "neuron_log", 8, "steps", 7.0),
    ("neuron_bert_tutorial_phase2.log", "neuron_log", 7, "steps", 6.0),
    ("nxd_llama_tp_pp_constructed.log", "nxd_examples", 5, "steps", 5.0),
    ("hf_trainer_tf_glue.log", "hf_trainer", 4, "samples", 640.0),
    ("trainer_state_t5_summarization.json", "hf_trainer_state", 8, "steps", 215337.0),
    ("lightning_progress.log", "lightning", 12, "steps", 5.0),
]


@pytest.mark.parametrize(("name", "fmt", "matched", "unit", "done"), REAL)
def test_each_format_reads_its_real_lines(name, fmt, matched, unit, done) -> None:
    tl, (result,) = read(name)
    assert (result.format, result.matched_lines, result.confidence) == (fmt, matched, 1.0)
    got = record(tl, [result], tokens_per_sample=None)
    assert (got.trial.work.unit, got.trial.work.done) == (unit, done)
    where = got.trial.provenance["work.done"].measured_in
    assert {(w.source, w.file, w.format) for w in where} == {("log", name, fmt)}
    assert all(1 <= r.first <= r.last <= max(result.lines, 1) for w in where for r in w.lines)
    # what the log does not say stays not measured: never 0
    assert got.trial.wall.warmup_s is None and "wall.warmup_s" in got.not_measured


def test_megatron_samples_per_second_is_the_global_batch_over_the_iteration_time() -> None:
    tl, results = read("megatron_mixtral_h100.log", seq_length=4096)
    series = tl.series()
    (sps,) = series["samples_per_second"].values
    assert sps == pytest.approx((128 / 5.3616 + 128 / 5.4707 + 128 / 5.8299) / 3, rel=1e-4)
    assert series["tokens_done"].values == (256 * 4096,)
    got = record(tl, results)
    assert got.trial.work.unit == "tokens" and got.trial.work.done == 256 * 4096


def test_the_compile_cache_lines_give_compile_seconds_and_misses() -> None:
    tl, (first,) = read("neuron_compile_cache_mlp.log")
    # the tutorial's `Train throughput (iter/sec)` / `Final loss is` lines are its training
    assert first.format == "neuron_log" and first.companions == {"neuron_compile": 8}
    # two cache misses, timed from "No candidate found" to "Exiting with a successfully
    # compiled graph": 16:15:00.000947 → 16:18:05.000843 and 16:18:05.000957 → 16:18:12.000912
    assert tl.compile_misses == 2 and sum(tl.compile_s) == pytest.approx(184.999896 + 6.999955)
    tl2, (rerun,) = read("neuron_compile_cache_mlp_rerun.log")
    assert tl2.compile_hits == 2 and tl2.compile_misses == 0


def test_a_log_plus_compile_lines_and_a_report_make_one_trial() -> None:
    tl, results = read(
        "nxdt_llama3_8b_pretrain.log", "neuron_parallel_compile_results_constructed.json"
    )
    got = record(tl, results)
    assert got.trial.wall.compile_s == pytest.approx(431.8805)
    assert got.trial.wall.compile_cache_hit is False
    assert got.trial.reliability.errors == 1  # the report's one failed graph
    assert results[0].companions == {"neuron_compile": 3}


def test_hf_trainer_summary_gives_clock_and_samples() -> None:
    tl, results = read("hf_trainer_summary.log")
    got = record(tl, results)
    assert got.trial.work.done == pytest.approx(15.743 * 54713.1806)
    assert got.trial.wall.steady_s == pytest.approx(54713.1806)
    assert any("train_runtime" in n or "runtime" in n for n in got.trial.notes)


def test_a_mid_run_excerpt_counts_only_what_is_inside_its_clock() -> None:
    tl, results = read("megatron_llm_epfl.log")
    got = record(tl, results)
    assert any("starts at step 201, mid-run" in n for n in got.trial.notes)
    # 3 intervals of 1,024 samples; clock = the 3 intervals' step times
    assert got.trial.work.done == 3 * 1024
    assert got.trial.wall.steady_s == pytest.approx((139221.4 + 140346.9 + 140197.9) / 1000)


def test_status_is_inferred_when_not_given() -> None:
    tl, results = read("hf_trainer_summary.log")
    assert record(tl, results, status=None).trial.status == "completed"
    tl, results = read("megatron_mixtral_h100.log")
    got = record(tl, results, status=None)
    assert got.trial.status == "stopped" and not got.trial.usable_for_throughput
    # iteration 73/100 is the last line: the counter stops short of its total
    assert any("stops short of its total (73 of 100)" in n for n in got.trial.notes)


# -- truncated and corrupted copies ----------------------------------------------------------
@pytest.mark.parametrize(("name", "fmt", "matched", "unit", "done"), REAL[:9])
def test_a_truncated_copy_reads_what_is_left(name, fmt, matched, unit, done) -> None:
    raw = (LOGS / name).read_bytes()
    cut = raw[: int(len(raw) * 0.7)]  # cut mid-line
    try:
        tl, (result,) = read(name, data={name: cut})
    except LogFormatError as exc:  # all that is left is a banner: nothing to record
        assert f"{fmt}: " in str(exc) and "no training step" in str(exc)
        return
    assert result.format == fmt and result.matched_lines <= matched
    got = record(tl, [result])
    assert got.trial.work.done <= done * 4096  # never more than the whole log


def test_a_corrupted_copy_never_crashes_and_its_impossible_numbers_are_dropped() -> None:
    raw = (LOGS / "megatron_mixtral_h100.log").read_text()
    bad = raw.replace("(ms): 5470.7", "(ms): -5470.7")
    bad = bad.replace("lm loss: 1.798953E+00", "lm loss: nan")
    noise = "\x00\xff garbage \x1b[31m\n" * 3
    data = {"m.log": (noise + bad + noise).encode("utf-8", "surrogateescape")}
    tl, (result,) = read("m.log", data=data)
    got = record(tl, [result])
    assert result.format == "megatron"
    why = "step time -5.4707 is not a finite, non-negative number"
    assert any(why in n for n in got.trial.notes)
    assert got.trial.status == "diverged"  # a nan loss
    assert got.trial.quality is None or got.trial.quality.loss_finite is False


def test_random_bytes_are_an_unrecognised_log_naming_every_format() -> None:
    data = {"x.bin": bytes(range(256)) * 50}
    with pytest.raises(LogFormatError) as caught:
        read("x.bin", data=data)
    for name in FORMAT_NAMES:
        assert any(t.startswith(f"{name}:") for t in caught.value.tried), name


def test_mixed_formats_read_the_main_one_and_count_the_rest() -> None:
    megatron = (LOGS / "megatron_mixtral_h100.log").read_text()
    hf = (LOGS / "hf_trainer_alpaca.log").read_text().splitlines()[0]
    mixed = (megatron + hf + "\n" + megatron).encode()
    tl, (result,) = read("mixed.log", data={"mixed.log": mixed})
    assert result.format == "megatron" and result.other_format_lines == {"hf_trainer": 1}
    assert result.matched_lines == 6 and result.confidence == pytest.approx(6 / 7, abs=1e-3)


def test_a_forced_format_that_matches_nothing_is_refused() -> None:
    tl = Timeline()
    with pytest.raises(LogFormatError):
        lightning = (LOGS / "lightning_progress.log").read_bytes()
        Reader(tl, FORMATS, "megatron").read_bytes("a.log", lightning)
    with pytest.raises(LogFormatError, match="unknown log format"):
        Reader(tl, FORMATS, "nope")


def test_a_restart_is_a_failure_and_redone_steps_are_not_quality_meeting() -> None:
    lines = [
        f"step {s} step_time 2.0s throughput 100.0 seq/s step loss 1.0 grad norm 1.0"
        for s in (1, 2, 3, 4, 5, 6, 3, 4, 5, 6, 7)
    ]
    tl, results = read("r.log", data={"r.log": "\n".join(lines).encode()}, global_batch=200)
    got = record(tl, results, model={"name": "small", "parameters": 1e8})
    assert got.excluded == []
    assert got.trial.reliability.failures == 1
    # steps 1..6 (from 0: the run began in the log), back to 3, then 4..7: 10 steps done,
    # 7 of them new (the redone steps 4..6 are not quality-meeting work)
    assert got.trial.work.done == 10 * 200
    assert got.trial.work.quality_meeting == 7 * 200


def test_a_step_printed_again_by_another_rank_is_read_once_not_a_restart() -> None:
    # torchrun without prefixes: two ranks print the same steps, a line or two apart
    lines = [
        f"step {s} step_time 2.0s throughput 100.0 seq/s step loss 1.0 grad norm 1.0"
        for s in (1, 2, 1, 3, 2, 4, 3, 5, 4, 5)
    ]
    tl, results = read("d.log", data={"d.log": "\n".join(lines).encode()}, global_batch=200)
    got = record(tl, results, model={"name": "small", "parameters": 1e8})
    assert got.trial.reliability.failures == 0 and tl.duplicates == 4
    assert got.trial.work.done == got.trial.work.quality_meeting == 5 * 200
    (skipped,) = tl.reading().skipped
    assert skipped["count"] == 4 and "another rank's copy" in skipped["why"]


def test_events_carry_the_time_of_their_cloudwatch_event() -> None:
    lines = (LOGS / "nxd_llama_tp_pp_constructed.log").read_text().splitlines()
    events = [(1_790_000_000_000 + i * 60_000, line) for i, line in enumerate(lines)]
    tl = Timeline()
    result = Reader(tl, FORMATS).read_events("group/stream", events)
    assert result.format == "nxd_examples" and result.matched_lines == 5
    assert tl.mode == "timestamps" and tl.window is not None
    assert (tl.window[1] - tl.window[0]).total_seconds() == 4 * 60


def test_throughput_above_the_chips_peak_excludes_the_trial_with_the_reason() -> None:
    # 100 samples/s of 4,096 tokens on one trn2.48xlarge, for an 8B model: MFU ≈ 1.8
    lines = [
        f"step {s} step_time 2.0s throughput 100.0 seq/s step loss 1.0 grad norm 1.0"
        for s in range(1, 40)
    ]
    tl, results = read("fast.log", data={"fast.log": "\n".join(lines).encode()}, global_batch=200)
    got = record(tl, results)
    (why,) = got.excluded
    assert why.startswith("throughput above the chip's peak: MFU 1.8")
    assert got.trial.work.quality_meeting == 0 and not got.trial.usable_for_throughput
    assert any(n.startswith("excluded: throughput above the chip's peak") for n in got.trial.notes)


def test_the_bulk_path_reads_what_the_line_path_reads(monkeypatch) -> None:
    # Megatron's standard iteration lines are read by one regex over the buffer; without it
    # the same lines parse one by one: the same series, the same lines
    raw = (LOGS / "megatron_mixtral_h100.log").read_text()
    text = "loading checkpoint from /ckpt at iteration 70\n" + raw + raw.replace(" 7", " 8")
    data = {"m.log": text.encode()}
    bulk_tl, _ = read("m.log", data=data, seq_length=4096)
    from trncost.metrics.logs.megatron import Megatron

    monkeypatch.setattr(Megatron, "bulk", None)
    line_tl, _ = read("m.log", data=data, seq_length=4096)
    assert bulk_tl.series() == line_tl.series()
    assert {k: v.ranges for k, v in bulk_tl.lines.items()} == {
        k: v.ranges for k, v in line_tl.lines.items()
    }
    # the restore line comes first (before any step): a resume, not a failure
    assert bulk_tl.restores == 1 and bulk_tl.failures == 0

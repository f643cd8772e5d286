"""Trial workflow, pure parts: the plan model, the gates, the budget, the ASL definition."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from pydantic import ValidationError

from tests.support.factories import trial
from tests.support.workflow_kit import plan, plan_data
from trncost.errors import DefinitionError
from trncost.model.launchers import LauncherKind, unsupported_reason
from trncost.model.plan import FitCheck, TrialPlan
from trncost.model.workload import QualityGate
from trncost.workflow import budget as b
from trncost.workflow.definition import ASL_PATH, definition, placeholders, render, substitutions
from trncost.workflow.gates import baseline_gate, fit_gate, target_gate

GATE = QualityGate(metric="eval_loss", threshold=2.0, direction="at_most")


# --- plan --------------------------------------------------------------------------------------
def _errors(**over) -> str:
    with pytest.raises(ValidationError) as caught:
        TrialPlan.model_validate(plan_data(**over))
    return str(caught.value)


def test_schedule_is_phase_major_with_stable_trial_ids() -> None:
    p = plan()
    s = p.schedule()
    assert [(r.phase.value, r.run, r.instance_count) for r in s] == [
        ("fit", 1, 1),
        ("baseline", 1, 1),
        ("baseline", 2, 1),
        ("baseline", 3, 1),
        ("target", 1, 1),
        ("target", 2, 2),
    ]
    assert s[5].trial_id == "plan-1-target-c0-n2-r2"
    assert [r.steps for r in s] == [50, 500, 500, 500, 5000, 5000]


def test_plan_without_phases_is_refused_naming_the_fields() -> None:
    assert "the plan has no phase" in _errors(fit=None, baseline=None, target=None)


def test_baseline_needs_three_repeats() -> None:
    assert "baseline.repeats" in _errors(baseline={"steps": 10, "repeats": 2})


def test_instance_type_no_launcher_offers_is_refused() -> None:
    bad = [{"instance_type": "ml.trn3.48xlarge", "instance_count": 1, "region": "us-east-1"}]
    msg = _errors(candidates=bad)
    assert "candidates.0.instance_type" in msg and "use the ec2 launcher" in msg
    assert unsupported_reason(LauncherKind.ec2, "trn3.48xlarge") is None
    assert "EC2 instance types" in unsupported_reason(LauncherKind.batch, "ml.p5.48xlarge")
    assert "ml.*" in unsupported_reason(LauncherKind.sagemaker, "p5.48xlarge")


def test_launcher_needs_its_settings() -> None:
    msg = _errors(
        launcher="ec2",
        image=None,
        sagemaker=None,
        candidates=[{"instance_type": "trn3.48xlarge", "instance_count": 1, "region": "us-east-1"}],
    )
    assert "ami: the ec2 launcher needs it" in msg and "ec2: the ec2 launcher needs it" in msg


def test_other_bad_settings_are_named() -> None:
    assert "budget_cap_usd" in _errors(budget_cap_usd="0")
    assert "target.instance_counts" in _errors(target={"steps": 1, "instance_counts": [2, 2]})
    assert "plan_id" in _errors(plan_id="has space")
    assert "role_arn" in _errors(role_arn="not-an-arn")
    assert "dataset_uri" in _errors(dataset_uri="/local/path")


def test_fingerprint_changes_with_content() -> None:
    assert plan().fingerprint() == plan().fingerprint()
    assert plan().fingerprint() != plan(budget_cap_usd="999").fingerprint()


# --- gates -------------------------------------------------------------------------------------
def _fit(**over):
    data = {
        "phase": "fit",
        "wall": {"steady_s": 60.0, "compile_s": 300.0},
        "checkpointing": {"saves": 1, "restore_verified": True},
    }
    data.update(over)
    return trial("fit-1", **data)


def test_fit_gate_passes_a_clean_run() -> None:
    result = fit_gate([_fit()], list(FitCheck))
    assert result.passed, result.reasons


@pytest.mark.parametrize(
    ("over", "reason"),
    [
        ({"status": "failed"}, "ran:"),
        ({"status": "diverged"}, "loss_finite:"),
        ({"checkpointing": {"saves": 0, "restore_verified": True}}, "checkpoint_saved:"),
        ({"checkpointing": {"saves": 1}}, "checkpoint_restored: checkpoint restore not verified"),
        ({"reliability": {"unsupported_ops": ["aten::foo"]}}, "no_unsupported_ops: "),
        (
            {
                "wall": {"steady_s": 0.0},
                "work": 0.0,
            },
            "compiled:",
        ),
    ],
)
def test_fit_gate_fails_with_the_check_named(over, reason) -> None:
    result = fit_gate([_fit(**over)], list(FitCheck))
    assert not result.passed
    assert any(reason in r for r in result.reasons), result.reasons


def test_fit_gate_only_checks_what_the_plan_asks() -> None:
    assert fit_gate([_fit(checkpointing={"saves": 0})], [FitCheck.ran]).passed
    assert not fit_gate([], [FitCheck.ran]).passed


def _base(i: int, seconds: float):
    return trial(f"b-{i}", wall={"steady_s": seconds})


def test_baseline_gate_passes_when_throughput_is_stable() -> None:
    result = baseline_gate([_base(1, 3600), _base(2, 3610), _base(3, 3590)], 3, 0.05)
    assert result.passed and result.measures["throughput_cv"] < 0.01


def test_baseline_gate_fails_when_variance_is_high() -> None:
    result = baseline_gate([_base(1, 3600), _base(2, 5400), _base(3, 2400)], 3, 0.05)
    assert not result.passed and "not below the limit 0.05" in result.reasons[0]


def test_baseline_gate_needs_enough_usable_runs() -> None:
    runs = [_base(1, 3600), _base(2, 3600), trial("b-3", status="failed")]
    result = baseline_gate(runs, 3, 0.05)
    assert not result.passed
    assert result.reasons[0].startswith("2 usable baseline run(s) of the 3")
    assert any("b-3: not usable" in r for r in result.reasons)


def _target(count: int, value: float, restore: bool | None = True):
    return trial(
        f"t-{count}",
        phase="target",
        count=count,
        quality={"metric": "eval_loss", "value": value},
        checkpointing={"saves": 2, "restore_verified": restore},
    )


def test_target_gate_needs_quality_and_restore_at_every_count() -> None:
    assert target_gate([_target(1, 1.9), _target(2, 1.95)], GATE, [1, 2]).passed
    miss = target_gate([_target(1, 1.9)], GATE, [1, 2])
    assert not miss.passed and "2 instance(s): no target run recorded" in miss.reasons
    bad = target_gate([_target(1, 2.3), _target(2, 1.9, restore=None)], GATE, [1, 2])
    assert not bad.passed
    assert any("eval_loss 2.3 does not meet at_most 2" in r for r in bad.reasons)
    assert any("checkpoint restore not verified" in r for r in bad.reasons)


# --- budget ------------------------------------------------------------------------------------
def _run(tid="r", recorded=True, billed=None, wall=None, count=1, max_s=3600.0):
    return b.RunCost(tid, "trn2.48xlarge", count, recorded, billed, wall, max_s)


RATE = {"trn2.48xlarge": b.Rate(Decimal("36"), "official_price s/SKU")}


def test_spend_uses_billed_seconds_then_wall_then_worst_case() -> None:
    spent = b.spend(
        [_run(billed=1800.0), _run(wall=30.0, count=2), _run(recorded=False, max_s=600.0)],
        RATE,
    )
    # 1800 s + 2 × 60 s (minimum) + 600 s worst case = 2520 instance-s at 0.01 USD/s
    assert spent.usd == Decimal("25.2")
    assert "estimated from wall time" in spent.lines[1] and "worst case" in spent.lines[2]


def test_next_launch_within_and_over_the_cap() -> None:
    spent = b.spend([_run(billed=3600.0)], RATE)
    ok = b.check_next(spent, _run("next", recorded=False), RATE["trn2.48xlarge"], Decimal("72"))
    assert ok.ok and ok.next_max_usd == Decimal(36)
    over = b.check_next(
        spent, _run("next", recorded=False), RATE["trn2.48xlarge"], Decimal("71.99")
    )
    assert not over.ok and "would exceed the cap 71.99 USD" in over.reasons[0]


def test_one_type_in_two_regions_is_priced_at_each_regions_rate() -> None:
    # Given the same type at 36 USD/h in us-east-2 and 72 USD/h in us-west-2, none elsewhere
    rates = {
        b.rate_key("trn2.48xlarge", "us-east-2"): b.Rate(Decimal("36"), "official_price s/A"),
        b.rate_key("trn2.48xlarge", "us-west-2"): b.Rate(Decimal("72"), "official_price s/B"),
    }
    runs = [
        b.RunCost(tid, "trn2.48xlarge", 1, True, 3600.0, region=region)
        for tid, region in (("e", "us-east-2"), ("w", "us-west-2"), ("x", "eu-west-1"))
    ]
    # When their spend is summed: each hour at its own region's rate, eu-west-1 unpriced
    spent = b.spend(runs, rates)
    assert spent.usd == Decimal(108) and spent.unpriced == ["trn2.48xlarge@eu-west-1"]
    assert "× 36 USD/h" in spent.lines[0] and "× 72 USD/h" in spent.lines[1]


def test_no_price_means_the_cap_cannot_be_enforced() -> None:
    spent = b.spend([], RATE)
    check = b.check_next(
        spent, _run("next", recorded=False), b.Rate(None, "PENDING"), Decimal(1000)
    )
    assert not check.ok and "cannot be enforced" in check.reasons[0]


# --- definition --------------------------------------------------------------------------------
ARN = "arn:aws:lambda:us-east-1:123456789012:function:steps"


def test_the_asl_file_is_json_with_exactly_the_documented_placeholders() -> None:
    json.loads(ASL_PATH.read_text())
    assert placeholders() == {"TrialStepsFunctionArn", "PollIntervalSeconds", "MaxPolls"}


def test_render_requires_every_substitution_and_no_other() -> None:
    with pytest.raises(DefinitionError, match="missing substitutions"):
        render({"TrialStepsFunctionArn": ARN})
    with pytest.raises(DefinitionError, match="unknown substitutions"):
        render({**substitutions(ARN), "Extra": "x"})
    with pytest.raises(DefinitionError, match="break the JSON"):
        render({**substitutions(ARN), "TrialStepsFunctionArn": 'a"b'})


def test_structure_every_task_retries_with_jitter_and_is_caught() -> None:
    d = definition(substitutions(ARN, 5, 7))
    states = d["States"]
    tasks = {n: s for n, s in states.items() if s["Type"] == "Task"}
    assert tasks and all(s["Resource"] == ARN for s in tasks.values())
    for name, s in tasks.items():
        retry = s["Retry"][0]
        assert retry["JitterStrategy"] == "FULL" and retry["BackoffRate"] > 1, name
        assert "TransientError" in retry["ErrorEquals"], name
        assert s["Catch"][0]["ErrorEquals"] == ["States.ALL"], name
        assert s["Catch"][0]["Next"] in ("RecordFailure", "WorkflowFailed"), name
    assert states["Configure"]["Parameters"]["config"] == {
        "poll_interval_s.$": "States.StringToJson('5')",
        "max_polls.$": "States.StringToJson('7')",
    }


def test_structure_every_launch_is_preceded_by_a_budget_check() -> None:
    states = definition(substitutions(ARN))["States"]
    into_launch = [
        n
        for n, s in states.items()
        if s.get("Next") == "Launch" or any(c.get("Next") == "Launch" for c in s.get("Choices", []))
    ]
    assert into_launch == ["BudgetAllows"]
    assert states["BudgetAllows"]["Choices"][0]["Variable"] == "$.budget.ok"
    assert states["CheckBudget"]["Next"] == "BudgetAllows"


def test_structure_polling_is_bounded_and_every_path_ends() -> None:
    states = definition(substitutions(ARN))["States"]
    landed = states["RecordLanded"]
    assert {c["Next"] for c in landed["Choices"]} == {"Gate", "StopForTimeout"}
    assert landed["Default"] == "WaitForRecord"
    assert states["WaitForRecord"]["SecondsPath"] == "$.config.poll_interval_s"
    # every state reaches an end (Succeed or Fail)
    ends = {n for n, s in states.items() if s["Type"] in ("Succeed", "Fail")}
    assert ends == {
        "Completed",
        "GateFailed",
        "BudgetCapReached",
        "TrialRecordTimedOut",
        "WorkflowFailed",
    }

    def nexts(s):
        out = [s.get("Next"), s.get("Default")]
        out += [c["Next"] for c in s.get("Choices", []) + s.get("Catch", [])]
        return {n for n in out if n}

    reach = {n: nexts(s) for n, s in states.items()}
    for name in states:
        seen, todo = set(), [name]
        while todo:
            cur = todo.pop()
            if cur in seen:
                continue
            seen.add(cur)
            todo.extend(reach[cur])
        assert seen & ends, name


# --- the local launcher's plans ----------------------------------------------------------------
LOCAL = {
    "launcher": "local",
    "image": None,
    "role_arn": None,
    "sagemaker": None,
    "dataset_uri": None,
    "candidates": [{"instance_type": "c7i.16xlarge", "instance_count": 1, "region": "us-east-1"}],
    "target": {"steps": 40, "instance_counts": [1]},
}


def test_a_local_plan_needs_no_image_role_or_dataset() -> None:
    p = TrialPlan.model_validate(plan_data(**LOCAL))
    assert p.launcher == LauncherKind.local and p.dataset_uri is None
    assert [r.instance_count for r in p.schedule()] == [1, 1, 1, 1, 1]


def test_a_local_plan_measures_one_instance_only() -> None:
    two = [{"instance_type": "c7i.16xlarge", "instance_count": 2, "region": "us-east-1"}]
    msg = _errors(**{**LOCAL, "candidates": two, "target": {"steps": 4, "instance_counts": [1, 2]}})
    assert "candidates.0.instance_count: a local run is one process" in msg
    assert "target.instance_counts: a local run is one process" in msg
    assert "the local launcher runs the command on this machine" in _errors(
        **{**LOCAL, "image": "img:1"}
    )
    assert "use c7i.16xlarge" in _errors(
        **{**LOCAL, "candidates": [{**LOCAL["candidates"][0], "instance_type": "ml.c7i.16xlarge"}]}
    )


def test_sagemaker_still_needs_a_dataset() -> None:
    assert "dataset_uri: the sagemaker launcher needs it" in _errors(dataset_uri=None)

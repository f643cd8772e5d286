"""The trial plan state machine's overall timeout is derived from the plan's caps (issue 23:
it had none, so a lost execution could hold paid capacity for Step Functions' year)."""

from __future__ import annotations

import json

import pytest

from trncost.errors import InvalidInput
from trncost.settings import PlanLimits
from trncost.workflow.definition import (
    MAX_EXECUTION_S,
    plan_timeout_s,
    raw_definition,
    render,
    substitutions,
    with_timeout,
)


def test_the_timeout_covers_every_run_of_the_largest_plan_the_stage_allows():
    # Given a stage's caps: 48 runs, each waiting at most 600 polls of 300 s for its record
    timeout = plan_timeout_s(48, 300, 600)
    # Then every run's record wait and tasks fit, and it grows with the runs allowed
    assert timeout >= 48 * 600 * 300
    assert plan_timeout_s(24, 300, 600) < timeout <= MAX_EXECUTION_S
    # and it never exceeds what a Standard workflow can run
    assert plan_timeout_s(10_000, 300, 600) == MAX_EXECUTION_S


def test_the_definition_with_its_timeout_is_still_the_one_definition():
    text = with_timeout(raw_definition(), 3600)
    parsed = json.loads(render(substitutions("arn:aws:lambda:us-east-1:1:function:f"), text))
    assert parsed["TimeoutSeconds"] == 3600
    assert (
        parsed["States"]
        == json.loads(render(substitutions("arn:aws:lambda:us-east-1:1:function:f")))["States"]
    )


def test_a_plan_with_more_runs_than_the_stage_allows_is_a_422_naming_candidates():
    from tests.support.workflow_kit import plan
    from trncost.services.trial_plans import TrialPlanService

    service = TrialPlanService.__new__(TrialPlanService)
    service.limits = PlanLimits(max_runs=5)
    # one candidate: 1 fit + 3 baseline + 2 target runs = 6
    with pytest.raises(InvalidInput) as refused:
        service._within_limits(plan())
    assert refused.value.fields == ["candidates"] and "6 runs" in str(refused.value)
    service.limits = PlanLimits(max_runs=6)
    service._within_limits(plan())

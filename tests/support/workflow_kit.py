"""Helpers for the trial workflow tests: plans, trial records a finished run would produce,
a fake launcher that "runs" a job by writing its trial record (as the ingest would), and a
fixed price lookup."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from tests.support.factories import trial as make_trial
from tests.support.factories import workload
from trncost.launch.base import LaunchedJob, LaunchRequest
from trncost.model.plan import TrialPlan
from trncost.model.trial import TrialRun
from trncost.workflow.budget import Rate

ROLE = "arn:aws:iam::123456789012:role/trncost-training"


def plan_data(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "plan_id": "plan-1",
        "workload_id": "wl-1",
        "candidates": [
            {"instance_type": "ml.trn2.48xlarge", "instance_count": 1, "region": "us-east-1"}
        ],
        "launcher": "sagemaker",
        "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
        "entry_command": ["python", "train.py"],
        "dataset_uri": "s3://team-data/cpt",
        "hyperparameters": {"lr": "3e-4"},
        "fit": {"steps": 50},
        "baseline": {"steps": 500, "repeats": 3, "cv_limit": 0.05},
        "target": {"steps": 5000, "instance_counts": [1, 2]},
        "budget_cap_usd": "1000",
        "role_arn": ROLE,
        "max_run_minutes": 60,
        "sagemaker": {"output_uri": "s3://team-data/out"},
    }
    data.update(over)
    return data


def plan(**over: Any) -> TrialPlan:
    return TrialPlan.model_validate(plan_data(**over))


def good_trial(request: LaunchRequest, rate: float = 1000.0, **over: Any) -> TrialRun:
    """The record of a run that passes its phase's gate (eval_loss 1.8 ≤ 2.0)."""
    data: dict[str, Any] = {
        "instance_type": request.instance_type,
        "count": request.instance_count,
        "phase": request.phase.value,
        "work": rate * 3600,
        "wall": {"steady_s": 3600.0, "compile_s": 120.0},
        "checkpointing": {"saves": 2, "restore_verified": True},
        "quality": {"metric": "eval_loss", "value": 1.8, "loss_finite": True},
        "billed_instance_seconds": 3720.0 * request.instance_count,
    }
    data.update(over)
    return make_trial(request.trial_id, **data)


Outcome = Callable[[LaunchRequest], TrialRun | None]


@dataclass
class FakeLauncher:
    """Launches by recording the request; `outcome` gives the trial record the job would
    produce (None: the job never reports), written straight to the record store."""

    records: Any
    outcome: Outcome = good_trial
    launched: list[LaunchRequest] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    fail_with: Exception | None = None

    def launch(self, request: LaunchRequest) -> LaunchedJob:
        if self.fail_with is not None:
            raise self.fail_with
        self.launched.append(request)
        trial = self.outcome(request)
        if trial is not None:
            self.records.put_trial(trial, "2026-11-29T00:00:00+00:00", "test")
        return LaunchedJob(f"job-{request.trial_id}")

    def stop(self, job_id: str, region: str) -> None:
        self.stopped.append(job_id)


def fixed_prices(usd: str | None = "10") -> Callable[..., Rate]:
    def lookup(instance_type: str, region: str, plan: TrialPlan) -> Rate:
        if usd is None:
            return Rate(None, "no official price (test)")
        return Rate(Decimal(usd), "official_price snap-test/SKU")

    return lookup


__all__ = ["workload", "plan", "plan_data", "good_trial", "FakeLauncher", "fixed_prices", "ROLE"]

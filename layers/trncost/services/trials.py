"""Workloads and their trial records: create or import one, read one, list them.

Records are written once: a workload or trial id that is taken is a Conflict, an id that
names nothing is NotFound. A trial imported here is recorded with source "api" (the ingest
records the others, see `trncost.services.ingest`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from trncost.errors import Conflict, DomainError, NotFound
from trncost.model import TrialRun, Workload
from trncost.store.records import Page, RecordStore

__all__ = ["Page", "TrialService"]


def _now() -> datetime:
    return datetime.now(UTC)


class TrialService:
    def __init__(self, records: RecordStore, clock: Callable[[], datetime] = _now) -> None:
        self.records = records
        self.clock = clock

    # -- workloads -------------------------------------------------------------------------
    def create_workload(self, workload: Workload, created_by: str | None = None) -> Workload:
        """Store a new workload, noting who created it (the caller's IAM ARN)."""
        self.records.put_workload(workload, self.clock().isoformat(), created_by)
        return workload

    def workload(self, workload_id: str) -> Workload:
        workload = self.records.get_workload(workload_id)
        if workload is None:
            raise NotFound(f"workload {workload_id} not found")
        return workload

    def workloads(self, limit: int = 50, cursor: str | None = None) -> Page:
        return self.records.list_workloads(limit, cursor)

    # -- trials ----------------------------------------------------------------------------
    def import_trial(
        self, workload_id: str, trial: TrialRun, recorded_by: str | None = None
    ) -> TrialRun:
        """Record a trial the caller measured, under the workload the path names, noting the
        caller (`recorded_by`)."""
        self.workload(workload_id)
        if trial.workload_id != workload_id:
            raise DomainError(
                f"workload_id: the trial names {trial.workload_id}, the path {workload_id}"
            )
        if not self.records.put_trial(trial, self.clock().isoformat(), "api", recorded_by):
            raise Conflict(f"trial {trial.trial_id} exists")
        return trial

    def trial(self, trial_id: str) -> TrialRun:
        trial = self.records.get_trial(trial_id)
        if trial is None:
            raise NotFound(f"trial {trial_id} not found")
        return trial

    def all_trials(self, workload_id: str) -> list[TrialRun]:
        """Every trial record of the workload (the evidence of an estimate or comparison)."""
        return self.records.all_trials(workload_id)

    def trials(self, workload_id: str, limit: int = 50, cursor: str | None = None) -> Page:
        self.workload(workload_id)
        return self.records.list_trials(workload_id, limit, cursor)

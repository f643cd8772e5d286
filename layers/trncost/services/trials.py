"""Workloads and their trial records: create or import one, read one, list them.

Records are written once: a workload or trial id that is taken is a Conflict, an id that
names nothing is NotFound.

`TrialService.record` is the one way a trial record is written, whatever way it arrived (the
API's `POST /workloads/{id}/trials` with source "api", a log import, the ingest of a finished
job or an agent's event): it writes the record once and publishes "Trial Recorded", which
refreshes the estimates of the trial's workload (the refresh Lambda). It publishes on a repeat
too, so an announcement lost to a crash after the write is sent by the retry; a refresh that
finds no figure changed adds no version, so a repeat changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from trncost.bus import EventPublisher
from trncost.errors import Conflict, DomainError, NotFound
from trncost.events import DetailType
from trncost.model import TrialRun, Workload
from trncost.model.records import Page
from trncost.pricing.names import KnownNames
from trncost.store.records import RecordStore

__all__ = ["TrialService"]


def _now() -> datetime:
    return datetime.now(UTC)


class TrialService:
    def __init__(
        self,
        records: RecordStore,
        clock: Callable[[], datetime] = _now,
        publisher: EventPublisher | None = None,
        names: KnownNames | None = None,
    ) -> None:
        self.records = records
        self.clock = clock
        self.publisher = publisher
        self.names = names or KnownNames()  # botocore's names (+ the stage catalog's)

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
    def record(
        self,
        trial: TrialRun,
        source: str,
        recorded_at: datetime | None = None,
        recorded_by: str | None = None,
    ) -> bool:
        """Write the trial record once and publish "Trial Recorded" (its workload's estimates
        refresh). True when this call wrote it, False when the trial id was recorded before
        (published again: see the module's docstring). `recorded_by`: the caller who imported
        it (None: ingested from its job's event)."""
        at = (recorded_at or self.clock()).isoformat()
        written = self.records.put_trial(trial, at, source, recorded_by)
        if not written:
            self._same_as_recorded(trial)
        if self.publisher is not None:
            self.publisher.publish(
                DetailType.trial_recorded,
                {
                    "workload_id": trial.workload_id,
                    "trial_id": trial.trial_id,
                    "phase": trial.phase.value,
                    "status": trial.status.value,
                    "source": source,
                    "outcome": "recorded" if written else "already_recorded",
                },
            )
        return written

    def _same_as_recorded(self, trial: TrialRun) -> None:
        """A trial id taken in this workload: the same record is a duplicate (nothing changes);
        another record under that id is refused with the reason (Conflict; an ingest rejects
        it, visibly)."""
        existing = self.records.get_trial(trial.trial_id, trial.workload_id)
        if existing is None:
            return
        mine, theirs = trial.model_dump(exclude={"notes"}), existing.model_dump(exclude={"notes"})
        if mine != theirs:
            differ = sorted(k for k in mine if mine[k] != theirs.get(k))
            raise Conflict(
                f"trial_id: workload {trial.workload_id} already has a trial {trial.trial_id} "
                f"with other content (it differs in: {', '.join(differ)}); trial ids are per "
                "workload: give this run its own id",
                fields=["trial_id"],
            )

    def import_trial(
        self,
        workload_id: str,
        trial: TrialRun,
        recorded_by: str | None = None,
        source: str = "api",
    ) -> TrialRun:
        """Record a trial the caller measured, under the workload the path names, noting the
        caller (`recorded_by`)."""
        self.workload(workload_id)
        self.names.check_candidate(trial.candidate)
        if trial.workload_id != workload_id:
            raise DomainError(
                f"workload_id: the trial names {trial.workload_id}, the path {workload_id}"
            )
        if not self.record(trial, source, recorded_by=recorded_by):
            raise Conflict(f"trial {trial.trial_id} exists")
        return trial

    def trial(self, trial_id: str, workload_id: str | None = None) -> TrialRun:
        trial = self.records.get_trial(trial_id, workload_id)
        if trial is None:
            raise NotFound(f"trial {trial_id} not found")
        return trial

    def all_trials(self, workload_id: str) -> list[TrialRun]:
        """Every trial record of the workload (the evidence of an estimate or comparison)."""
        return self.records.all_trials(workload_id)

    def trials(self, workload_id: str, limit: int = 50, cursor: str | None = None) -> Page:
        self.workload(workload_id)
        return self.records.list_trials(workload_id, limit, cursor)

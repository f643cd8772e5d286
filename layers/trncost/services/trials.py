"""Workloads and their trial records: create or import one, read one, list them.

Records are written once: a workload or trial id that is taken is a Conflict, an id that
names nothing is NotFound.

`TrialService.record` is the one way a trial record is written, whatever way it arrived (the
API's `POST /workloads/{id}/trials` with source "api", a log import, the ingest of a finished
job or an agent's event): it validates the record whole (figures finite, in range and of their
type; free text bounded: the API, the ingest and the import alike), writes it once together
with its "Trial Recorded" event in the outbox (one transaction), then publishes the event
right away, best effort: if EventBridge is down, the outbox sweeper sends it later, and the
write still answers success. The event refreshes the estimates of the trial's workload (the
refresh Lambda); a repeat of the same record writes nothing and announces nothing.

Evidence is corrected, never rewritten: `retract` marks a trial record retracted (who, when,
why) and announces it like a new trial, so every estimate of the workload is recomputed without
it (admission `retracted`: neither evidence nor cost) and gets a version listing the change. A
corrected record names the one it replaces (`supersedes`): recording it retracts that one,
which then names its correction. A workload is retracted the same way; it stays readable, and
takes no new trial or estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from trncost.errors import Conflict, DomainError, NotFound
from trncost.events import DetailType
from trncost.model import Retraction, TrialRun, Workload
from trncost.model.common import MAX_NOTE_CHARS, MAX_TEXT_ITEMS, unprintable
from trncost.model.records import Page
from trncost.pricing.names import KnownNames
from trncost.store.records import RecordStore

if TYPE_CHECKING:
    from trncost.bus import EventPublisher
    from trncost.services.outbox import Outbox

__all__ = ["TrialService", "plain_notes"]


def _now() -> datetime:
    return datetime.now(UTC)


class TrialService:
    def __init__(
        self,
        records: RecordStore,
        clock: Callable[[], datetime] = _now,
        publisher: EventPublisher | None = None,
        names: KnownNames | None = None,
        outbox: Outbox | None = None,
    ) -> None:
        """`publisher`: trncost's bus (None: nothing is announced); the outbox is in the
        records' table unless one is given."""
        from trncost.services.outbox import Outbox

        self.records = records
        self.clock = clock
        self.outbox = outbox or Outbox.beside(records, publisher)
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

    def open_workload(self, workload_id: str) -> Workload:
        """The workload, if it takes new evidence: Conflict once it is retracted."""
        workload = self.workload(workload_id)
        retraction = self.records.workload_retraction(workload_id)
        if retraction is not None:
            raise Conflict(
                f"workload {workload_id} was retracted at {retraction.at}"
                + (f" by {retraction.by}" if retraction.by else "")
                + f" ({retraction.reason}): it takes no new trial or estimate"
                + (f"; use {retraction.superseded_by}" if retraction.superseded_by else "")
            )
        return workload

    def retract_workload(
        self,
        workload_id: str,
        reason: str,
        by: str | None = None,
        superseded_by: str | None = None,
    ) -> tuple[Workload, Retraction]:
        """Mark the workload retracted (who, when, why; the workload that replaces it): it
        stays readable with its trials and estimates, and takes no new ones. Conflict when it
        was retracted before."""
        workload = self.workload(workload_id)
        if superseded_by is not None:
            if superseded_by == workload_id:
                raise DomainError("superseded_by: a workload cannot supersede itself")
            self.workload(superseded_by)
        retraction = Retraction(
            at=self.clock().isoformat(), by=by, reason=reason, superseded_by=superseded_by
        )
        if not self.records.retract_workload(workload_id, retraction):
            raise Conflict(f"workload {workload_id} was already retracted")
        return workload, retraction

    def workload_retraction(self, workload_id: str) -> Retraction | None:
        return self.records.workload_retraction(workload_id)

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
        """Write the trial record once with its "Trial Recorded" event (its workload's
        estimates refresh). True when this call wrote it, False when the trial id was recorded
        before (nothing written, nothing announced). `recorded_by`: the caller who imported it
        (None: ingested from its job's event). A record that does not validate whole raises
        pydantic's ValidationError naming the field (the API answers 422, an ingest rejects
        it)."""
        at = (recorded_at or self.clock()).isoformat()
        if trial.retracted is not None:
            raise DomainError(
                "retracted: trncost sets it when a trial is retracted; a record is recorded "
                "unretracted (POST /workloads/{id}/trials/{trial_id}/retract retracts one)"
            )
        # whatever built it (a request, a log parser, the ingest's model_copy), it is checked
        # whole here; notes trncost wrote itself are made plain and bounded first
        data = trial.model_dump(mode="json")
        data["notes"] = plain_notes(data.get("notes") or [])
        trial = TrialRun.model_validate(data)
        replaced = self._superseded(trial)
        events = []
        if self.outbox is not None:
            events.append(
                self.outbox.event(
                    DetailType.trial_recorded,
                    f"{trial.workload_id}\n{trial.trial_id}",
                    {
                        "workload_id": trial.workload_id,
                        "trial_id": trial.trial_id,
                        "phase": trial.phase.value,
                        "status": trial.status.value,
                        "source": source,
                        "outcome": "recorded",
                    },
                )
            )
        written = self.records.put_trial(trial, at, source, recorded_by, events)
        if not written:
            self._same_as_recorded(trial)
        if replaced is not None:  # also on a repeat whose retraction did not happen
            self._retract(
                replaced,
                f"superseded by the corrected record {trial.trial_id}",
                recorded_by,
                superseded_by=trial.trial_id,
            )
        if not written:
            return False
        if self.outbox is not None:
            self.outbox.deliver(events)  # never raises: the sweeper sends what is left
        return True

    def _superseded(self, trial: TrialRun) -> TrialRun | None:
        """The record `trial` corrects (`supersedes`), checked before anything is written:
        a trial of the same workload, not retracted already (unless by this very record: a
        repeat). None when it corrects none, or that retraction is done."""
        if trial.supersedes is None:
            return None
        if trial.supersedes == trial.trial_id:
            raise DomainError("supersedes: a trial cannot supersede itself", fields=["supersedes"])
        old = self.records.get_trial(trial.supersedes, trial.workload_id)
        if old is None:
            raise NotFound(
                f"supersedes: workload {trial.workload_id} has no trial {trial.supersedes}"
            )
        if old.retracted is None:
            return old
        if old.retracted.superseded_by == trial.trial_id:
            return None  # a repeat: already done
        raise Conflict(
            f"supersedes: trial {old.trial_id} was already retracted at {old.retracted.at} "
            f"({old.retracted.reason})",
            fields=["supersedes"],
        )

    def retract(
        self, workload_id: str, trial_id: str, reason: str, by: str | None = None
    ) -> TrialRun:
        """Retract the trial `trial_id` of `workload_id`: the record stays, marked with who,
        when and why, and the workload's estimates are recomputed without it. Conflict when it
        was retracted before; NotFound for an unknown workload or trial."""
        self.workload(workload_id)
        trial = self.trial(trial_id, workload_id)
        if trial.retracted is not None:
            raise Conflict(
                f"trial {trial_id} was already retracted at {trial.retracted.at} "
                f"({trial.retracted.reason})"
            )
        return self._retract(trial, reason, by)

    def _retract(
        self,
        trial: TrialRun,
        reason: str,
        by: str | None,
        superseded_by: str | None = None,
        attempts: int = 5,
    ) -> TrialRun:
        retraction = Retraction(
            at=self.clock().isoformat(), by=by, reason=reason, superseded_by=superseded_by
        )
        events = []
        if self.outbox is not None:  # announced like a new trial: the estimates refresh
            events.append(
                self.outbox.event(
                    DetailType.trial_recorded,
                    f"{trial.workload_id}\n{trial.trial_id}\nretracted",
                    {
                        "workload_id": trial.workload_id,
                        "trial_id": trial.trial_id,
                        "phase": trial.phase.value,
                        "status": trial.status.value,
                        "outcome": "retracted",
                        "reason": reason[:500],
                    },
                )
            )
        for _ in range(attempts):
            if self.records.retract_trial(trial, retraction, events):
                break
            current = self.records.get_trial(trial.trial_id, trial.workload_id)
            if current is None:
                raise NotFound(f"trial {trial.trial_id} not found")
            if current.retracted is not None:
                raise Conflict(f"trial {trial.trial_id} was already retracted")
            trial = current
        else:
            raise Conflict(f"trial {trial.trial_id} kept changing: try again")
        if self.outbox is not None:
            self.outbox.deliver(events)  # never raises: the sweeper sends what is left
        return trial.model_copy(update={"retracted": retraction})

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
        self.open_workload(workload_id)
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


def plain_notes(notes: Sequence[str]) -> list[str]:
    """Notes as a record may hold them: each plain (a control character written as its escape)
    and at most MAX_NOTE_CHARS long, at most MAX_TEXT_ITEMS of them (the last says how many
    more there were). A request's own notes are refused over these bounds (422); notes that
    trncost wrote from a job's logs are kept this way instead."""
    out: list[str] = []
    for note in notes:
        text = str(note)
        if unprintable(text, allow="\n\t") is not None:
            text = "".join(
                c if unprintable(c, allow="\n\t") is None else repr(c)[1:-1] for c in text
            )
        if len(text) > MAX_NOTE_CHARS:
            text = text[: MAX_NOTE_CHARS - 1] + "…"
        out.append(text)
    if len(out) > MAX_TEXT_ITEMS:
        more = len(out) - (MAX_TEXT_ITEMS - 1)
        out = [*out[: MAX_TEXT_ITEMS - 1], f"… and {more} more notes"]
    return out

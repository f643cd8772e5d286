"""A trial's own training logs → a trial record (the API's `POST /workloads/{id}/trials/import`,
and `trncost trial import`, which reads files itself and records through the same service).

The files are read each in its detected format (or the one asked for) into one timeline
(`trncost.metrics.logs`), the record is built by the record's own rules, and every measured
figure names its file, format and lines. What the logs lack stays not measured. A log in no
known format is refused (LogFormatError: 422, listing each format tried and why it did not
match); more text than LOG_IMPORT_MAX_BYTES is refused (PayloadTooLarge: 413).

The trial id defaults to one derived from the logs' content, so the same import sent twice
records once: the second answer is the first record (`recorded` false).

What the logs cannot say comes with the facts (`TrialFacts`): the precision, the parallelism
and the Neuron SDK version (the candidate's), the region, and an explicit quality mapping (the
log's `val_loss` read as the gate's `eval_loss`: never by guess). `explain` adds, for each
figure, the lines it came from and the rule that read them, and the lines skipped and why
(`metrics.logs.explain`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from trncost.errors import Conflict, DomainError, PayloadTooLarge
from trncost.metrics.logs import FORMATS
from trncost.metrics.logs.explain import explanation
from trncost.metrics.logs.scan import FileResult, Reader
from trncost.metrics.logs.timeline import Timeline
from trncost.metrics.logs.trial import LogTrial, trial_from_logs
from trncost.model import Phase, TimingScope, TrialRun, TrialStatus, Workload
from trncost.model.candidate import Parallelism, Precision
from trncost.services.trials import TrialService

LOG_IMPORT_MAX_BYTES = 5 * 2**20  # the log text of one API import (Lambda takes ≤ 6 MB)
LOG_IMPORT_MAX_FILES = 10

__all__ = ["LOG_IMPORT_MAX_BYTES", "LogImport", "LogImportService", "TrialFacts", "read_logs"]


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class TrialFacts:
    """What the logs cannot say about the trial: given by the caller."""

    phase: Phase
    instance_type: str
    instance_count: int
    region: str = "us-east-1"
    trial_id: str | None = None
    status: TrialStatus | None = None
    code_version: str | None = None
    dataset_id: str | None = None
    timing_scope: TimingScope | None = None
    global_batch_size: float | None = None
    seq_length: float | None = None
    format: str = "auto"
    precision: Precision | None = None
    parallelism: Parallelism | None = None
    neuron_sdk_version: str | None = None
    quality_metric: tuple[str, str] | None = None  # (the log's name, the gate's metric)


@dataclass(frozen=True)
class LogImport:
    """A trial record made from logs, and what reading them found."""

    trial: TrialRun
    files: list[FileResult]
    measured: list[str]
    not_measured: list[str]
    excluded: list[str]
    recorded: bool = False
    notes: list[str] = field(default_factory=list)
    explain: dict[str, object] | None = None


def read_logs(
    files: Sequence[tuple[str, bytes]], facts: TrialFacts
) -> tuple[Timeline, list[FileResult]]:
    """Every (name, content) read into one timeline, each file in its own format."""
    timeline = Timeline(global_batch=facts.global_batch_size, seq_length=facts.seq_length)
    reader = Reader(timeline, FORMATS, None if facts.format == "auto" else facts.format)
    return timeline, [reader.read_bytes(name, data) for name, data in files]


def default_trial_id(digest: str) -> str:
    return f"log-{digest[:16]}"


def _digest(files: Sequence[tuple[str, bytes]], facts: TrialFacts, workload_id: str) -> str:
    h = hashlib.sha256(f"{workload_id}|{facts.phase}|{facts.instance_type}|".encode())
    h.update(f"{facts.instance_count}|{facts.region}".encode())
    for name, data in files:
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


class LogImportService:
    def __init__(self, trials: TrialService, clock: Callable[[], datetime] = _now) -> None:
        self.trials = trials
        self.clock = clock

    def build(
        self,
        workload: Workload,
        timeline: Timeline,
        files: list[FileResult],
        facts: TrialFacts,
        digest: str,
    ) -> LogTrial:
        return trial_from_logs(
            timeline,
            files,
            workload,
            trial_id=facts.trial_id or default_trial_id(digest),
            phase=facts.phase,
            instance_type=facts.instance_type,
            instance_count=facts.instance_count,
            region=facts.region,
            imported_at=self.clock(),
            status=facts.status,
            code_version=facts.code_version,
            dataset_id=facts.dataset_id,
            timing_scope=facts.timing_scope,
            precision=facts.precision,
            parallelism=facts.parallelism,
            neuron_sdk_version=facts.neuron_sdk_version,
            quality_metric=facts.quality_metric,
        )

    def import_text(
        self,
        workload_id: str,
        files: Sequence[tuple[str, str]],
        facts: TrialFacts,
        *,
        dry_run: bool = False,
        explain: bool = False,
    ) -> LogImport:
        """The API's import: log texts (name, text), capped in size."""
        if not files:
            raise DomainError("files: give at least one log", fields=["files"])
        if len(files) > LOG_IMPORT_MAX_FILES:
            raise DomainError(f"files: at most {LOG_IMPORT_MAX_FILES} logs", fields=["files"])
        raw = [(name, text.encode("utf-8", "surrogatepass")) for name, text in files]
        size = sum(len(data) for _, data in raw)
        if size > LOG_IMPORT_MAX_BYTES:
            raise PayloadTooLarge(
                f"files: {size} bytes of log text, more than {LOG_IMPORT_MAX_BYTES}; import "
                "larger logs with `trncost trial import` (it streams them)",
                fields=["files"],
            )
        workload = (self.trials.workload if dry_run else self.trials.open_workload)(workload_id)
        timeline, results = read_logs(raw, facts)
        done = self.record(
            workload, timeline, results, facts, _digest(raw, facts, workload_id), dry_run=dry_run
        )
        if explain:
            done = replace(done, explain=explanation(timeline, results, done.trial))
        return done

    def record(
        self,
        workload: Workload,
        timeline: Timeline,
        files: list[FileResult],
        facts: TrialFacts,
        digest: str,
        *,
        dry_run: bool = False,
    ) -> LogImport:
        """Build the record and, unless a dry run, write it (once: the same logs again
        answer the record already written)."""
        built = self.build(workload, timeline, files, facts, digest)
        trial, recorded = built.trial, False
        if not dry_run:
            try:
                self.trials.import_trial(workload.workload_id, trial)
                recorded = True
            except Conflict:
                existing = self.trials.trial(trial.trial_id, workload.workload_id)
                if existing.model_dump(exclude={"notes"}) != trial.model_dump(exclude={"notes"}):
                    raise Conflict(
                        f"trial_id: trial {trial.trial_id} exists with other content",
                        fields=["trial_id"],
                    ) from None
                trial = existing
        return LogImport(
            trial=trial,
            files=files,
            measured=built.measured,
            not_measured=built.not_measured,
            excluded=built.excluded,
            recorded=recorded,
        )


def file_digest(
    names_and_hashes: Sequence[tuple[str, bytes]], facts: TrialFacts, workload_id: str
) -> str:
    """The content digest of files the caller hashed while streaming (the CLI)."""
    return _digest(names_and_hashes, facts, workload_id)

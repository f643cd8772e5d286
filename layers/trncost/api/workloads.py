"""Workloads, their trial records, and the ingests that could not become one."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from trncost.api.context import Cursor, Id, Limit, caller, router, services
from trncost.api.schemas import (
    LogFileView,
    Page,
    RejectedIngestView,
    TrialLogImportView,
    TrialView,
    WorkloadView,
)
from trncost.errors import InvalidInput
from trncost.ids import ID_MAX_LENGTH, ID_PATTERN
from trncost.model import TrialRun, Workload
from trncost.model.requests import RetractRequest, TrialLogImport
from trncost.services.trial_logs import TrialFacts

routes = router()
# A trial id is unique within its workload: name the workload to read that workload's trial
# (without it, the id's first record, whichever workload recorded it first).
WorkloadQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=ID_MAX_LENGTH,
        pattern=ID_PATTERN,
        description="the trial's workload (trial ids are per workload)",
    ),
]


# -- workloads --------------------------------------------------------------------------------
@routes.post("/workloads", tags=["workloads"], responses={201: {"description": "created"}})
def create_workload(workload: Workload) -> tuple[WorkloadView, int]:
    by = caller(routes)
    return WorkloadView(
        workload=services().trials.create_workload(workload, by), created_by=by
    ), 201


@routes.get("/workloads", tags=["workloads"])
def list_workloads(limit: Limit = 50, cursor: Cursor = None) -> Page[Workload]:
    page = services().trials.workloads(limit, cursor)
    return Page[Workload](items=page.items, next_cursor=page.cursor)


@routes.get("/workloads/<workload_id>", tags=["workloads"])
def get_workload(workload_id: Id) -> WorkloadView:
    trials = services().trials
    workload = trials.workload(workload_id)
    return WorkloadView(workload=workload, retracted=trials.workload_retraction(workload_id))


@routes.post("/workloads/<workload_id>/retract", tags=["workloads"])
def retract_workload(workload_id: Id, body: RetractRequest) -> WorkloadView:
    """Retract a workload: it stays readable, marked with who, when and why, and takes no new
    trial or estimate."""
    workload, retraction = services().trials.retract_workload(
        workload_id, body.reason, caller(routes), body.superseded_by
    )
    return WorkloadView(workload=workload, retracted=retraction)


# -- trials -----------------------------------------------------------------------------------
@routes.post("/workloads/<workload_id>/trials", tags=["trials"])
def import_trial(workload_id: Id, trial: TrialRun) -> tuple[TrialView, int]:
    by = caller(routes)
    imported = services().trials.import_trial(workload_id, trial, by)
    return TrialView(trial=imported, recorded_by=by), 201


@routes.post(
    "/workloads/<workload_id>/trials/import",
    tags=["trials"],
    responses={
        201: {"description": "recorded"},
        413: {"description": "more log text than the import takes"},
        422: {"description": "a log in no format trncost reads (each format tried, and why)"},
    },
)
def import_trial_logs(workload_id: Id, body: TrialLogImport) -> tuple[TrialLogImportView, int]:
    facts = TrialFacts(
        phase=body.phase,
        instance_type=body.instance_type,
        instance_count=body.instance_count,
        region=body.region,
        trial_id=body.trial_id,
        status=body.status,
        code_version=body.code_version,
        dataset_id=body.dataset_id,
        timing_scope=body.timing_scope,
        global_batch_size=body.global_batch_size,
        seq_length=body.seq_length,
        format=body.format,
        precision=body.precision,
        parallelism=body.parallelism,
        neuron_sdk_version=body.neuron_sdk_version,
        quality_metric=(
            None
            if body.quality_metric is None
            else (body.quality_metric.log_metric, body.quality_metric.gate_metric)
        ),
    )
    done = services().log_imports.import_text(
        workload_id,
        [(f.name, f.text) for f in body.files],
        facts,
        dry_run=body.dry_run,
        explain=body.explain,
    )
    view = TrialLogImportView(
        trial=done.trial,
        recorded=done.recorded,
        files=[LogFileView.model_validate(f, from_attributes=True) for f in done.files],
        measured=done.measured,
        not_measured=done.not_measured,
        excluded=done.excluded,
        explain=done.explain,
    )
    return view, 201 if done.recorded else 200


@routes.post("/workloads/<workload_id>/trials/<trial_id>/retract", tags=["trials"])
def retract_trial(workload_id: Id, trial_id: Id, body: RetractRequest) -> TrialView:
    """Retract a trial record: it stays, marked with who, when and why; every estimate of the
    workload is recomputed without it (admission `retracted`) and lists the change."""
    if body.superseded_by is not None:
        raise InvalidInput(
            "superseded_by: a trial is corrected by recording the corrected trial with "
            f'"supersedes": "{trial_id}"',
            fields=["superseded_by"],
        )
    retracted = services().trials.retract(workload_id, trial_id, body.reason, caller(routes))
    return TrialView(trial=retracted)


@routes.get("/workloads/<workload_id>/trials", tags=["trials"])
def list_trials(workload_id: Id, limit: Limit = 50, cursor: Cursor = None) -> Page[TrialRun]:
    page = services().trials.trials(workload_id, limit, cursor)
    return Page[TrialRun](items=page.items, next_cursor=page.cursor)


@routes.get("/trials/<trial_id>", tags=["trials"])
def get_trial(trial_id: Id, workload_id: WorkloadQuery = None) -> TrialView:
    return TrialView(trial=services().trials.trial(trial_id, workload_id))


@routes.get("/workloads/<workload_id>/trials/<trial_id>", tags=["trials"])
def get_workload_trial(workload_id: Id, trial_id: Id) -> TrialView:
    return TrialView(trial=services().trials.trial(trial_id, workload_id))


# -- ingest -----------------------------------------------------------------------------------
@routes.get("/ingest/rejected", tags=["trials"])
def rejected_ingests(limit: Limit = 50) -> Page[RejectedIngestView]:
    rejected = services().ingest.rejected(limit)
    items = [RejectedIngestView.model_validate(r, from_attributes=True) for r in rejected]
    return Page[RejectedIngestView](items=items)

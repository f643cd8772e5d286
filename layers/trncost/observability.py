"""Metric names and dimensions, defined once for the handlers, dashboards and alarms."""

from __future__ import annotations

from enum import StrEnum

NAMESPACE = "trncost"


class MetricName(StrEnum):
    price_snapshot_taken = "PriceSnapshotTaken"
    price_quotes = "PriceQuotes"
    price_quotes_pending = "PriceQuotesPending"
    price_quotes_rejected = "PriceQuotesRejected"
    price_list_calls = "PriceListCalls"
    price_snapshot_rejected_requests = "PriceSnapshotRequestsRejected"
    # age of the latest snapshot when a new one replaced it (its taken_at → the new taken_at)
    price_snapshot_age = "PriceSnapshotAgeSeconds"
    # the readiness watch (services/readiness.py): awaited prices or instance types that
    # appeared, and the estimates it re-ran for them
    readiness_items_appeared = "ReadinessItemsAppeared"
    readiness_estimates_rerun = "ReadinessEstimatesRerun"
    trials_ingested = "TrialsIngested"
    ingest_duplicates = "IngestDuplicates"
    ingests_rejected = "IngestsRejected"
    job_log_lines = "JobLogLinesReceived"  # lines the log subscription delivered
    estimates_refreshed = "EstimatesRefreshed"
    estimates_unchanged = "EstimatesUnchanged"
    # an estimate a refresh could not recompute (recorded with its reason; the others go on)
    estimate_refresh_failures = "EstimateRefreshFailures"
    estimates_computed = "EstimatesComputed"  # POST /workloads/{id}/estimates that made one
    # The trial steps function (lambdas/trial_steps) emits one of these, Count 1, when a plan
    # ends; the stage alarms on TrialPlansFailed (stacks/monitoring/alarms.py).
    trial_plans_failed = "TrialPlansFailed"  # failed, gate_failed, budget_cap, timeout
    trial_plans_succeeded = "TrialPlansSucceeded"  # completed
    # billed actuals (issue 27): the actuals Lambda's Cost Explorer pulls, and the ingest's
    # same-day SageMaker figures
    actuals_imported = "ActualsImported"  # an import that changed a billing period
    actuals_rows_matched = "ActualsRowsMatched"
    actuals_not_ready = "ActualsNotReady"  # Cost Explorer: the tag or its data not there yet
    actuals_recorded = "ActualsRecorded"  # a SageMaker job of an estimate, at its end
    # The outbox sweeper (lambdas/outbox): events it published, events EventBridge still
    # refused, and how old the oldest waiting event is (the stage alarms on that age).
    outbox_events_sent = "OutboxEventsSent"
    outbox_events_failed = "OutboxEventsFailed"
    outbox_oldest_age = "OutboxOldestEventAgeSeconds"


# The trial steps that end a plan, and what each of their outcomes counts as.
PLAN_ENDING_ACTIONS = ("record_outcome", "record_failure")
PLAN_SUCCEEDED = "completed"


def plan_ending_metric(action: object, status: object) -> MetricName | None:
    """The metric a trial step's result counts toward: None unless it ended the plan. Every
    ending but `completed` ends the execution in a Fail state, so it counts as failed."""
    if action not in PLAN_ENDING_ACTIONS or not isinstance(status, str):
        return None
    if status == PLAN_SUCCEEDED:
        return MetricName.trial_plans_succeeded
    return MetricName.trial_plans_failed

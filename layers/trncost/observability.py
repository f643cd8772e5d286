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
    trials_ingested = "TrialsIngested"
    ingest_duplicates = "IngestDuplicates"
    ingests_rejected = "IngestsRejected"
    estimates_refreshed = "EstimatesRefreshed"
    estimates_unchanged = "EstimatesUnchanged"
    # an estimate a refresh could not recompute (recorded with its reason; the others go on)
    estimate_refresh_failures = "EstimateRefreshFailures"
    estimates_computed = "EstimatesComputed"  # POST /workloads/{id}/estimates that made one
    # The trial workflow (issue 7) emits it, Count 1 per trial plan that ends failed; the
    # stage already alarms on it (stacks/monitoring.py).
    trial_plans_failed = "TrialPlansFailed"

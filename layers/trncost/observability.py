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
    trials_ingested = "TrialsIngested"
    ingest_duplicates = "IngestDuplicates"
    ingests_rejected = "IngestsRejected"
    estimates_refreshed = "EstimatesRefreshed"
    estimates_unchanged = "EstimatesUnchanged"

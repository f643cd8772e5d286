"""The trncost table, defined once. CDK builds it from this module (stacks/data.py), the local
runtime and the tests create it with `create_table_kwargs()`; repositories use the key helpers.

Single-table design, string keys (pk, sk; gsi1pk, gsi1sk on listable items):

    snapshot meta     pk SNAPSHOT#<id>  sk META               gsi1 SNAPSHOTS / <taken_at>#<id>
    price quote       pk SNAPSHOT#<id>  sk QUOTE#<price key>
    snapshot notes    pk SNAPSHOT#<id>  sk NOTES#<rejected|unmatched>#<0001>   (chunks)
    latest pointer    pk PRICES         sk LATEST
    workload          pk WORKLOAD#<id>  sk WORKLOAD           gsi1 WORKLOADS / <created_at>#<id>
    trial record      pk TRIAL#<id>     sk WORKLOAD#<wid>     gsi1 WORKLOAD#<wid>#TRIALS / <at>#<id>
                      (trial ids are per workload; records written before issue 13 have
                      sk TRIAL, one id across workloads: they are still read, no migration)
    estimate          pk ESTIMATE#<id>  sk DEF                gsi1 WORKLOAD#<wid>#ESTIMATES / <id>
                      (`latest`: the latest version's headline, what a list page reads)
    estimate version  pk ESTIMATE#<id>  sk V#<000001>
    estimate standing pk ESTIMATE#<id>  sk STANDING   (rank, break-even: stored when a version is)
    refresh failure   pk ESTIMATE#<id>  sk F#<hash of what triggered the refresh>
    capacity plan     pk ESTIMATE#<id>  sk CAPACITY#<000001>   (store/capacity.py)
    readiness watch   pk WATCH  sk READINESS                   (store/readiness.py)
    comparison        pk COMPARISON#<id>  sk COMPARISON  gsi1 WORKLOAD#<wid>#COMPARISONS / <at>#<id>
    ingest claim      pk INGEST#<job>#<status>  sk CLAIM
    rejected ingest   pk INGEST_REJECTED        sk <at>#<event id>
    actuals delivery  pk ACTUALS#<source>#<period>  sk CURRENT   (the delivery in force)
    billed actuals    pk ESTIMATE#<id>  sk ACTUALS#<source>#<period>#<delivery>
                      gsi1 ACTUALS / <wid>#<id>#<source>#<period>#<delivery>
                      (one estimate's billed lines of one billing period from one source, as one
                      delivery brought them; only the delivery its CURRENT item names is read)
    job log part      pk JOBLOG#<group>#<stream>  sk PART#<first event id>#<n>   (expires_at)
    job log counts    pk JOBLOG#<group>#<stream>  sk COUNTS                      (expires_at)

`expires_at` (epoch seconds) is the table's TTL attribute: a job's log parts go after
JOB_LOG_TTL_S.
    idempotency key   pk IDEMPOTENCY#<hash of caller, route, key>  sk REQUEST  (TTL expires_at)
    outbox event      pk OUTBOX#<event id>      sk EVENT  gsi1 OUTBOX / <created_at>#<event id>
                      (an event written with its record, until EventBridge takes it:
                      trncost.store.outbox)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class KeyAttr:
    name: str
    type: str = "S"  # DynamoDB scalar type


@dataclass(frozen=True)
class GlobalIndex:
    name: str
    partition_key: KeyAttr
    sort_key: KeyAttr


@dataclass(frozen=True)
class TableSchema:
    partition_key: KeyAttr
    sort_key: KeyAttr
    indexes: tuple[GlobalIndex, ...]
    billing_mode: str = "PAY_PER_REQUEST"
    ttl_attribute: str | None = None  # epoch seconds after which DynamoDB deletes the item

    def create_table_kwargs(self, table_name: str) -> dict[str, Any]:
        """Arguments for boto3 `create_table` (moto, the local runtime, tests)."""
        attrs = {self.partition_key, self.sort_key}
        for index in self.indexes:
            attrs |= {index.partition_key, index.sort_key}
        return {
            "TableName": table_name,
            "BillingMode": self.billing_mode,
            "KeySchema": [
                {"AttributeName": self.partition_key.name, "KeyType": "HASH"},
                {"AttributeName": self.sort_key.name, "KeyType": "RANGE"},
            ],
            "AttributeDefinitions": [
                {"AttributeName": a.name, "AttributeType": a.type}
                for a in sorted(attrs, key=lambda a: a.name)
            ],
            "GlobalSecondaryIndexes": [
                {
                    "IndexName": index.name,
                    "KeySchema": [
                        {"AttributeName": index.partition_key.name, "KeyType": "HASH"},
                        {"AttributeName": index.sort_key.name, "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "ALL"},
                }
                for index in self.indexes
            ],
        }


TTL_ATTRIBUTE = "expires_at"
TABLE = TableSchema(
    partition_key=KeyAttr("pk"),
    sort_key=KeyAttr("sk"),
    indexes=(GlobalIndex("gsi1", KeyAttr("gsi1pk"), KeyAttr("gsi1sk")),),
    ttl_attribute=TTL_ATTRIBUTE,  # job log parts and Idempotency-Key records
)

# Key builders: the only place item keys are spelled.
SNAPSHOT_META_SK = "META"
SNAPSHOTS_GSI_PK = "SNAPSHOTS"
PRICES_PK = "PRICES"
LATEST_SK = "LATEST"


def snapshot_pk(snapshot_id: str) -> str:
    return f"SNAPSHOT#{snapshot_id}"


def quote_sk(price_key: str) -> str:
    return f"QUOTE#{price_key}"


QUOTE_SK_PREFIX = "QUOTE#"
NOTES_SK_PREFIX = "NOTES#"


def notes_sk(kind: str, chunk: int) -> str:
    """A chunk of a snapshot's rejected or unmatched list (items stay under 400 KB)."""
    return f"{NOTES_SK_PREFIX}{kind}#{chunk:04d}"


WORKLOAD_SK = "WORKLOAD"
WORKLOADS_GSI_PK = "WORKLOADS"
TRIAL_SK = "TRIAL"
ESTIMATE_DEF_SK = "DEF"
STANDING_SK = "STANDING"
CLAIM_SK = "CLAIM"
REJECTED_INGEST_PK = "INGEST_REJECTED"


def workload_pk(workload_id: str) -> str:
    return f"WORKLOAD#{workload_id}"


def trial_pk(trial_id: str) -> str:
    return f"TRIAL#{trial_id}"


def trial_sk(workload_id: str) -> str:
    """A trial id is unique within its workload: the workload is part of the key."""
    return f"WORKLOAD#{workload_id}"


LEGACY_TRIAL_SK = TRIAL_SK  # the sort key of trial records written before issue 13


def workload_trials_gsi_pk(workload_id: str) -> str:
    return f"WORKLOAD#{workload_id}#TRIALS"


def estimate_pk(estimate_id: str) -> str:
    return f"ESTIMATE#{estimate_id}"


def workload_estimates_gsi_pk(workload_id: str) -> str:
    return f"WORKLOAD#{workload_id}#ESTIMATES"


COMPARISON_SK = "COMPARISON"


def comparison_pk(comparison_id: str) -> str:
    return f"COMPARISON#{comparison_id}"


def workload_comparisons_gsi_pk(workload_id: str) -> str:
    return f"WORKLOAD#{workload_id}#COMPARISONS"


def version_sk(version: int) -> str:
    return f"V#{version:06d}"


REFRESH_FAILURE_PREFIX = "F#"


def refresh_failure_sk(trigger: str) -> str:
    """One item per (estimate, trigger): a redelivered event overwrites its own failure."""
    return REFRESH_FAILURE_PREFIX + hashlib.sha256(trigger.encode()).hexdigest()[:24]


def claim_pk(dedup_key: str) -> str:
    return f"INGEST#{dedup_key}"


# -- billed actuals (issue 27) ---------------------------------------------------------------
ACTUALS_CURRENT_SK = "CURRENT"
ACTUALS_SK_PREFIX = "ACTUALS#"
ACTUALS_GSI_PK = "ACTUALS"


def actuals_delivery_pk(source: str, period: str) -> str:
    """The (source, billing period) whose CURRENT item names the delivery in force."""
    return f"ACTUALS#{source}#{period}"


def actuals_sk(source: str, period: str, delivery_id: str) -> str:
    return f"{ACTUALS_SK_PREFIX}{source}#{period}#{delivery_id}"


def actuals_gsi_sk(
    workload_id: str, estimate_id: str, source: str, period: str, delivery: str
) -> str:
    return f"{workload_id}#{estimate_id}#{source}#{period}#{delivery}"


JOB_LOG_PART_PREFIX = "PART#"
JOB_LOG_COUNTS_SK = "COUNTS"


def job_log_pk(group: str, stream: str) -> str:
    return f"JOBLOG#{group}#{stream}"


def job_log_part_sk(first_event_id: str, piece: int) -> str:
    """Parts sort in event order: CloudWatch event ids are equal-length decimal strings."""
    return f"{JOB_LOG_PART_PREFIX}{first_event_id}#{piece:03d}"

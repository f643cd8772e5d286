"""Workloads, trial records and estimate versions in DynamoDB.

Every write that a retry or a race could repeat is conditional: a workload or trial id is
written once; an estimate version number is taken once (attribute_not_exists), so concurrent
refreshes produce strictly increasing versions and none is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from boto3.dynamodb.conditions import Key
from pydantic import TypeAdapter, ValidationError

from trncost.errors import Conflict, first_validation_error
from trncost.model import Decision, Estimate, Range, Retraction, TrialRun, Workload
from trncost.model.analysis import CheckpointAdvice
from trncost.model.changes import FigureChange
from trncost.model.records import (
    EstimateDefinition,
    EstimateVersion,
    Page,
    RefreshFailure,
    Standing,
    UnreadableDefinition,
    VersionSummary,
)
from trncost.store.base import (
    Repository,
    condition_cancelled,
    conditional_failed,
    decode_cursor,
    encode_cursor,
)
from trncost.store.outbox import OutboxEvent
from trncost.store.schema import (
    ESTIMATE_DEF_SK,
    LEGACY_TRIAL_SK,
    REFRESH_FAILURE_PREFIX,
    STANDING_SK,
    TABLE,
    WORKLOAD_SK,
    WORKLOADS_GSI_PK,
    estimate_pk,
    refresh_failure_sk,
    trial_pk,
    trial_sk,
    version_sk,
    workload_estimates_gsi_pk,
    workload_pk,
    workload_trials_gsi_pk,
)

GSI = TABLE.indexes[0].name
_CHANGES = TypeAdapter(list[FigureChange])


def _changes(item: dict[str, Any]) -> list[FigureChange]:
    """A stored version's changes (versions stored before they were kept have none)."""
    raw = item.get("changes")
    return _CHANGES.validate_json(raw) if raw else []


def _definition(item: dict[str, Any]) -> EstimateDefinition | UnreadableDefinition:
    """A stored definition, or why it no longer validates."""
    try:
        return EstimateDefinition.model_validate_json(item["definition"])
    except ValidationError as exc:
        eid = str(item.get("gsi1sk") or item.get("pk", "")).removeprefix("ESTIMATE#")
        return UnreadableDefinition(eid, f"stored definition: {first_validation_error(exc)[1]}")


class RecordStore(Repository):
    # -- workloads -------------------------------------------------------------------------
    def put_workload(
        self, workload: Workload, created_at: str, created_by: str | None = None
    ) -> None:
        item = {
            "pk": workload_pk(workload.workload_id),
            "sk": WORKLOAD_SK,
            "gsi1pk": WORKLOADS_GSI_PK,
            "gsi1sk": f"{created_at}#{workload.workload_id}",
            "created_at": created_at,
            "workload": workload.model_dump_json(),
        }
        if created_by:
            item["created_by"] = created_by
        ok = self.put_new(item)
        if not ok:
            raise Conflict(f"workload {workload.workload_id} exists")

    def get_workload(self, workload_id: str) -> Workload | None:
        item = self.item(workload_pk(workload_id), WORKLOAD_SK)
        return Workload.model_validate_json(item["workload"]) if item else None

    def workload_retraction(self, workload_id: str) -> Retraction | None:
        """Why the workload was retracted (None: it was not, or there is no such workload)."""
        item = self.item(workload_pk(workload_id), WORKLOAD_SK)
        raw = item.get("retraction") if item else None
        return Retraction.model_validate_json(raw) if raw else None

    def retract_workload(self, workload_id: str, retraction: Retraction) -> bool:
        """Mark the workload retracted, once: False when it is gone or already retracted."""
        from botocore.exceptions import ClientError

        try:
            self.table.update_item(
                Key={"pk": workload_pk(workload_id), "sk": WORKLOAD_SK},
                UpdateExpression="SET retraction = :r",
                ConditionExpression="attribute_exists(pk) AND attribute_not_exists(retraction)",
                ExpressionAttributeValues={":r": retraction.model_dump_json()},
            )
        except ClientError as exc:
            if conditional_failed(exc):
                return False
            raise
        return True

    def _workloads_page(
        self, limit: int, cursor: str | None, **kwargs: Any
    ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """One page of the workloads' index entries, newest first."""
        return self.query_page(
            limit,
            decode_cursor(cursor, gsi1pk=WORKLOADS_GSI_PK),
            IndexName=GSI,
            KeyConditionExpression=Key("gsi1pk").eq(WORKLOADS_GSI_PK),
            ScanIndexForward=False,
            **kwargs,
        )

    def list_workloads(self, limit: int = 50, cursor: str | None = None) -> Page:
        items, last = self._workloads_page(limit, cursor)
        return Page(
            [Workload.model_validate_json(i["workload"]) for i in items], encode_cursor(last)
        )

    def workload_ids(
        self, limit: int = 100, cursor: str | None = None
    ) -> tuple[list[str], str | None]:
        """One page of workload ids, newest first, without reading the workloads themselves
        (a refresh reads each on its own)."""
        items, last = self._workloads_page(
            limit, cursor, ProjectionExpression="pk, sk, gsi1pk, gsi1sk"
        )
        return [str(i["pk"]).removeprefix("WORKLOAD#") for i in items], encode_cursor(last)

    # -- trials ----------------------------------------------------------------------------
    def put_trial(
        self,
        trial: TrialRun,
        recorded_at: str,
        source: str,
        recorded_by: str | None = None,
        events: Sequence[OutboxEvent] = (),
    ) -> bool:
        """Write a trial record once per (workload, trial id), with the outbox `events` that
        announce it in the same transaction. False when that workload already has a record
        with that trial id (nothing written; read it with `get_trial` to compare).
        `recorded_by`: the caller who imported it (None: ingested from its job's event)."""
        legacy = self.item(trial_pk(trial.trial_id), LEGACY_TRIAL_SK)
        if legacy is not None and _trial_of(legacy).workload_id == trial.workload_id:
            return False  # recorded before trial ids were per workload
        item = {
            "pk": trial_pk(trial.trial_id),
            "sk": trial_sk(trial.workload_id),
            "gsi1pk": workload_trials_gsi_pk(trial.workload_id),
            "gsi1sk": f"{recorded_at}#{trial.trial_id}",
            "recorded_at": recorded_at,
            "source": source,
            "trial": trial.model_dump_json(),
        }
        if recorded_by:
            item["recorded_by"] = recorded_by
        if not events:
            return self.put_new(item)
        return self.put_together(
            [(item, "attribute_not_exists(pk)"), *((e.item(), None) for e in events)]
        )

    def retract_trial(
        self, trial: TrialRun, retraction: Retraction, events: Sequence[OutboxEvent] = ()
    ) -> bool:
        """Mark the stored record of `trial` retracted (the record stays, with who, when and
        why), with the outbox `events` that announce it in the same transaction. Conditional
        on the record being exactly `trial` as read: False when it changed meanwhile or is gone
        (read it again)."""
        from botocore.exceptions import ClientError

        key = {"pk": trial_pk(trial.trial_id), "sk": trial_sk(trial.workload_id)}
        if self.item(key["pk"], key["sk"]) is None:
            key["sk"] = LEGACY_TRIAL_SK  # recorded before trial ids were per workload
        marked = trial.model_copy(update={"retracted": retraction})
        update = {
            "Key": key,
            "UpdateExpression": "SET trial = :new, retracted_at = :at",
            "ConditionExpression": "trial = :old",
            "ExpressionAttributeValues": {
                ":new": marked.model_dump_json(),
                ":old": trial.model_dump_json(),
                ":at": retraction.at,
            },
        }
        try:
            if not events:
                self.table.update_item(**update)
                return True
            self.table.meta.client.transact_write_items(
                TransactItems=[
                    {"Update": {"TableName": self.table.name, **update}},
                    *({"Put": {"TableName": self.table.name, "Item": e.item()}} for e in events),
                ]
            )
        except ClientError as exc:
            if conditional_failed(exc) or condition_cancelled(exc):
                return False
            raise
        return True

    def get_trial(self, trial_id: str, workload_id: str | None = None) -> TrialRun | None:
        """The trial `trial_id` of `workload_id`; without a workload, the first record of that
        id (the earliest recorded: a later trial of the same id in another workload cannot
        take its place or make it unreadable; name the workload to read that one)."""
        if workload_id is not None:
            item = self.item(trial_pk(trial_id), trial_sk(workload_id))
            if item is None:
                legacy = self.item(trial_pk(trial_id), LEGACY_TRIAL_SK)
                if legacy is not None and _trial_of(legacy).workload_id == workload_id:
                    item = legacy
            return _trial_of(item) if item else None
        items = self.query_all(
            KeyConditionExpression=Key("pk").eq(trial_pk(trial_id)), ConsistentRead=True
        )
        recorded = sorted(
            (i for i in items if i.get("trial")),
            key=lambda i: (str(i.get("recorded_at", "")), str(i["sk"])),
        )
        return _trial_of(recorded[0]) if recorded else None

    def list_trials(self, workload_id: str, limit: int = 50, cursor: str | None = None) -> Page:
        items, last = self.query_page(
            limit,
            decode_cursor(cursor, gsi1pk=workload_trials_gsi_pk(workload_id)),
            IndexName=GSI,
            KeyConditionExpression=Key("gsi1pk").eq(workload_trials_gsi_pk(workload_id)),
        )
        return Page([TrialRun.model_validate_json(i["trial"]) for i in items], encode_cursor(last))

    def all_trials(self, workload_id: str) -> list[TrialRun]:
        items = self.query_all(
            IndexName=GSI,
            KeyConditionExpression=Key("gsi1pk").eq(workload_trials_gsi_pk(workload_id)),
        )
        return [TrialRun.model_validate_json(i["trial"]) for i in items]

    def trials_recorded_by(self, workload_id: str, at: str) -> list[TrialRun]:
        """The workload's trials recorded at or before `at` (ISO 8601, as stored): the
        evidence an estimate version made at `at` had."""
        items = self.query_all(
            IndexName=GSI,
            KeyConditionExpression=Key("gsi1pk").eq(workload_trials_gsi_pk(workload_id))
            & Key("gsi1sk").lte(f"{at}#\uffff"),
        )
        return [TrialRun.model_validate_json(i["trial"]) for i in items]

    # -- estimates -------------------------------------------------------------------------
    def put_estimate_definition(self, definition: EstimateDefinition) -> None:
        if not self.put_new(_definition_item(definition)):
            raise Conflict(f"estimate {definition.estimate_id} exists")

    def put_estimate(
        self,
        definition: EstimateDefinition,
        first: EstimateVersion,
        summary: VersionSummary | None = None,
    ) -> None:
        """A new estimate: its definition (with the first version's headline, `summary`, what a
        list page reads) and its first version in one transaction, so a definition is never
        stored without a version to read (Conflict if the id is taken)."""
        definition_item = _definition_item(definition)
        if summary is not None:
            definition_item |= {"latest": summary.model_dump_json(), "latest_version": 1}
        written = self.put_together(
            [
                (definition_item, "attribute_not_exists(pk)"),
                (_version_item(first), "attribute_not_exists(pk)"),
            ]
        )
        if not written:
            raise Conflict(f"estimate {definition.estimate_id} exists")

    def get_estimate_definition(self, estimate_id: str) -> EstimateDefinition | None:
        item = self.item(estimate_pk(estimate_id), ESTIMATE_DEF_SK)
        return EstimateDefinition.model_validate_json(item["definition"]) if item else None

    def list_estimates(self, workload_id: str, limit: int = 50, cursor: str | None = None) -> Page:
        """One page of the workload's estimates, in estimate id order: each item a pair
        (definition or UnreadableDefinition, its latest version's headline or None when it was
        stored before headlines were kept). One query, whatever the workload's size."""
        gsi1pk = workload_estimates_gsi_pk(workload_id)
        items, last = self.query_page(
            limit,
            decode_cursor(cursor, gsi1pk=gsi1pk),
            IndexName=GSI,
            KeyConditionExpression=Key("gsi1pk").eq(gsi1pk),
        )
        return Page([(_definition(i), _summary(i)) for i in items], encode_cursor(last))

    def summaries(self, workload_id: str) -> list[tuple[str, VersionSummary | None]]:
        """Every estimate of the workload: its id and its latest version's headline (None:
        stored before headlines were kept), without the definitions."""
        items = self.query_all(
            IndexName=GSI,
            KeyConditionExpression=Key("gsi1pk").eq(workload_estimates_gsi_pk(workload_id)),
            ProjectionExpression="pk, latest",
        )
        return [(str(i["pk"]).removeprefix("ESTIMATE#"), _summary(i)) for i in items]

    def set_summary(self, estimate_id: str, summary: VersionSummary) -> bool:
        """Keep `summary` as the estimate's latest headline unless a later version's is kept
        already (versions may be stored out of order by concurrent refreshes)."""
        from botocore.exceptions import ClientError

        try:
            self.table.update_item(
                Key={"pk": estimate_pk(estimate_id), "sk": ESTIMATE_DEF_SK},
                UpdateExpression="SET latest = :s, latest_version = :v",
                ConditionExpression="attribute_exists(pk) AND "
                "(attribute_not_exists(latest_version) OR latest_version < :v)",
                ExpressionAttributeValues={":s": summary.model_dump_json(), ":v": summary.version},
            )
        except ClientError as exc:
            if conditional_failed(exc):
                return False
            raise
        return True

    def summary_version(self, estimate_id: str) -> int:
        """The version whose headline the definition item keeps (0: none kept)."""
        found = self.table.get_item(
            Key={"pk": estimate_pk(estimate_id), "sk": ESTIMATE_DEF_SK},
            ProjectionExpression="latest_version",
            ConsistentRead=True,
        ).get("Item")
        return int(found["latest_version"]) if found and "latest_version" in found else 0

    def put_standings(self, standings: list[Standing]) -> None:
        """Store each estimate's standing (batched writes; each replaces the one before)."""
        with self.table.batch_writer() as batch:
            for st in standings:
                batch.put_item(
                    Item={
                        "pk": estimate_pk(st.estimate_id),
                        "sk": STANDING_SK,
                        "standing": st.model_dump_json(),
                    }
                )

    def get_standing(self, estimate_id: str) -> Standing | None:
        item = self.item(estimate_pk(estimate_id), STANDING_SK)
        return Standing.model_validate_json(item["standing"]) if item else None

    def get_standings(self, estimate_ids: list[str]) -> dict[str, Standing]:
        """The standings of `estimate_ids` (at most 100: one BatchGetItem, its unprocessed
        keys asked again)."""
        keys = [{"pk": estimate_pk(e), "sk": STANDING_SK} for e in estimate_ids]
        out: dict[str, Standing] = {}
        client = self.table.meta.client
        while keys:
            got = client.batch_get_item(RequestItems={self.table.name: {"Keys": keys[:100]}})
            for item in got.get("Responses", {}).get(self.table.name, []):
                st = Standing.model_validate_json(item["standing"])
                out[st.estimate_id] = st
            left = got.get("UnprocessedKeys", {}).get(self.table.name, {}).get("Keys", [])
            keys = left + keys[100:]
        return out

    def estimate_definitions(self, workload_id: str) -> list[EstimateDefinition]:
        items = self.query_all(
            IndexName=GSI,
            KeyConditionExpression=Key("gsi1pk").eq(workload_estimates_gsi_pk(workload_id)),
        )
        return [EstimateDefinition.model_validate_json(i["definition"]) for i in items]

    def readable_definitions(
        self, workload_id: str
    ) -> list[EstimateDefinition | UnreadableDefinition]:
        """Every estimate definition of the workload, each read on its own: one that no longer
        validates comes back as an UnreadableDefinition with the reason."""
        items = self.query_all(
            IndexName=GSI,
            KeyConditionExpression=Key("gsi1pk").eq(workload_estimates_gsi_pk(workload_id)),
        )
        return [_definition(item) for item in items]

    # -- refresh failures ------------------------------------------------------------------
    def put_refresh_failure(self, failure: RefreshFailure) -> None:
        """Keep why a refresh of this estimate failed (the latest per trigger)."""
        self.table.put_item(
            Item={
                "pk": estimate_pk(failure.estimate_id),
                "sk": refresh_failure_sk(failure.trigger),
                "at": failure.at,
                "trigger": failure.trigger,
                "reason": failure.reason[:2000],
            }
        )

    def refresh_failures(self, estimate_id: str) -> list[RefreshFailure]:
        """The estimate's refresh failures, newest first."""
        items = self.query_all(
            KeyConditionExpression=Key("pk").eq(estimate_pk(estimate_id))
            & Key("sk").begins_with(REFRESH_FAILURE_PREFIX),
            ConsistentRead=True,
        )
        failures = [
            RefreshFailure(estimate_id, str(i["at"]), str(i["trigger"]), str(i["reason"]))
            for i in items
        ]
        return sorted(failures, key=lambda f: f.at, reverse=True)

    def latest_version_number(self, estimate_id: str) -> int:
        page = self.table.query(
            KeyConditionExpression=Key("pk").eq(estimate_pk(estimate_id))
            & Key("sk").begins_with("V#"),
            ScanIndexForward=False,
            Limit=1,
            ConsistentRead=True,
        )
        items = page.get("Items", [])
        return int(items[0]["version"]) if items else 0

    def put_version(self, version: EstimateVersion, events: Sequence[OutboxEvent] = ()) -> bool:
        """Write exactly this version number, with the outbox `events` that announce it in the
        same transaction; False when the number is already taken (nothing written)."""
        if not events:
            return self.put_new(_version_item(version))
        return self.put_together(
            [
                (_version_item(version), "attribute_not_exists(pk)"),
                *((e.item(), None) for e in events),
            ]
        )

    def add_version(
        self,
        estimate_id: str,
        estimate: Estimate,
        created_at: str,
        reason: str,
        fingerprint: str,
        attempts: int = 20,
        known_latest: int | None = None,
        created_by: str | None = None,
        estimate_range: Range | None = None,
        checkpoint: CheckpointAdvice | None = None,
        decision: Decision | None = None,
    ) -> EstimateVersion:
        """Store `estimate` (and its range, checkpoint advice and decision) as the next version.
        A race for a number retries with the next. `known_latest` saves the first lookup when
        the caller knows the latest number."""
        for attempt in range(attempts):
            if attempt == 0 and known_latest is not None:
                number = known_latest + 1
            else:
                number = self.latest_version_number(estimate_id) + 1
            version = EstimateVersion(
                estimate_id=estimate_id,
                version=number,
                created_at=created_at,
                reason=reason,
                fingerprint=fingerprint,
                estimate=estimate,
                created_by=created_by,
                range=estimate_range,
                checkpoint=checkpoint,
                decision=decision,
            )
            if self.put_version(version):
                return version
        raise RuntimeError(f"could not take a version number for estimate {estimate_id}")

    def get_version(self, estimate_id: str, version: int | None = None) -> EstimateVersion | None:
        number = version or self.latest_version_number(estimate_id)
        item = self.item(estimate_pk(estimate_id), version_sk(number)) if number else None
        if not item:
            return None
        return EstimateVersion(
            estimate_id=estimate_id,
            version=int(item["version"]),
            created_at=item["created_at"],
            reason=item["reason"],
            fingerprint=item["fingerprint"],
            estimate=Estimate.model_validate_json(item["estimate"]),
            created_by=item.get("created_by"),
            changes=_changes(item),
            range=Range.model_validate_json(item["range"]) if item.get("range") else None,
            checkpoint=(
                CheckpointAdvice.model_validate_json(item["checkpoint"])
                if item.get("checkpoint")
                else None
            ),
            decision=(
                Decision.model_validate_json(item["decision"]) if item.get("decision") else None
            ),
        )

    def list_versions(self, estimate_id: str) -> list[dict[str, Any]]:
        items = self.query_all(
            KeyConditionExpression=Key("pk").eq(estimate_pk(estimate_id))
            & Key("sk").begins_with("V#"),
            ConsistentRead=True,
        )
        return [
            {
                "version": int(i["version"]),
                "created_at": i["created_at"],
                "reason": i["reason"],
                "changes": _changes(i),
            }
            for i in items
        ]


def _definition_item(definition: EstimateDefinition) -> dict[str, Any]:
    return {
        "pk": estimate_pk(definition.estimate_id),
        "sk": ESTIMATE_DEF_SK,
        "gsi1pk": workload_estimates_gsi_pk(definition.workload_id),
        "gsi1sk": definition.estimate_id,
        "definition": definition.model_dump_json(),
    }


def _version_item(version: EstimateVersion) -> dict[str, Any]:
    return {
        "pk": estimate_pk(version.estimate_id),
        "sk": version_sk(version.version),
        "version": version.version,
        "created_at": version.created_at,
        "reason": version.reason,
        "fingerprint": version.fingerprint,
        "estimate": version.estimate.model_dump_json(),
        **({"created_by": version.created_by} if version.created_by else {}),
        **({"range": version.range.model_dump_json()} if version.range else {}),
        **({"checkpoint": version.checkpoint.model_dump_json()} if version.checkpoint else {}),
        **({"decision": version.decision.model_dump_json()} if version.decision else {}),
        "changes": _CHANGES.dump_json(version.changes).decode(),
    }


def _summary(item: dict[str, Any]) -> VersionSummary | None:
    """The latest version's headline kept on a definition item (None: none kept, or one that
    no longer validates: the list then reads the version itself)."""
    raw = item.get("latest")
    if not raw:
        return None
    try:
        return VersionSummary.model_validate_json(raw)
    except ValidationError:
        return None


def _trial_of(item: dict[str, Any]) -> TrialRun:
    return TrialRun.model_validate_json(item["trial"])

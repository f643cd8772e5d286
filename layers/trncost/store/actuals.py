"""Billed actuals in DynamoDB: each (source, billing period) replaced whole, atomically, by each
delivery.

AWS gives no line id that lasts from one delivery to the next (CUR's identity_line_item_id
"cannot identify a line across reports"), and it rewrites a billing period's data for weeks
after the period ends. So a delivery is the unit: its groups (one estimate's lines each) are
written under the delivery's id, then the period's CURRENT item is switched to that id in one
conditional write, then the groups of the delivery it replaced are deleted. A reader only
reads the groups of the delivery CURRENT names: before the switch it sees the old delivery
whole, after it the new one whole. The delivery id is a hash of what it holds, so a repeated
file is the same delivery: nothing is written.
"""

from __future__ import annotations

from typing import Any

from boto3.dynamodb.conditions import Attr, Key

from trncost.model.actuals import BillGroup, StoredGroup
from trncost.store.base import Repository, conditional_failed
from trncost.store.schema import (
    ACTUALS_CURRENT_SK,
    ACTUALS_GSI_PK,
    ACTUALS_SK_PREFIX,
    TABLE,
    actuals_delivery_pk,
    actuals_gsi_sk,
    actuals_sk,
    estimate_pk,
)

GSI = TABLE.indexes[0].name


class ActualsStore(Repository):
    # -- deliveries ----------------------------------------------------------------------------
    def current(self, source: str, period: str) -> dict[str, Any] | None:
        """The delivery in force for (source, period): delivery_id, estimate_ids,
        imported_at, imported_by; None before the first."""
        return self.item(actuals_delivery_pk(source, period), ACTUALS_CURRENT_SK)

    def put_groups(
        self, groups: list[tuple[BillGroup, str]], delivery_id: str, imported_at: str
    ) -> None:
        """Write a delivery's groups (each with its estimate's workload id), not yet in force."""
        for group, workload_id in groups:
            self.table.put_item(
                Item={
                    "pk": estimate_pk(group.estimate_id),
                    "sk": actuals_sk(group.source, group.period, delivery_id),
                    "gsi1pk": ACTUALS_GSI_PK,
                    "gsi1sk": actuals_gsi_sk(
                        workload_id, group.estimate_id, group.source, group.period, delivery_id
                    ),
                    "delivery_id": delivery_id,
                    "imported_at": imported_at,
                    "workload_id": workload_id,
                    "group": group.model_dump_json(),
                }
            )

    def switch(
        self,
        source: str,
        period: str,
        *,
        delivery_id: str,
        estimate_ids: list[str],
        imported_at: str,
        imported_by: str | None,
        replacing: str | None,
    ) -> bool:
        """Put the delivery in force, if the one in force is still `replacing` (None: none
        yet). False when another import switched it meanwhile."""
        item = {
            "pk": actuals_delivery_pk(source, period),
            "sk": ACTUALS_CURRENT_SK,
            "source": source,
            "period": period,
            "delivery_id": delivery_id,
            "estimate_ids": estimate_ids,
            "imported_at": imported_at,
            **({"imported_by": imported_by} if imported_by else {}),
        }
        condition = (
            Attr("pk").not_exists() if replacing is None else Attr("delivery_id").eq(replacing)
        )
        from botocore.exceptions import ClientError

        try:
            self.table.put_item(Item=item, ConditionExpression=condition)
        except ClientError as exc:
            if conditional_failed(exc):
                return False
            raise
        return True

    def delivery_groups(
        self, source: str, period: str, delivery_id: str, estimate_ids: list[str]
    ) -> list[StoredGroup]:
        """The groups a delivery wrote (for the diff against the one replacing it)."""
        out = []
        for estimate_id in estimate_ids:
            item = self.item(estimate_pk(estimate_id), actuals_sk(source, period, delivery_id))
            if item is not None:
                out.append(_stored(item))
        return out

    def delete_groups(
        self, source: str, period: str, delivery_id: str, estimate_ids: list[str]
    ) -> None:
        """Remove a delivery's groups (a replaced one: no reader reads them any more)."""
        for estimate_id in estimate_ids:
            self.table.delete_item(
                Key={
                    "pk": estimate_pk(estimate_id),
                    "sk": actuals_sk(source, period, delivery_id),
                }
            )

    # -- reading ---------------------------------------------------------------------------------
    def estimate_groups(self, estimate_id: str) -> list[StoredGroup]:
        """The estimate's groups of the deliveries in force, every source and period."""
        items = self.query_all(
            KeyConditionExpression=Key("pk").eq(estimate_pk(estimate_id))
            & Key("sk").begins_with(ACTUALS_SK_PREFIX),
            ConsistentRead=True,
        )
        return self._in_force(items)

    def estimates_with_actuals(self, workload_id: str | None = None) -> dict[str, str]:
        """Estimate id → workload id, of every estimate with actuals in force (of one
        workload, or the stage)."""
        condition = Key("gsi1pk").eq(ACTUALS_GSI_PK)
        if workload_id is not None:
            condition = condition & Key("gsi1sk").begins_with(f"{workload_id}#")
        items = self.query_all(IndexName=GSI, KeyConditionExpression=condition)
        in_force = self._in_force(items)
        return {g.group.estimate_id: g.workload_id for g in in_force}

    def _in_force(self, items: list[dict[str, Any]]) -> list[StoredGroup]:
        """The items whose delivery is the one in force for its (source, period)."""
        current: dict[tuple[str, str], str | None] = {}
        out = []
        for item in items:
            group = _stored(item)
            k = (group.group.source, group.group.period)
            if k not in current:
                found = self.current(*k)
                current[k] = str(found["delivery_id"]) if found else None
            if current[k] == group.delivery_id:
                out.append(group)
        return out


def _stored(item: dict[str, Any]) -> StoredGroup:
    return StoredGroup(
        group=BillGroup.model_validate_json(item["group"]),
        delivery_id=str(item["delivery_id"]),
        imported_at=str(item["imported_at"]),
        workload_id=str(item.get("workload_id", "")),
    )

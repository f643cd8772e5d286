"""Capacity plans (services/capacity.py) in the trncost table: the latest offerings quoted for
one estimate version, kept so its report shows them with their expiry.

Key builders (the only place these keys are spelled; they extend trncost.store.schema's design):

    capacity plan   pk ESTIMATE#<id>  sk CAPACITY#<version 000001>

A new quote of the same version replaces the last (offerings expire: the newest is the one to
show); the plan says when it was asked for.
"""

from __future__ import annotations

from trncost.model.capacity import CapacityPlan
from trncost.store.base import Repository
from trncost.store.schema import estimate_pk

CAPACITY_SK_PREFIX = "CAPACITY#"


def capacity_sk(version: int) -> str:
    return f"{CAPACITY_SK_PREFIX}{version:06d}"


class CapacityStore(Repository):
    def put(self, plan: CapacityPlan) -> None:
        """Keep `plan` as its estimate version's latest (it replaces the one before)."""
        assert plan.estimate_id is not None and plan.version is not None
        self.table.put_item(
            Item={
                "pk": estimate_pk(plan.estimate_id),
                "sk": capacity_sk(plan.version),
                "queried_at": plan.queried_at,
                "plan": plan.model_dump_json(),
            }
        )

    def get(self, estimate_id: str, version: int) -> CapacityPlan | None:
        """The latest plan quoted for that version; None when none was."""
        item = self.item(estimate_pk(estimate_id), capacity_sk(version))
        return CapacityPlan.model_validate_json(item["plan"]) if item else None

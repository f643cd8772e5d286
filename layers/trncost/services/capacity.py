"""Capacity you can book for an estimate: EC2 Capacity Blocks and SageMaker Training Plans for
its P50 and P90 held time, asked for now, weighed against the run's draws (estimate/capacity.py)
and kept with the version (store/capacity.py), beside on-demand.

Each offering is an `official` priced input — trncost asked AWS itself: the operation, the
endpoint, the time and the parameters are its origin — good until it starts at most (its
`expires_at`). The local runtime answers from the constructed example offerings instead (basis
`example`, never official). An AWS service still failing after its retries is Unavailable
(503); an instance type AWS does not offer (or botocore's model does not know: `ml.trn3…` is
not a reserved-capacity type in botocore 1.44) is "none offered", with the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Protocol

import numpy as np

from trncost import aws
from trncost.errors import DomainError, NotFound, Unavailable
from trncost.model.basis import ExampleOrigin, OfficialOrigin, PriceBasis, PriceOrigin, QueryFilter
from trncost.model.candidate import PurchaseOption
from trncost.model.capacity import (
    CapacityOffering,
    CapacityPlan,
    CapacityRejection,
    CapacitySource,
)
from trncost.model.estimate import Estimate, EstimateInput
from trncost.model.price import PriceKey
from trncost.pricing.offerings import read_offerings
from trncost.store.capacity import CapacityStore

log = logging.getLogger(__name__)
LOOKAHEAD = timedelta(days=56)  # a Capacity Block starts at most 8 weeks ahead
OPERATIONS: dict[CapacitySource, str] = {
    "ec2_capacity_block": "ec2:DescribeCapacityBlockOfferings",
    "sagemaker_training_plan": "sagemaker:SearchTrainingPlanOfferings",
}


class OfferingClient(Protocol):
    """An adapter that answers one source's offerings (pricing/client.py)."""

    @property
    def endpoint(self) -> str: ...

    def offerings(
        self,
        instance_type: str,
        instance_count: int,
        duration_hours: int,
        start: datetime,
        end: datetime,
    ) -> Any: ...


def _now() -> datetime:
    return datetime.now(UTC)


def on_demand_rate(est: Estimate) -> tuple[str, Decimal | None, PriceBasis | None]:
    """The candidate's on-demand instance price as the estimate read it: (its key, its rate
    [USD/instance-hour] or None while PENDING, its basis)."""
    c = est.candidate
    key = str(
        PriceKey.for_instance(c.instance_type, c.region, PurchaseOption.on_demand, c.platform)
    )
    row = next((r for r in est.inputs if r.id == f"price:{key}"), None)
    if row is None or row.value is None:
        return key, None, None
    try:
        return key, Decimal(str(row.value)), row.price_basis
    except ArithmeticError:  # a tiered price: not one hourly rate
        return key, None, None


class CapacityService:
    def __init__(
        self,
        estimates: Any,  # EstimateService: the version and its inputs
        store: CapacityStore | None,
        blocks: Callable[[str], OfferingClient],
        plans: Callable[[str], OfferingClient],
        clock: Callable[[], datetime] = _now,
        *,
        example_file: str | None = None,
    ) -> None:
        self.estimates = estimates
        self.store = store
        self.blocks = blocks
        self.plans = plans
        self.clock = clock
        self.example_file = example_file  # the local runtime's constructed offerings

    def latest(self, estimate_id: str, version: int | None = None) -> CapacityPlan:
        """The offerings last quoted for the version (the latest when None); NotFound when
        none was."""
        found = self.estimates.version(estimate_id, version)
        plan = self.store.get(estimate_id, found.version) if self.store is not None else None
        if plan is None:
            raise NotFound(
                f"no capacity quoted for estimate {estimate_id} version {found.version}: "
                f"POST /estimates/{estimate_id}/capacity asks AWS"
            )
        return plan

    def quote(self, estimate_id: str, version: int | None = None) -> CapacityPlan:
        """Ask AWS now for blocks and plans at the version's P50 and P90 held time, weigh them
        against its draws, keep the plan with the version and return it."""
        found = self.estimates.version(estimate_id, version)
        inp = self.estimates.input_for(estimate_id)
        plan = self.plan(inp, found.estimate, estimate_id=estimate_id, version=found.version)
        if self.store is not None:
            self.store.put(plan)
        return plan

    def plan(
        self,
        inp: EstimateInput,
        est: Estimate,
        *,
        estimate_id: str | None = None,
        version: int | None = None,
    ) -> CapacityPlan:
        """The capacity plan of `est` (made from `inp`): its held-time draws (its own range's
        seed and draws), the offerings asked for now at their P50 and P90, weighed."""
        from trncost.estimate.capacity import block_hours, capacity_plan, held_percentiles
        from trncost.estimate.uncertainty import simulate
        from trncost.services.versions import RANGE_SAMPLES, RANGE_SEED

        _, sim = simulate(inp, samples=RANGE_SAMPLES, seed=RANGE_SEED, est=est)
        drawn = np.broadcast_to(sim.outcome.held_h, (sim.samples,))
        held = np.where(sim.feasible, drawn, np.inf)
        now = self.clock()
        c = est.candidate
        offerings: dict[str, list[CapacityOffering]] = {}
        none: dict[str, list[str]] = {}
        rejected: list[CapacityRejection] = []
        try:
            percentile = held_percentiles(held)
        except DomainError as exc:
            raise DomainError(f"estimate {estimate_id or c.label}: {exc}") from None
        ec2_type = c.instance_type.removeprefix("ml.")
        asked: tuple[tuple[CapacitySource, str, Callable[[str], OfferingClient]], ...] = (
            ("ec2_capacity_block", ec2_type, self.blocks),
            ("sagemaker_training_plan", f"ml.{ec2_type}", self.plans),
        )
        for label in ("P50", "P90"):
            h = percentile[label]
            hours = block_hours(h)
            offerings[label], none[label] = [], []
            if hours is None:
                none[label].append(f"{h:,.0f} held hours is past the longest block (182 days)")
                continue
            for source, itype, factory in asked:
                client = factory(c.region)
                got, bad, why = self._ask(source, client, itype, c.instance_count, hours, now)
                offerings[label] += got
                rejected += bad
                if why or not got:
                    what = why or (
                        f"{len(bad)} offering(s), none usable" if bad else "no offering answered"
                    )
                    none[label].append(
                        f"{OPERATIONS[source]} ({itype} × {c.instance_count}, {hours} h): {what}"
                    )
        key, rate, basis = on_demand_rate(est)
        plan = capacity_plan(
            c,
            held,
            offerings,
            none,
            on_demand_key=key,
            on_demand=rate,
            on_demand_basis=basis,
            queried_at=now.isoformat(),
            rejected=rejected,
            estimate_id=estimate_id,
            version=version,
        )
        if self.example_file:
            plan = plan.model_copy(
                update={
                    "notes": [
                        f"the offerings are CONSTRUCTED examples ({self.example_file}, in "
                        "botocore's model shapes, at the rates of a late-2024 copy of AWS's "
                        "Capacity Block pricing page): basis example, never official",
                        *plan.notes,
                    ]
                }
            )
        return plan

    def _origin(
        self, source: CapacitySource, client: OfferingClient, params: dict[str, str], at: str
    ) -> PriceOrigin:
        if self.example_file:
            return ExampleOrigin(
                file=self.example_file, note="constructed from botocore's model shapes"
            )
        return OfficialOrigin(
            requested_at=at,
            endpoint=getattr(client, "endpoint", ""),
            operation=OPERATIONS[source],
            filters=[QueryFilter(type="PARAMETER", field=k, value=v) for k, v in params.items()],
        )

    def _ask(
        self,
        source: CapacitySource,
        client: OfferingClient,
        instance_type: str,
        count: int,
        hours: int,
        now: datetime,
    ) -> tuple[list[CapacityOffering], list[CapacityRejection], str | None]:
        """One source's offerings: (usable, rejected, why none could be asked for). A type
        botocore's model does not name for the operation is not asked for: AWS would refuse it
        (the readiness watch notices when it appears)."""
        from botocore.exceptions import ParamValidationError

        from trncost.pricing.names import ec2_instance_types, sagemaker_reserved_types

        if source == "ec2_capacity_block" and instance_type not in ec2_instance_types():
            return [], [], f"{instance_type} is not an EC2 instance type in botocore's model yet"
        if source == "sagemaker_training_plan" and instance_type not in sagemaker_reserved_types():
            return (
                [],
                [],
                (
                    f"{instance_type} is not a reserved-capacity type in botocore's SageMaker "
                    "model (ReservedCapacityInstanceType) yet"
                ),
            )

        end = now + LOOKAHEAD + timedelta(hours=hours)
        params = {
            "InstanceType": instance_type,
            "InstanceCount": str(count),
            "DurationHours": str(hours),
            "Start": now.isoformat(),
            "End": end.isoformat(),
        }
        try:
            items = list(client.offerings(instance_type, count, hours, now, end))
        except ParamValidationError as exc:
            return [], [], f"botocore's model refuses the request ({exc})"
        except Exception as exc:
            if aws.unavailable(exc):
                raise Unavailable(f"{OPERATIONS[source]} failed after retries: {exc}") from None
            if aws.is_aws_error(exc):
                return [], [], f"AWS answered {aws.error_code(exc) or 'an error'}: {exc}"
            raise
        basis = PriceBasis.example if self.example_file else PriceBasis.official
        origin = self._origin(source, client, params, now.isoformat())
        found, bad = read_offerings(
            source, items, instance_type, queried_at=now.isoformat(), basis=basis, origin=origin
        )
        return found, bad, None

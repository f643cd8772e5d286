"""Price quotes: rates with their Price List identity and their basis (official, saved_file,
example; see `trncost.model.basis`), or PENDING with a reason."""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from functools import cached_property, lru_cache
from typing import Any, Literal

from pydantic import Field, model_validator

from trncost.model.basis import PriceBasis, PriceOrigin, basis_of_source
from trncost.model.bounds import PositiveCount, PositiveHours, RateUsd, TierQuantity
from trncost.model.candidate import Platform, PurchaseOption
from trncost.model.common import DomainModel, Identifier, Name, Note, Region
from trncost.model.provenance import OfficialPrice, Pending


class Service(StrEnum):
    """Price List service codes."""

    ec2 = "AmazonEC2"
    sagemaker = "AmazonSageMaker"
    s3 = "AmazonS3"
    cloudwatch = "AmazonCloudWatch"
    data_transfer = "AWSDataTransfer"


class UsageItem(StrEnum):
    """The supporting-resource prices an estimate needs, besides instance hours."""

    ebs_gp3 = "ebs:gp3"  # AmazonEC2, GB-Mo
    s3_standard = "s3:standard-storage"  # AmazonS3, GB-Mo, tiered
    logs_ingestion = "logs:ingestion"  # AmazonCloudWatch, GB
    logs_storage = "logs:storage"  # AmazonCloudWatch, GB-Mo
    custom_metrics = "metrics:custom"  # AmazonCloudWatch, metric-month, tiered
    transfer_out = "transfer:out-internet"  # AWSDataTransfer, GB, tiered
    transfer_inter_region = "transfer:inter-region"  # AWSDataTransfer, GB


# The unit each usage price is billed in, as the Price List writes it.
USAGE_UNIT: dict[UsageItem, str] = {
    UsageItem.ebs_gp3: "GB-Mo",
    UsageItem.s3_standard: "GB-Mo",
    UsageItem.logs_ingestion: "GB",
    UsageItem.logs_storage: "GB-Mo",
    UsageItem.custom_metrics: "Metrics",
    UsageItem.transfer_out: "GB",
    UsageItem.transfer_inter_region: "GB",
}
_USAGE_ITEMS = frozenset(u.value for u in UsageItem)

# Billing units: the Price List spelling → the plain name (both accepted in an override).
UNIT_NAMES: dict[str, str] = {
    "Hrs": "instance-hour",
    "GB-Mo": "GB-month",
    "GB": "GB",
    "Metrics": "metric-month",
}


def normalise_unit(text: str) -> str | None:
    """A billing unit in its Price List spelling (`Hrs`), from either spelling, any case;
    None when it is neither."""
    folded = text.strip().casefold()
    for spelled, plain in UNIT_NAMES.items():
        if folded in (spelled.casefold(), plain.casefold()):
            return spelled
    return None


def unit_text(unit: str) -> str:
    """`Hrs (instance-hour)`: a unit in both spellings."""
    plain = UNIT_NAMES.get(unit)
    return unit if plain is None or plain == unit else f"{unit} ({plain})"


USAGE_SERVICE: dict[UsageItem, Service] = {
    UsageItem.ebs_gp3: Service.ec2,
    UsageItem.s3_standard: Service.s3,
    UsageItem.logs_ingestion: Service.cloudwatch,
    UsageItem.logs_storage: Service.cloudwatch,
    UsageItem.custom_metrics: Service.cloudwatch,
    UsageItem.transfer_out: Service.data_transfer,
    UsageItem.transfer_inter_region: Service.data_transfer,
}


# The parts of a price key's text, in order (`str(PriceKey)`).
KEY_TEXT_PARTS = ("service", "region", "item", "purchase_option")


class PriceKey(DomainModel):
    """What a price is for: service, region, item (instance type or usage item), purchase option.
    Also taken as the text trncost prints for it, service/region/item/purchase_option (e.g.
    AmazonEC2/us-east-2/trn3.48xlarge/on_demand), each part checked as its field."""

    service: Service
    region: Region
    item: Name
    purchase_option: PurchaseOption = PurchaseOption.on_demand

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        if not isinstance(data, str):
            return data
        parts = data.strip().split("/")
        if len(parts) != len(KEY_TEXT_PARTS):
            raise ValueError(
                f"a price key written as text is {'/'.join(KEY_TEXT_PARTS)} (four parts, e.g. "
                f"AmazonEC2/us-east-2/trn3.48xlarge/on_demand), not {len(parts)} part(s)"
            )
        return dict(zip(KEY_TEXT_PARTS, parts, strict=True))

    def __str__(self) -> str:
        return self._text

    @staticmethod
    @lru_cache(maxsize=1024)
    def for_instance(
        instance_type: str,
        region: str,
        purchase_option: PurchaseOption = PurchaseOption.on_demand,
        platform: Platform = Platform.ec2,
    ) -> PriceKey:
        """An instance price. SageMaker (the platform, or an `ml.` type) is priced as the
        AmazonSageMaker `ml.` type; EC2 as the EC2 type."""
        if platform == Platform.sagemaker or instance_type.startswith("ml."):
            item = instance_type if instance_type.startswith("ml.") else f"ml.{instance_type}"
            return PriceKey(
                service=Service.sagemaker,
                region=region,
                item=item,
                purchase_option=purchase_option,
            )
        return PriceKey(
            service=Service.ec2, region=region, item=instance_type, purchase_option=purchase_option
        )

    @property
    def is_instance(self) -> bool:
        return self.item not in _USAGE_ITEMS

    @property
    def billing_unit(self) -> str:
        """The unit the key is billed in, as the Price List writes it (an instance: Hrs)."""
        if self.is_instance:
            return "Hrs"
        return USAGE_UNIT[UsageItem(self.item)]

    @staticmethod
    @lru_cache(maxsize=1024)
    def for_usage(item: UsageItem, region: str) -> PriceKey:
        return PriceKey(service=USAGE_SERVICE[item], region=region, item=item.value)

    @cached_property
    def _text(self) -> str:
        return f"{self.service}/{self.region}/{self.item}/{self.purchase_option}"


class PriceTier(DomainModel):
    """One Price List price dimension: a rate for usage in [begin, end)."""

    begin: TierQuantity = Decimal(0)
    end: TierQuantity | None = None
    usd: RateUsd
    rate_code: Name
    description: str | None = None


class CapacityBlockTerms(DomainModel):
    duration_hours: PositiveHours
    instance_count: PositiveCount
    start_date: str | None = None
    queried_at: str | None = None


def _fill_basis(data: Any) -> Any:
    """A quote or snapshot without `basis` (stored before bases existed) takes its source's;
    one that claims more than its source carries is refused."""
    if not isinstance(data, dict):
        return data
    source = data.get("source", "query_api")
    allowed = basis_of_source(str(source))
    basis = data.get("basis")
    if basis is None:
        return {**data, "basis": allowed}
    if PriceBasis(basis) != allowed:
        raise ValueError(f"basis {basis} does not match source {source} (which is {allowed})")
    return data


class PriceQuote(DomainModel):
    key: PriceKey
    status: Literal["official", "pending"] = Field(
        description="official: a Price List price (see basis for who fetched it); pending: none"
    )
    unit: Name | None = None
    tiers: list[PriceTier] = Field(default_factory=list)
    sku: Name | None = None
    attributes: dict[str, str] = Field(default_factory=dict)
    effective_date: str | None = None
    publication_date: str | None = None
    snapshot_id: Identifier
    source: str = "query_api"
    basis: PriceBasis = Field(
        description="official (fetched by trncost) | saved_file | example; from the source"
    )
    origin: PriceOrigin | None = Field(
        default=None, description="what makes the basis checkable (request or file)"
    )
    pending_reason: str | None = None
    capacity_block: CapacityBlockTerms | None = None

    @model_validator(mode="before")
    @classmethod
    def _basis(cls, data: Any) -> Any:
        return _fill_basis(data)

    @model_validator(mode="after")
    def _consistent(self) -> PriceQuote:
        if self.status == "pending":
            if self.tiers:
                raise ValueError("a pending quote carries no price (tiers must be empty)")
            if not self.pending_reason:
                raise ValueError("a pending quote needs pending_reason")
            return self
        if not self.tiers:
            raise ValueError("an official quote needs at least one tier (price dimension)")
        if not self.sku or not self.unit:
            raise ValueError("an official quote needs sku and unit")
        expected = Decimal(0)
        for i, tier in enumerate(self.tiers):
            if tier.begin != expected:
                raise ValueError(
                    f"tiers[{i}].begin must be {expected} (tiers are contiguous from 0)"
                )
            if tier.end is None:
                if i != len(self.tiers) - 1:
                    raise ValueError(f"tiers[{i}] is open-ended but is not the last tier")
            elif tier.end <= tier.begin:
                raise ValueError(f"tiers[{i}].end must exceed its begin")
            else:
                expected = tier.end
        if (
            self.key.purchase_option == PurchaseOption.capacity_block
            and self.capacity_block is None
        ):
            raise ValueError("a capacity_block quote needs capacity_block terms")
        return self

    @property
    def is_pending(self) -> bool:
        return self.status == "pending"

    @property
    def flat_rate(self) -> Decimal | None:
        """The rate when the quote has a single tier (most instance prices)."""
        return self.tiers[0].usd if len(self.tiers) == 1 else None

    def provenance(self) -> OfficialPrice | Pending:
        if self.is_pending:
            return Pending(reason=self.pending_reason or "", price_key=str(self.key))
        return OfficialPrice(
            snapshot_id=self.snapshot_id,
            source=self.source,
            basis=self.basis,
            origin=self.origin,
            sku=self.sku or "",
            rate_code=",".join(t.rate_code for t in self.tiers),
            effective_date=self.effective_date,
            publication_date=self.publication_date,
        )


SnapshotSource = Literal[
    "query_api", "saved_price_list_file", "capacity_block_query", "example_file"
]


class Rejection(DomainModel):
    """A Price List item (or capacity-block offering) that matched a price key (or could not
    be read at all) and was refused, and why: zero price, unknown unit, not USD, outside the
    plausible range, ambiguous SKUs, malformed."""

    key: str | None = None
    sku: str | None = None
    reason: str


class Unmatched(DomainModel):
    """A product of a saved file (or a query's answer) that answers no price key, and the
    filter that failed for the key it came closest to."""

    sku: str
    service: str | None = None
    closest_key: str | None = None
    reason: str


class PriceSnapshot(DomainModel):
    """An immutable set of quotes taken at one time from one source."""

    snapshot_id: Identifier
    taken_at: str
    source: SnapshotSource
    publication_dates: dict[str, str] = Field(
        default_factory=dict, description="Price List publicationDate per service code"
    )
    basis: PriceBasis = Field(description="the basis of every quote in it (from the source)")
    origin: PriceOrigin | None = None
    quotes: list[PriceQuote] = Field(default_factory=list)
    rejected: list[Rejection] = Field(default_factory=list)
    unmatched: list[Unmatched] = Field(default_factory=list)
    note: Note | None = None

    @model_validator(mode="before")
    @classmethod
    def _basis(cls, data: Any) -> Any:
        return _fill_basis(data)

    @model_validator(mode="after")
    def _one_basis(self) -> PriceSnapshot:
        mixed = sorted({str(q.key) for q in self.quotes if q.basis != self.basis})
        if mixed:
            raise ValueError(
                f"every quote of a {self.basis} snapshot has basis {self.basis}; "
                f"not: {', '.join(mixed[:5])}"
            )
        return self

    def quote_for(self, key: PriceKey) -> PriceQuote:
        """The quote for `key`, or a PENDING quote saying the snapshot has none."""
        for quote in self.quotes:
            if quote.key == key:
                return quote
        published = self.publication_dates.get(key.service.value)
        as_of = f" as of {published}" if published else ""
        refused = next((r for r in self.rejected if r.key == str(key)), None)
        if refused is not None:
            return PriceQuote(
                key=key,
                status="pending",
                snapshot_id=self.snapshot_id,
                source=self.source,
                basis=self.basis,
                pending_reason=f"the quote for {key} in snapshot {self.snapshot_id} was "
                f"rejected: {refused.reason}",
            )
        return PriceQuote(
            key=key,
            status="pending",
            snapshot_id=self.snapshot_id,
            source=self.source,
            basis=self.basis,
            pending_reason=(
                f"no Price List product for {key.item} ({key.purchase_option}) "
                f"in {key.region}{as_of} in snapshot {self.snapshot_id}"
            ),
        )


class PriceOverride(DomainModel):
    """A user-supplied rate (negotiated discount, private pricing, a what-if): basis
    `assumed`, never mixed into `official`. It names the price key it replaces; its unit is
    the unit that key is billed in, as the Price List writes it (Hrs, GB-Mo, GB, Metrics) or
    by its plain name (instance-hour, GB-month, GB, metric-month). Whether the key is one the
    estimate uses, and the unit the key's, is checked against the estimate
    (`trncost.estimate.overrides`)."""

    key: PriceKey
    usd: RateUsd
    unit: Name = Field(description="Hrs | GB-Mo | GB | Metrics, or instance-hour | GB-month | ...")
    note: Note | None = None

    @model_validator(mode="before")
    @classmethod
    def _spelling(cls, data: Any) -> Any:
        """Plain names are stored in the Price List's spelling; other text is kept for the
        check to name."""
        if isinstance(data, dict) and isinstance(data.get("unit"), str):
            spelled = normalise_unit(data["unit"])
            if spelled is not None:
                return {**data, "unit": spelled}
        return data


class PriceChange(DomainModel):
    key: str
    before: str = Field(description="tiers or PENDING, as text")
    after: str


class SnapshotDiff(DomainModel):
    """What changed between two snapshots, key by key."""

    from_snapshot: str
    to_snapshot: str
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    changed: list[PriceChange] = Field(default_factory=list)

    @property
    def changed_keys(self) -> list[str]:
        return sorted({*self.added, *self.removed, *(c.key for c in self.changed)})


def price_text(quote: PriceQuote) -> str:
    """A quote's price as comparable text: its tiers, or PENDING."""
    if quote.is_pending:
        return "PENDING"
    parts = []
    for t in quote.tiers:
        end = "inf" if t.end is None else str(t.end.normalize())
        parts.append(f"{t.begin.normalize()}-{end}:{t.usd.normalize()}/{quote.unit}")
    return "; ".join(parts)


def diff_snapshots(old: PriceSnapshot, new: PriceSnapshot) -> SnapshotDiff:
    before = {str(q.key): q for q in old.quotes}
    after = {str(q.key): q for q in new.quotes}
    changed = [
        PriceChange(key=k, before=price_text(before[k]), after=price_text(after[k]))
        for k in sorted(before.keys() & after.keys())
        if price_text(before[k]) != price_text(after[k])
    ]
    return SnapshotDiff(
        from_snapshot=old.snapshot_id,
        to_snapshot=new.snapshot_id,
        added=sorted(after.keys() - before.keys()),
        removed=sorted(before.keys() - after.keys()),
        changed=changed,
    )

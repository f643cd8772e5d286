"""What to price: one Price List query per price key the engine needs.

The catalog (stage config) names instance types and regions; each EC2 instance type × region
is one AmazonEC2 on-demand query, each SageMaker `ml.` type × region one AmazonSageMaker
on-demand training query, and each region adds the usage prices (EBS gp3, S3 Standard,
CloudWatch Logs ingestion and storage, custom metrics, data transfer out and inter-region).
One query per key: the number of Price List calls grows with the keys asked for, never with
all of EC2.

A query is also how a product of a saved file is matched to a key. Older and trimmed records
are matched too: without `regionCode` a product matches on its `location` (names from
botocore's endpoint data, `trncost.pricing.locations`); without `marketoption`, an OnDemand
term of a `capacitystatus: Used` product (or one without capacitystatus) is on-demand. Every
filter says why it fails, so a product that answers no key is listed with the filter that
refused it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from trncost.model.candidate import Platform
from trncost.model.catalog import Catalog
from trncost.model.price import PriceKey, Service, UsageItem
from trncost.pricing.locations import is_location_of, location_names
from trncost.pricing.parser import Product

FilterType = Literal["TERM_MATCH", "EQUALS", "CONTAINS"]


@dataclass(frozen=True)
class Filter:
    """One attribute test, as sent to GetProducts and as applied to a saved product.

    `location_field`: the value is a region code, and a product without `field` (an older
    record) matches when its `location_field` names that region. `absent_ok`: a product
    without the attribute at all passes (older records predate it)."""

    field: str
    value: str
    type: FilterType = "TERM_MATCH"
    location_field: str | None = None
    absent_ok: bool = False

    def as_api(self) -> dict[str, str]:
        return {"Type": self.type, "Field": self.field, "Value": self.value}

    def _equal(self, actual: str) -> bool:
        if self.type == "CONTAINS":
            return self.value.lower() in actual.lower()
        return actual.lower() == self.value.lower()

    def failure(self, product: Product) -> str | None:
        """Why `product` fails this filter; None when it passes."""
        actual = product.value_of(self.field)
        if actual is not None:
            if self._equal(actual):
                return None
            how = "does not contain" if self.type == "CONTAINS" else "is not"
            return f"{self.field} {actual!r} {how} {self.value!r}"
        if self.location_field is not None:
            location = product.value_of(self.location_field)
            if location is None:
                return f"no {self.field} or {self.location_field} (wants {self.value})"
            if is_location_of(location, self.value):
                return None
            shown = [n for n in location_names(self.value) if not n.endswith("-Local)")]
            names = " / ".join(sorted(shown)) or "a name botocore lacks"
            return (
                f"{self.location_field} {location!r} is not {self.value} ({names}); no {self.field}"
            )
        if self.absent_ok:
            return None
        return f"no {self.field} (wants {self.value!r})"

    def matches(self, product: Product) -> bool:
        return self.failure(product) is None


@dataclass(frozen=True)
class ProductQuery:
    """A Price List query for one price key, and how to pick its product."""

    key: PriceKey
    service_code: str
    filters: tuple[Filter, ...]
    units: frozenset[str]
    usagetype: str | None = None  # a regex the product's usagetype must match in full
    pick: Literal["only", "highest"] = "only"
    require_nonzero: bool = False
    usagetype_label: str | None = None  # how a failure names the usagetype it wanted

    def api_filters(self) -> list[dict[str, str]]:
        return [f.as_api() for f in self.filters]

    def failures(self, product: Product) -> list[str]:
        """Why a returned (or saved) product is not the one this key means; empty when it
        is."""
        if product.service_code and product.service_code != self.service_code:
            return [f"service {product.service_code} is not {self.service_code}"]
        out = [why for f in self.filters if (why := f.failure(product)) is not None]
        if self.usagetype is not None and not any(w.startswith("usagetype") for w in out):
            usage = product.attributes.get("usagetype", "")
            if re.fullmatch(self.usagetype, usage) is None:
                out.append(f"usagetype {usage!r} is not {self.usagetype_text}")
        return out

    def accepts(self, product: Product) -> bool:
        """Whether a returned (or saved) product is the one this key means."""
        return not self.failures(product)

    @property
    def checks(self) -> int:
        """How many tests a product must pass (its filters and the usagetype pattern)."""
        return len(self.filters) + (self.usagetype is not None)

    @property
    def usagetype_text(self) -> str:
        return self.usagetype_label or f"/{self.usagetype}/"


def _region_usage(region_prefix_optional: str) -> str:
    # us-east-1 usage types often carry no region prefix ("DataProcessing-Bytes"); others do
    # ("USE2-DataProcessing-Bytes", "EU-DataProcessing-Bytes").
    return rf"([A-Z0-9]+-)?{region_prefix_optional}"


def _region(region: str, field: str = "regionCode", location: str = "location") -> Filter:
    return Filter(field, region, location_field=location)


def instance_query(instance_type: str, region: str) -> ProductQuery:
    """Linux, shared tenancy, no pre-installed software, on demand, capacity in use.

    `marketoption=OnDemand` excludes Capacity Block SKUs, whose OnDemand term can list $0.00;
    a zero hourly price is refused as well, so it can never pass for an on-demand price.
    Records older than `marketoption` (or `capacitystatus`) pass without it: before Capacity
    Blocks existed, the OnDemand term of a product in use was the on-demand price.
    """
    return ProductQuery(
        key=PriceKey.for_instance(instance_type, region),
        service_code=Service.ec2.value,
        filters=(
            Filter("instanceType", instance_type),
            _region(region),
            Filter("operatingSystem", "Linux"),
            Filter("tenancy", "Shared"),
            Filter("preInstalledSw", "NA"),
            Filter("capacitystatus", "Used", absent_ok=True),
            Filter("licenseModel", "No License required"),
            Filter("marketoption", "OnDemand", absent_ok=True),
        ),
        units=frozenset({"Hrs"}),
        require_nonzero=True,
    )


def sagemaker_query(instance_type: str, region: str) -> ProductQuery:
    """On-demand SageMaker training of an `ml.` type: the AmazonSageMaker product whose
    usagetype is `<region prefix>-Train:<ml. type>` (USE1-Train:ml.p4d.24xlarge).

    The usagetype names both the instance and the component, in every version of the
    SageMaker Price List (older products say `instanceType`/`platoinstancetype`, newer ones
    `instanceName`/`component`; some say `instanceType: NA`), so it is what identifies the
    product: hosting, notebooks, processing, spot training and HyperPod clusters have other
    usage types and never pass for a training price. The live query asks for products whose
    usagetype contains `Train:<type>`; the full match is checked here.
    """
    key = PriceKey.for_instance(instance_type, region, platform=Platform.sagemaker)
    item = key.item
    return ProductQuery(
        key=key,
        service_code=Service.sagemaker.value,
        filters=(_region(region), Filter("usagetype", f"Train:{item}", "CONTAINS")),
        units=frozenset({"Hrs"}),
        usagetype=rf"([A-Z0-9]+-)?Train:{re.escape(item)}",
        usagetype_label=f"<region>-Train:{item}",
        require_nonzero=True,
    )


def machine_query(instance_type: str, region: str) -> ProductQuery:
    """The on-demand query of a catalog type: SageMaker for `ml.` types, else EC2."""
    if instance_type.startswith("ml."):
        return sagemaker_query(instance_type, region)
    return instance_query(instance_type, region)


def usage_query(item: UsageItem, region: str) -> ProductQuery:
    key = PriceKey.for_usage(item, region)
    match item:
        case UsageItem.ebs_gp3:
            return ProductQuery(
                key,
                Service.ec2.value,
                (
                    _region(region),
                    Filter("productFamily", "Storage"),
                    Filter("volumeApiName", "gp3"),
                ),
                frozenset({"GB-Mo"}),
                usagetype=_region_usage(r"EBS:VolumeUsage\.gp3"),
            )
        case UsageItem.s3_standard:
            return ProductQuery(
                key,
                Service.s3.value,
                (
                    _region(region),
                    Filter("productFamily", "Storage"),
                    Filter("volumeType", "Standard"),
                ),
                frozenset({"GB-Mo"}),
                usagetype=_region_usage("TimedStorage-ByteHrs"),
            )
        case UsageItem.logs_ingestion:
            return ProductQuery(
                key,
                Service.cloudwatch.value,
                (
                    _region(region),
                    Filter("usagetype", "DataProcessing-Bytes", "CONTAINS"),
                ),
                frozenset({"GB"}),
                usagetype=_region_usage("DataProcessing-Bytes"),
            )
        case UsageItem.logs_storage:
            return ProductQuery(
                key,
                Service.cloudwatch.value,
                (
                    _region(region),
                    Filter("usagetype", "TimedStorage-ByteHrs", "CONTAINS"),
                ),
                frozenset({"GB-Mo"}),
                usagetype=_region_usage("TimedStorage-ByteHrs"),
            )
        case UsageItem.custom_metrics:
            return ProductQuery(
                key,
                Service.cloudwatch.value,
                (
                    _region(region),
                    Filter("usagetype", "CW:MetricMonitorUsage", "CONTAINS"),
                ),
                frozenset({"Metrics"}),
                usagetype=_region_usage("CW:MetricMonitorUsage"),
            )
        case UsageItem.transfer_out:
            return ProductQuery(
                key,
                Service.data_transfer.value,
                (
                    _region(region, "fromRegionCode", "fromLocation"),
                    Filter("transferType", "AWS Outbound"),
                    Filter("toLocation", "External"),
                ),
                frozenset({"GB"}),
                usagetype=_region_usage("DataTransfer-Out-Bytes"),
            )
        case UsageItem.transfer_inter_region:
            # One product per destination region: the highest rate from this region is
            # taken, and the quote's attributes name the destination it came from.
            return ProductQuery(
                key,
                Service.data_transfer.value,
                (
                    _region(region, "fromRegionCode", "fromLocation"),
                    Filter("transferType", "InterRegion Outbound"),
                ),
                frozenset({"GB"}),
                pick="highest",
            )
    raise ValueError(f"no Price List query for {item}")  # pragma: no cover - enum exhausted


def queries_for(catalog: Catalog) -> list[ProductQuery]:
    queries = [
        machine_query(instance_type, region)
        for region in catalog.regions
        for instance_type in catalog.instance_types
    ]
    queries += [usage_query(item, region) for region in catalog.regions for item in UsageItem]
    return queries

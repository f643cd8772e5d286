"""What to price: one Price List query per price key the engine needs.

The catalog (stage config) names instance types and regions; each instance type × region is
one EC2 on-demand query, and each region adds the usage prices (EBS gp3, S3 Standard,
CloudWatch Logs ingestion and storage, custom metrics, data transfer out and inter-region).
One query per key: the number of Price List calls grows with the keys asked for, never with
all of EC2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from trncost.model.price import PriceKey, Service, UsageItem
from trncost.pricing.parser import Product
from trncost.settings import Catalog

FilterType = Literal["TERM_MATCH", "EQUALS", "CONTAINS"]


@dataclass(frozen=True)
class Filter:
    field: str
    value: str
    type: FilterType = "TERM_MATCH"

    def as_api(self) -> dict[str, str]:
        return {"Type": self.type, "Field": self.field, "Value": self.value}

    def matches(self, product: Product) -> bool:
        actual = product.value_of(self.field)
        if actual is None:
            return False
        if self.type == "CONTAINS":
            return self.value.lower() in actual.lower()
        return actual.lower() == self.value.lower()


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

    def api_filters(self) -> list[dict[str, str]]:
        return [f.as_api() for f in self.filters]

    def accepts(self, product: Product) -> bool:
        """Whether a returned (or saved) product is the one this key means."""
        if product.service_code and product.service_code != self.service_code:
            return False
        if not all(f.matches(product) for f in self.filters):
            return False
        if self.usagetype is not None:
            return re.fullmatch(self.usagetype, product.attributes.get("usagetype", "")) is not None
        return True


def _region_usage(region_prefix_optional: str) -> str:
    # us-east-1 usage types often carry no region prefix ("DataProcessing-Bytes"); others do
    # ("USE2-DataProcessing-Bytes", "EU-DataProcessing-Bytes").
    return rf"([A-Z0-9]+-)?{region_prefix_optional}"


def instance_query(instance_type: str, region: str) -> ProductQuery:
    """Linux, shared tenancy, no pre-installed software, on demand, capacity in use.

    `marketoption=OnDemand` excludes Capacity Block SKUs, whose OnDemand term can list $0.00;
    a zero hourly price is refused as well, so it can never pass for an on-demand price.
    """
    return ProductQuery(
        key=PriceKey.for_instance(instance_type, region),
        service_code=Service.ec2.value,
        filters=(
            Filter("instanceType", instance_type),
            Filter("regionCode", region),
            Filter("operatingSystem", "Linux"),
            Filter("tenancy", "Shared"),
            Filter("preInstalledSw", "NA"),
            Filter("capacitystatus", "Used"),
            Filter("licenseModel", "No License required"),
            Filter("marketoption", "OnDemand"),
        ),
        units=frozenset({"Hrs"}),
        require_nonzero=True,
    )


def usage_query(item: UsageItem, region: str) -> ProductQuery:
    key = PriceKey.for_usage(item, region)
    match item:
        case UsageItem.ebs_gp3:
            return ProductQuery(
                key,
                Service.ec2.value,
                (
                    Filter("regionCode", region),
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
                    Filter("regionCode", region),
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
                    Filter("regionCode", region),
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
                    Filter("regionCode", region),
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
                    Filter("regionCode", region),
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
                    Filter("fromRegionCode", region),
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
                (Filter("fromRegionCode", region), Filter("transferType", "InterRegion Outbound")),
                frozenset({"GB"}),
                pick="highest",
            )
    raise ValueError(f"no Price List query for {item}")  # pragma: no cover - enum exhausted


def queries_for(catalog: Catalog) -> list[ProductQuery]:
    queries = [
        instance_query(instance_type, region)
        for region in catalog.regions
        for instance_type in catalog.instance_types
    ]
    queries += [usage_query(item, region) for region in catalog.regions for item in UsageItem]
    return queries

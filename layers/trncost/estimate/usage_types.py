"""Which price a billed charge answers (its usage type → a price key's service and item), and
billing units in one spelling.

AWS names what it bills by usage type (FOCUS 1.2 `SkuMeter`, CUR `line_item_usage_type`, Cost
Explorer's USAGE_TYPE), with a region prefix (`USE2-`; none in us-east-1). trncost's price
keys (trncost.model.price.PriceKey) name the same things by service and item:

| usage type (region prefix left out)  | service           | item                        |
|--------------------------------------|-------------------|-----------------------------|
| BoxUsage:<type> (Spot/Dedicated...)  | AmazonEC2         | <type>                      |
| Train:ml.<type> (SageMaker training) | AmazonSageMaker   | ml.<type>                   |
| EBS:VolumeUsage.gp3                  | AmazonEC2         | ebs:gp3                     |
| Train:VolumeUsage.* (ML storage)     | AmazonEC2         | ebs:gp3 (as estimated)      |
| TimedStorage-ByteHrs (S3)            | AmazonS3          | s3:standard-storage         |
| TimedStorage-ByteHrs (CloudWatch)    | AmazonCloudWatch  | logs:storage                |
| DataProcessing-Bytes (CloudWatch)    | AmazonCloudWatch  | logs:ingestion              |
| CW:MetricMonitorUsage                | AmazonCloudWatch  | metrics:custom              |
| DataTransfer-Out-Bytes               | AWSDataTransfer   | transfer:out-internet       |
| <R1>-<R2>-AWS-Out-Bytes              | AWSDataTransfer   | transfer:inter-region       |

Sources: the usage types of AWS's own rows (tests/events/billing/real/, the CUR user guide's
examples) and the SageMaker `<R>-Train:ml.<type>` convention of the Price List; the EBS and
SageMaker volume names are AWS's standard naming, not seen in a real row here.
"""

from __future__ import annotations

import re
from functools import lru_cache

from trncost.model.price import Service, UsageItem

_PREFIX = re.compile(r"^[A-Z]{2,4}\d?-(?=[A-Za-z])")
_INSTANCE = re.compile(
    r"^(?:Box|Spot|Dedicated|HostBox|UnusedBox|UnusedDed|Reserved)Usage:(?P<type>[a-z][a-z0-9-]*\.[a-z0-9]+)$"
)
_TRAIN = re.compile(r"^Train(?:-Spot)?:(?P<type>ml\.[a-z][a-z0-9-]*\.[a-z0-9]+)$")
_INTER_REGION = re.compile(r"^(?:[A-Z]{2,4}\d?-)?[A-Z]{2,4}\d?-AWS-(?:Out|In)-Bytes$")

SERVICE_NAMES: dict[str, str] = {
    # FOCUS ServiceName as AWS writes it (real rows: "Amazon Elastic Compute Cloud",
    # "AmazonCloudWatch"), by Price List service code
    Service.ec2: "Amazon Elastic Compute Cloud",
    Service.sagemaker: "Amazon SageMaker",
    Service.s3: "Amazon Simple Storage Service",
    Service.cloudwatch: "AmazonCloudWatch",
    Service.data_transfer: "AWS Data Transfer",
}
_CODE_OF_NAME = {name.lower(): code for code, name in SERVICE_NAMES.items()}

UNITS: dict[str, str] = {
    **dict.fromkeys(
        ("hours", "hrs", "hour", "hr", "instance-hour", "instance-hours", "h"), "instance-hour"
    ),
    **dict.fromkeys(("gb-months", "gb-month", "gb-mo", "gb-mos"), "GB-month"),
    **dict.fromkeys(("gb", "gigabytes"), "GB"),
    **dict.fromkeys(("metrics", "metric-month", "metric-months"), "metric-month"),
    **dict.fromkeys(("block", "blocks"), "block"),
}


def unit(text: str | None) -> str | None:
    """A billing unit in trncost's spelling (`Hours`, `Hrs` → instance-hour; `GB-Mo`,
    `GB-Months` → GB-month).

    Parameters
    ----------
    text : str or None
        The unit as billing data writes it (FOCUS PricingUnit, CUR pricing_unit).

    Returns
    -------
    str or None
        trncost's spelling; another unit as written; None for none.
    """
    if text is None or not text.strip():
        return None
    return UNITS.get(text.strip().lower(), text.strip())


def service_code(code: str | None, name: str | None) -> str | None:
    """The Price List service code of a billed charge.

    Parameters
    ----------
    code : str or None
        Its service code when the data has one (x_ServiceCode, line_item_product_code).
    name : str or None
        Its ServiceName as AWS writes it.

    Returns
    -------
    str or None
        `code`, else the code of a ServiceName trncost knows, else None.
    """
    if code:
        return code
    if name:
        return _CODE_OF_NAME.get(name.strip().lower())
    return None


@lru_cache(maxsize=4096)
def price_item(code: str | None, usage_type: str | None) -> tuple[str, str] | None:
    """The price an estimate would have used for a billed usage type (the module's table).

    Parameters
    ----------
    code : str or None
        The charge's service code, when known (S3 and CloudWatch both bill
        TimedStorage-ByteHrs).
    usage_type : str or None
        The usage type, with or without its region prefix.

    Returns
    -------
    tuple[str, str] or None
        (service code, item) of the price key; None for a charge trncost does not estimate.
    """
    if not usage_type:
        return None
    bare = _PREFIX.sub("", usage_type.strip(), count=1)
    m = _INSTANCE.match(bare)
    if m:
        return Service.ec2.value, m.group("type")
    m = _TRAIN.match(bare)
    if m:
        return Service.sagemaker.value, m.group("type")
    if bare.startswith("EBS:VolumeUsage.gp3") or bare.startswith("Train:VolumeUsage"):
        return Service.ec2.value, UsageItem.ebs_gp3.value
    if bare == "TimedStorage-ByteHrs":
        if code == Service.cloudwatch:
            return Service.cloudwatch.value, UsageItem.logs_storage.value
        return Service.s3.value, UsageItem.s3_standard.value
    if bare == "DataProcessing-Bytes":
        return Service.cloudwatch.value, UsageItem.logs_ingestion.value
    if bare == "CW:MetricMonitorUsage":
        return Service.cloudwatch.value, UsageItem.custom_metrics.value
    if bare == "DataTransfer-Out-Bytes":
        return Service.data_transfer.value, UsageItem.transfer_out.value
    if _INTER_REGION.match(usage_type.strip()):
        return Service.data_transfer.value, UsageItem.transfer_inter_region.value
    return None


def is_usage_item(item: str) -> bool:
    """Whether `item` is priced per unit of use, not an instance type.

    Parameters
    ----------
    item : str
        A price key's item.

    Returns
    -------
    bool
        True for EBS, S3, logs, metrics and transfer items.
    """
    return item in {u.value for u in UsageItem}


def sagemaker_usage_type(instance_type: str) -> str:
    """The usage type SageMaker training bills an instance type under.

    Parameters
    ----------
    instance_type : str
        With or without its `ml.` prefix.

    Returns
    -------
    str
        `Train:ml.<type>` (no region prefix).
    """
    item = instance_type if instance_type.startswith("ml.") else f"ml.{instance_type}"
    return f"Train:{item}"

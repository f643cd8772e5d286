"""Builders for Price List items in the exact shape GetProducts returns (a JSON string per
product, terms keyed by SKU.offerTermCode, dimensions by SKU.offerTermCode.rateCode).

The values are illustrative; the shape is AWS's.
"""

from __future__ import annotations

import json
from typing import Any

PUBLISHED = "2026-11-20T18:32:09Z"
ON_DEMAND = "JRTCKXETXF"
REGION_NAMES = {
    "us-east-1": "US East (N. Virginia)",
    "us-east-2": "US East (Ohio)",
    "us-west-2": "US West (Oregon)",
}
PREFIX = {"us-east-1": "", "us-east-2": "USE2-", "us-west-2": "USW2-"}


def item(
    sku: str,
    service: str,
    family: str | None,
    attributes: dict[str, str],
    dims: list[tuple[str, str | None, str, str]],
    *,
    unit: str,
    currency: str = "USD",
    published: str = PUBLISHED,
    effective: str = "2026-11-01T00:00:00Z",
) -> dict[str, Any]:
    """dims: (beginRange, endRange or None for Inf, price, description)."""
    term_key = f"{sku}.{ON_DEMAND}"
    dimensions = {}
    for i, (begin, end, price, description) in enumerate(dims):
        rate_code = f"{term_key}.{['6YS6EN2CT7', 'PGHJ3S3EYE', 'VF6T3GAUKQ', 'Q8YN9Q9BG4'][i]}"
        dimensions[rate_code] = {
            "unit": unit,
            "endRange": end or "Inf",
            "description": description,
            "appliesTo": [],
            "rateCode": rate_code,
            "beginRange": begin,
            "pricePerUnit": {currency: price},
        }
    product: dict[str, Any] = {"attributes": {"servicecode": service, **attributes}, "sku": sku}
    if family:
        product["productFamily"] = family
    return {
        "product": product,
        "serviceCode": service,
        "terms": {
            "OnDemand": {
                term_key: {
                    "priceDimensions": dimensions,
                    "sku": sku,
                    "effectiveDate": effective,
                    "offerTermCode": ON_DEMAND,
                    "termAttributes": {},
                }
            }
        },
        "version": "20261120183209",
        "publicationDate": published,
    }


def ec2_instance(
    sku: str,
    instance_type: str,
    region: str,
    price: str,
    marketoption: str = "OnDemand",
    **extra: str,
) -> dict[str, Any]:
    attrs = {
        "instanceType": instance_type,
        "regionCode": region,
        "location": REGION_NAMES[region],
        "locationType": "AWS Region",
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "licenseModel": "No License required",
        "marketoption": marketoption,
        "operation": "RunInstances",
        "usagetype": f"{PREFIX[region]}BoxUsage:{instance_type}",
        "instanceFamily": "Machine Learning ASIC Instances",
        **extra,
    }
    return item(
        sku,
        "AmazonEC2",
        "Compute Instance",
        attrs,
        [("0", None, price, f"${price} per On Demand Linux {instance_type} Instance Hour")],
        unit="Hrs",
    )


def usage_items(region: str, sku_prefix: str) -> list[dict[str, Any]]:
    p = PREFIX[region]
    loc = {"regionCode": region, "location": REGION_NAMES[region]}
    s = lambda n: f"{sku_prefix}{n:02d}".ljust(16, "X")  # noqa: E731
    return [
        item(
            s(1),
            "AmazonEC2",
            "Storage",
            {
                **loc,
                "volumeApiName": "gp3",
                "volumeType": "General Purpose",
                "usagetype": f"{p}EBS:VolumeUsage.gp3",
            },
            [("0", None, "0.0800000000", "$0.08 per GB-month of General Purpose (gp3)")],
            unit="GB-Mo",
        ),
        item(
            s(2),
            "AmazonS3",
            "Storage",
            {
                **loc,
                "storageClass": "General Purpose",
                "volumeType": "Standard",
                "usagetype": f"{p}TimedStorage-ByteHrs",
            },
            [
                ("0", "51200", "0.0230000000", "$0.023 per GB - first 50 TB / month"),
                ("51200", "512000", "0.0220000000", "$0.022 per GB - next 450 TB / month"),
                ("512000", None, "0.0210000000", "$0.021 per GB - storage over 500 TB / month"),
            ],
            unit="GB-Mo",
        ),
        item(
            s(3),
            "AmazonCloudWatch",
            "Data Payload",
            {**loc, "usagetype": f"{p}DataProcessing-Bytes", "group": "Ingested Logs"},
            [("0", None, "0.5000000000", "$0.50 per GB custom log data ingested")],
            unit="GB",
        ),
        item(
            s(4),
            "AmazonCloudWatch",
            "Data Payload",
            {**loc, "usagetype": f"{p}DataProcessing-Bytes-IA", "group": "Ingested Logs"},
            [("0", None, "0.2500000000", "$0.25 per GB Infrequent Access logs ingested")],
            unit="GB",
        ),
        item(
            s(5),
            "AmazonCloudWatch",
            "Storage Snapshot",
            {**loc, "usagetype": f"{p}TimedStorage-ByteHrs"},
            [("0", None, "0.0300000000", "$0.03 per GB-mo of log storage")],
            unit="GB-Mo",
        ),
        item(
            s(6),
            "AmazonCloudWatch",
            "Metric",
            {**loc, "usagetype": f"{p}CW:MetricMonitorUsage", "group": "Metric"},
            [
                ("0", "10000", "0.3000000000", "$0.30 per metric-month for the first 10,000"),
                ("10000", "250000", "0.1000000000", "$0.10 per metric-month for the next 240,000"),
                ("250000", "1000000", "0.0500000000", "$0.05 per metric-month, next 750,000"),
                ("1000000", None, "0.0200000000", "$0.02 per metric-month over 1,000,000"),
            ],
            unit="Metrics",
        ),
        item(
            s(7),
            "AWSDataTransfer",
            "Data Transfer",
            {
                "fromRegionCode": region,
                "fromLocation": REGION_NAMES[region],
                "toLocation": "External",
                "transferType": "AWS Outbound",
                "usagetype": f"{p or 'USE1-'}DataTransfer-Out-Bytes",
            },
            [
                ("0", "10240", "0.0900000000", "$0.09 per GB - first 10 TB / month"),
                ("10240", "51200", "0.0850000000", "$0.085 per GB - next 40 TB / month"),
                ("51200", "153600", "0.0700000000", "$0.070 per GB - next 100 TB / month"),
                ("153600", None, "0.0500000000", "$0.050 per GB - greater than 150 TB / month"),
            ],
            unit="GB",
        ),
        item(
            s(8),
            "AWSDataTransfer",
            "Data Transfer",
            {
                "fromRegionCode": region,
                "toRegionCode": "eu-west-1",
                "transferType": "InterRegion Outbound",
                "usagetype": f"{p or 'USE1-'}EU-AWS-Out-Bytes",
            },
            [("0", None, "0.0200000000", "$0.02 per GB to Europe (Ireland)")],
            unit="GB",
        ),
        item(
            s(9),
            "AWSDataTransfer",
            "Data Transfer",
            {
                "fromRegionCode": region,
                "toRegionCode": "ap-southeast-2",
                "transferType": "InterRegion Outbound",
                "usagetype": f"{p or 'USE1-'}APS2-AWS-Out-Bytes",
            },
            [("0", None, "0.0200000000", "$0.02 per GB to Asia Pacific (Sydney)")],
            unit="GB",
        ),
    ]


def get_products_page(items: list[dict[str, Any]], next_token: str | None = None) -> dict[str, Any]:
    page: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": [json.dumps(i) for i in items]}
    if next_token:
        page["NextToken"] = next_token
    return page

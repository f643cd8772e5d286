"""Billing data for the actuals tests: FOCUS 1.2 rows in AWS's column order, the bill of a run
of an estimate (the worked example), and a stage seeded with the example workload.

The rows are constructed from the FOCUS 1.2 column definitions and the FOCUS_1_2_AWS column
order (tests/events/billing/README.md); their values follow the constructed sample
tests/events/billing/focus_1_2_sample.csv (ILLUSTRATIVE rates, fake SKUs and ids).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.support.examples import EXAMPLE, ROOT

BILLING = ROOT / "tests" / "events" / "billing"
FOCUS_SAMPLE = BILLING / "focus_1_2_sample.csv"
CUR_SAMPLE = BILLING / "cur2_sample.csv"
CE_SAMPLE = BILLING / "ce_get_cost_and_usage_by_tag.json"
BUNDLED_PRICES = ROOT / "client" / "trncost_client" / "local" / "data" / "saved_price_list.json"
SAMPLE_ESTIMATE = "est-123"  # the estimate id the constructed samples' tags name
PAYER = "111122223333"


def focus_header() -> list[str]:
    """The FOCUS_1_2_AWS columns in AWS's order (the constructed sample's header)."""
    with FOCUS_SAMPLE.open(newline="") as f:
        return next(csv.reader(f))


def sample_text(path: Path, estimate_id: str) -> str:
    """A constructed sample with its estimate id (`est-123`) replaced by `estimate_id`."""
    return path.read_text().replace(SAMPLE_ESTIMATE, estimate_id)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def focus_row(header: list[str], **values: Any) -> list[str]:
    """One FOCUS row: `values` by column name, the rest as AWS leaves them (empty)."""
    base = {
        "BillingAccountId": PAYER,
        "BillingAccountName": "trncost-payer",
        "BillingCurrency": "USD",
        "ChargeCategory": "Usage",
        "ChargeFrequency": "Usage-Based",
        "InvoiceIssuerName": "Amazon Web Services, Inc.",
        "ProviderName": "AWS",
        "PublisherName": "Amazon Web Services, Inc.",
        "PricingCategory": "Standard",
        "PricingCurrency": "USD",
        "SubAccountId": "444455556666",
        "SubAccountName": "ml-research",
    }
    merged = {**base, **{k: v for k, v in values.items() if v is not None}}
    if "Tags" in merged and isinstance(merged["Tags"], dict):
        merged["Tags"] = json.dumps(merged["Tags"])
    return ["" if merged.get(c) is None else str(merged.get(c)) for c in header]


def csv_text(header: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


@dataclass(frozen=True)
class RunBill:
    """What the worked example's run was billed, before it is written out as FOCUS rows."""

    instances: int = 4
    hours_each: Decimal = Decimal("94.5")  # the forecast held 92.8 h
    instance_type: str = "trn2.48xlarge"
    instance_rate: Decimal = Decimal("35.76")
    ebs_gb_months: Decimal = Decimal("262.5")
    ebs_rate: Decimal = Decimal("0.08")
    s3_gb_months: Decimal = Decimal("860")
    s3_rate: Decimal = Decimal("0.023")
    transfer_gb: Decimal = Decimal("240")
    transfer_rate: Decimal = Decimal("0.09")
    log_gb: Decimal = Decimal("14")
    log_rate: Decimal = Decimal("0.50")
    prep_hours: Decimal = Decimal("48")
    prep_rate: Decimal = Decimal("2.90")  # the estimate's snapshot said 2.856
    inter_az_gb: Decimal = Decimal("250")  # billed, never estimated


def run_bill(
    estimate_id: str,
    workload_id: str,
    start: date,
    bill: RunBill = RunBill(),
    *,
    region: str = "us-east-2",
    tag_key: str = "trncost:estimate-id",
) -> str:
    """A FOCUS 1.2 file of a run of `estimate_id` from `start`: each instance's hours as daily
    rows, its EBS volumes, the data preparation instance, an inter-AZ transfer the estimate
    never had, and the rows a real bill has around them (another team's untagged instance,
    tax, a credit)."""
    header = focus_header()
    period = date(start.year, start.month, 1)
    nxt = (period + timedelta(days=32)).replace(day=1)
    day0 = datetime(start.year, start.month, start.day, tzinfo=UTC)
    tags = {tag_key: estimate_id, "trncost:workload-id": workload_id}
    kind = bill.instance_type
    common = {
        "BillingPeriodStart": _stamp(datetime(period.year, period.month, 1, tzinfo=UTC)),
        "BillingPeriodEnd": _stamp(datetime(nxt.year, nxt.month, 1, tzinfo=UTC)),
        "RegionId": region,
        "RegionName": "US East (Ohio)",
    }
    rows: list[list[str]] = []

    def usage(day: int, hours: Decimal, **values: Any) -> None:
        rows.append(
            focus_row(
                header,
                **common,
                ChargePeriodStart=_stamp(day0 + timedelta(days=day)),
                ChargePeriodEnd=_stamp(day0 + timedelta(days=day + 1)),
                ConsumedQuantity=hours,
                **values,
            )
        )

    for n in range(bill.instances):
        left, day = bill.hours_each, 0
        while left > 0:
            hours = min(Decimal(24), left)
            cost = hours * bill.instance_rate
            usage(
                day,
                hours,
                BilledCost=cost,
                ListCost=cost,
                EffectiveCost=cost,
                ContractedCost=cost,
                PricingQuantity=hours,
                PricingUnit="Hours",
                ConsumedUnit="Hours",
                ListUnitPrice=bill.instance_rate,
                ContractedUnitPrice=bill.instance_rate,
                ResourceId=f"i-0a1b2c3d4e5f6{n:04d}",
                ResourceType="instance",
                ServiceCategory="Compute",
                ServiceName="Amazon Elastic Compute Cloud",
                ServiceSubcategory="Virtual Machines",
                SkuId=f"EXAMPLESKU{kind.split('.')[0].upper()}",
                SkuMeter=f"USE2-BoxUsage:{kind}",
                ChargeDescription=f"${bill.instance_rate} per On Demand Linux {kind} Instance "
                "Hour (ILLUSTRATIVE RATE)",
                Tags=tags,
                x_Operation="RunInstances",
                x_ServiceCode="AmazonEC2",
            )
            left -= hours
            day += 1
    ebs = bill.ebs_gb_months * bill.ebs_rate
    usage(0, bill.ebs_gb_months, BilledCost=ebs, ListCost=ebs, EffectiveCost=ebs,
          PricingQuantity=bill.ebs_gb_months, PricingUnit="GB-Months", ListUnitPrice=bill.ebs_rate,
          ResourceId="vol-0a1b2c3d4e5f60011", ResourceType="volume", ServiceCategory="Storage",
          ServiceName="Amazon Elastic Compute Cloud", SkuId="EXAMPLESKUGP3001",
          SkuMeter="USE2-EBS:VolumeUsage.gp3", Tags=tags, x_ServiceCode="AmazonEC2")  # fmt: skip
    s3 = bill.s3_gb_months * bill.s3_rate
    usage(0, bill.s3_gb_months, BilledCost=s3, ListCost=s3, PricingQuantity=bill.s3_gb_months,
          PricingUnit="GB-Months", ResourceId="team-data", ResourceType="bucket",
          ServiceCategory="Storage", ServiceName="Amazon Simple Storage Service",
          SkuId="EXAMPLESKUS3STD1", SkuMeter="USE2-TimedStorage-ByteHrs", Tags=tags,
          x_ServiceCode="AmazonS3")  # fmt: skip
    out = bill.transfer_gb * bill.transfer_rate
    usage(2, bill.transfer_gb, BilledCost=out, ListCost=out, PricingQuantity=bill.transfer_gb,
          PricingUnit="GB", ServiceCategory="Networking", ServiceName="AWS Data Transfer",
          SkuId="EXAMPLESKUDTOUT1", SkuMeter="USE2-DataTransfer-Out-Bytes", Tags=tags,
          x_ServiceCode="AWSDataTransfer")  # fmt: skip
    logs = bill.log_gb * bill.log_rate
    usage(1, bill.log_gb, BilledCost=logs, ListCost=logs, PricingQuantity=bill.log_gb,
          PricingUnit="GB", ServiceCategory="Management and Governance",
          ServiceName="AmazonCloudWatch", SkuId="EXAMPLESKUCWLOG1",
          SkuMeter="USE2-DataProcessing-Bytes", Tags=tags,
          x_ServiceCode="AmazonCloudWatch")  # fmt: skip
    prep = bill.prep_hours * bill.prep_rate
    usage(0, bill.prep_hours, BilledCost=prep, ListCost=prep, EffectiveCost=prep,
          PricingQuantity=bill.prep_hours, PricingUnit="Hours", ListUnitPrice=bill.prep_rate,
          ResourceId="i-0a1b2c3d4e5f69999", ResourceType="instance", ServiceCategory="Compute",
          ServiceName="Amazon Elastic Compute Cloud", SkuId="EXAMPLESKUC7I16X",
          SkuMeter="USE2-BoxUsage:c7i.16xlarge", Tags=tags, x_ServiceCode="AmazonEC2")  # fmt: skip
    az = bill.inter_az_gb * Decimal("0.01")
    usage(1, bill.inter_az_gb, BilledCost=az, ListCost=az, EffectiveCost=az,
          PricingQuantity=bill.inter_az_gb, PricingUnit="GB", ServiceCategory="Networking",
          ServiceName="Amazon Elastic Compute Cloud", SkuId="EXAMPLESKUDTREG1",
          SkuMeter="USE2-DataTransfer-Regional-Bytes", Tags=tags,
          x_ServiceCode="AmazonEC2")  # fmt: skip
    # around the run: another team's instance, tax, a promotional credit
    usage(0, Decimal(24), BilledCost="2.4192", ListCost="2.4192", PricingQuantity=24,
          PricingUnit="Hours", ServiceName="Amazon Elastic Compute Cloud",
          SkuMeter="USE2-BoxUsage:m7i.large", x_ServiceCode="AmazonEC2")  # fmt: skip
    usage(0, Decimal(0), BilledCost="50.00", ListCost="0", ChargeCategory="Tax",
          ServiceName="Amazon Elastic Compute Cloud", Tags=tags)  # fmt: skip
    usage(0, Decimal(0), BilledCost="-100.00", ListCost="0", ChargeCategory="Credit",
          ServiceName="Amazon Elastic Compute Cloud", Tags=tags)  # fmt: skip
    return csv_text(header, rows)


def billed_total(bill: RunBill = RunBill()) -> Decimal:
    """What `run_bill` bills the run for (usage only: tax and the credit apart)."""
    return (
        bill.instances * bill.hours_each * bill.instance_rate
        + bill.ebs_gb_months * bill.ebs_rate
        + bill.s3_gb_months * bill.s3_rate
        + bill.transfer_gb * bill.transfer_rate
        + bill.log_gb * bill.log_rate
        + bill.prep_hours * bill.prep_rate
        + bill.inter_az_gb * Decimal("0.01")
    )


def seed_stage(services: Any, instance_type: str = "trn2.48xlarge") -> tuple[str, str]:
    """The example workload, its trials, the bundled (example) prices and the estimate of
    `instance_type` in `services`' table: (workload id, estimate id)."""
    from trncost_client.requestfile import load_request_file, request_inputs

    request = load_request_file(EXAMPLE)
    now = datetime.now(UTC).isoformat()
    services.records.put_workload(request.workload, now)
    for trial in request.trials:
        services.records.put_trial(trial, now, "example")
    catalog = services.settings.catalog
    services.snapshots.seed_example(
        json.loads(BUNDLED_PRICES.read_text()), catalog, file="saved_price_list.json"
    )
    inp = next(i for i in request_inputs(request) if i.candidate.instance_type == instance_type)
    version = services.estimates.create(
        request.workload.workload_id, inp.candidate, inp.assumptions
    )
    return request.workload.workload_id, version.estimate_id

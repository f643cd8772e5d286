"""The six cost components. Each charge goes through the ledger with its price and inputs.

Total = instances + storage + data transfer + logs + data preparation + adaptation & reruns.
Usage quantities a trial measured are scaled by instance-hours:
    quantity = (Σ trial usage / Σ trial instance-hours) × n × held hours
Monthly-tiered prices are applied per billing month, starting at the first tier (the project's
usage alone), which the input table states as an assumption. A month is 730 hours: held
months = held hours / 730, billing months = max(1, ceil(held hours / 730)).

Each component charges its lines into the ledger and returns nothing. A quantity neither
measured nor stated is left out with a warning (never a default); a price with no basis is
PENDING (the line keeps its quantity, no amount).

References
----------
DESIGN.md, "The cost model"; seeds/000 (訓練實例費用 + 儲存費用 + 資料傳輸費用 + 日誌費用 + 資料準備
費用 + 適配與重跑成本, and the EC2, EBS, S3 and CloudWatch pricing pages); the Price List API's
price dimensions (tiers [beginRange, endRange) and units), read by trncost.pricing.
"""

from __future__ import annotations

import math
from decimal import Decimal

from trncost.estimate.evidence import Evidence
from trncost.estimate.ledger import Ledger
from trncost.estimate.measured import Measured
from trncost.estimate.money import (
    HOURS_PER_MONTH,
    dec,
    ec2_billed_seconds,
    sagemaker_billed_seconds,
)
from trncost.estimate.timing import Number, TimeModel
from trncost.model.assumptions import Assumed, Assumptions
from trncost.model.candidate import Candidate, PurchaseOption
from trncost.model.estimate import Component
from trncost.model.price import PriceKey, UsageItem
from trncost.model.provenance import TrialMeasurement, UserAssumption, measured
from trncost.model.provenance import assumed as assumed_
from trncost.model.trial import TrialRun


class CostContext:
    """What every component needs: the candidate (`n` [instances]), the held time (`held_h`
    [h], `held_months` = held hours / 730 [months], `billing_months` [months]), the ledger,
    the evidence.

    Parameters
    ----------
    ev : Evidence
        The candidate's trials: usage rates, checkpoint size, every trial run.
    tm : TimeModel
        A feasible time to target.
    assumptions : Assumptions
        The stated quantities and price overrides.
    ledger : Ledger
        Receives the rows, lines and warnings.
    """

    def __init__(
        self, ev: Evidence, tm: TimeModel, assumptions: Assumptions, ledger: Ledger
    ) -> None:
        assert tm.time is not None
        self.ev, self.tm, self.a, self.ledger = ev, tm, assumptions, ledger
        self.c: Candidate = ev.candidate
        self.n = self.c.instance_count
        self.held_h = tm.time.held_h
        self.held_months = dec(self.held_h) / HOURS_PER_MONTH
        self.billing_months = max(1, math.ceil(self.held_h / float(HOURS_PER_MONTH)))
        self.months_row = ledger.derived(
            "time:held_months",
            "held time in months",
            float(self.held_months),
            "months",
            "held hours / 730",
            [tm.held_row],
        )
        self.tier_row = ledger.row(
            "assumption:tier_position",
            "monthly tiers start at the first tier",
            True,
            None,
            UserAssumption(
                name="tier position",
                note="the project's usage alone; other usage in the account is ignored",
            ),
        )

    def assumed(
        self, name: str, label: str, assumed: Assumed[Number] | None, unit: str | None
    ) -> Measured[float] | None:
        """A stated quantity, the assumption `name`, as the input row `assumption:<name>`
        labelled `label`, in `unit`.

        Parameters
        ----------
        assumed : Assumed or None
            The stated value [as stated] and its note.

        Returns
        -------
        Measured[float] or None
            The value [as stated] and its row; None when nothing is stated.
        """
        if assumed is None:
            return None
        row = self.ledger.row(
            f"assumption:{name}", label, assumed.value, unit, assumed_(name, assumed.note)
        )
        return Measured(float(assumed.value), row)

    def scaled_usage(
        self, field: str, label: str, unit: str, assumed: Assumed[float] | None
    ) -> Measured[float] | None:
        """A run total of usage `field` (`label`, in `unit`): stated by the user, else
        rate per instance-hour × n × held hours, the trials' rate scaled to the run.

        Parameters
        ----------
        assumed : Assumed[float] or None
            The run total the request states [as stated]: it wins over the trials.

        Returns
        -------
        Measured[float] or None
            The run total [as stated] and its row; None when neither stated nor measured.
        """
        stated = self.assumed(field, f"{label} over the run", assumed, unit)
        if stated is not None:
            return stated
        per = self.ev.usage_per_instance_hour(field, label, unit)
        if per.value is None:
            return None
        value = per.value * self.n * self.held_h
        row = self.ledger.derived(
            f"usage:{field}",
            f"{label} over the run",
            value,
            unit,
            "rate per instance-hour × n × held hours",
            [per.row_id, "candidate:instance_count", self.tm.held_row],
        )
        return Measured(value, row)


# -- instances -----------------------------------------------------------------------------
def instances(cx: CostContext) -> None:
    """Charge the candidate's n instances for the held time, on `cx`'s ledger::

        n × billed seconds / 3600 × hourly rate                                  [USD]
            billed seconds: max(60, ceil(held seconds)) on EC2 (per instance),
                            ceil(held seconds) on SageMaker (billable seconds)
        blocks × upfront fee per block                 (an EC2 Capacity Block quote) [USD]
            blocks = ceil(held h / block hours) × ceil(n / block instances)

    References
    ----------
    https://aws.amazon.com/ec2/pricing/on-demand/ (per-second billing, 60 s minimum);
    SageMaker `BillableTimeInSeconds` (DescribeTrainingJob); Capacity Blocks' upfront fee:
    https://aws.amazon.com/ec2/capacityblocks/pricing/. DESIGN.md, "The cost model".
    """
    c, led = cx.c, cx.ledger
    key = PriceKey.for_instance(c.instance_type, c.region, c.purchase_option, c.platform)
    rate = led.rate(key)
    held_s = cx.held_h * 3600
    terms = led.capacity_block_terms(key)
    if terms is not None:
        blocks_in_time = math.ceil(cx.held_h / terms.duration_hours)
        blocks_in_count = math.ceil(c.instance_count / terms.instance_count)
        blocks = blocks_in_time * blocks_in_count
        row = led.derived(
            "billing:capacity_blocks",
            "capacity blocks reserved",
            blocks,
            "blocks",
            "ceil(held h / block hours) × ceil(n / block instances)",
            [cx.tm.held_row, "candidate:instance_count", rate.row_id],
        )
        led.charge(
            Component.instances,
            f"{c.instance_type} capacity blocks",
            quantity=Decimal(blocks),
            unit="block",
            rate=rate,
            inputs=[row],
            formula="blocks × upfront fee per block",
        )
        return
    if c.on_sagemaker:
        billed = sagemaker_billed_seconds(held_s)
        rule, formula = "SageMaker billable seconds, no minimum", "ceil(held seconds)"
    else:
        billed = ec2_billed_seconds(held_s)
        rule, formula = "EC2 per-second billing, 60 s minimum", "max(60, ceil(held seconds))"
    billed_row = led.derived(
        "billing:seconds_per_instance",
        f"billed seconds per instance ({rule})",
        billed,
        "s",
        formula,
        [cx.tm.held_row],
    )
    hours = Decimal(c.instance_count) * Decimal(billed) / Decimal(3600)
    led.charge(
        Component.instances,
        f"{c.instance_count}× {c.instance_type}",
        quantity=hours,
        unit="instance-hour",
        rate=rate,
        inputs=["candidate:instance_count", billed_row],
        formula="n × billed seconds / 3600 × hourly rate",
    )


# -- storage -------------------------------------------------------------------------------
def storage(cx: CostContext) -> None:
    """Charge EBS over the held time and S3 for the dataset, checkpoints and artifacts::

        GB per instance × n × held months × GB-month rate                        [USD]
        months × tiered(GB stored)                                               [USD]
            GB stored = dataset GB + largest artifacts GB a trial kept
                        + checkpoint size × retained
            months    = held months + months after run

    on `cx`'s ledger. A size not stated (EBS per instance, `workload.dataset_gb`,
    `checkpoints_retained`) or an unmeasured checkpoint size leaves its part out, with a
    warning. SageMaker volumes are priced at the EBS gp3 rate (`sagemaker_storage_at_ebs_rate`).

    References
    ----------
    https://aws.amazon.com/ebs/pricing/ (gp3, GB-month); https://aws.amazon.com/s3/pricing/
    (S3 Standard, tiered GB-month); DESIGN.md, "The cost model"; seeds/000 (儲存容量).
    """
    led, a = cx.ledger, cx.a
    ebs = cx.assumed("ebs_gb_per_instance", "EBS gp3 per instance", a.ebs_gb_per_instance, "GB")
    if ebs is None:
        led.warn("ebs_not_stated", "no EBS volume size stated: EBS storage is left out")
    else:
        gb_months = dec(ebs.value) * cx.n * cx.held_months
        led.charge(
            Component.storage,
            "EBS gp3 volumes",
            quantity=gb_months,
            unit="GB-month",
            rate=led.rate(PriceKey.for_usage(UsageItem.ebs_gp3, cx.c.region)),
            inputs=[ebs.row_id, "candidate:instance_count", cx.months_row],
            formula="GB per instance × n × held months × GB-month rate",
        )
        if cx.c.on_sagemaker:
            led.warn(
                "sagemaker_storage_at_ebs_rate",
                "SageMaker bills a training job's ML storage volumes in AmazonSageMaker at its "
                "own GB-month rate; this estimate prices them at the EC2 EBS gp3 rate of the "
                "snapshot (trncost does not snapshot SageMaker's storage rate yet)",
            )

    stored: list[tuple[Decimal, str]] = []
    w = cx.ev.workload
    if w.dataset_gb is not None:
        stored.append(
            (
                dec(w.dataset_gb),
                led.row(
                    "workload:dataset_gb",
                    "dataset in S3 Standard",
                    w.dataset_gb,
                    "GB",
                    UserAssumption(name="dataset size", note=w.dataset_id),
                ),
            )
        )
    else:
        led.warn(
            "dataset_size_not_stated", "workload.dataset_gb not stated: dataset storage is left out"
        )
    artifacts = cx.ev.usage_max("storage_gb", "S3 artifacts kept by a run", "GB")
    if artifacts.value:
        stored.append((dec(artifacts.value), artifacts.row_id))
    retained = cx.assumed(
        "checkpoints_retained", "checkpoints retained in S3", a.checkpoints_retained, "checkpoints"
    )
    size = cx.ev.checkpoint_size_gb()
    if retained is not None and size.value is not None:
        gb = dec(size.value) * dec(retained.value)
        stored.append(
            (
                gb,
                led.derived(
                    "storage:checkpoints_gb",
                    "retained checkpoints",
                    float(gb),
                    "GB",
                    "checkpoint size × retained",
                    [size.row_id, retained.row_id],
                ),
            )
        )
    elif retained is None:
        led.warn(
            "checkpoints_retained_not_stated",
            "assumptions.checkpoints_retained not stated: checkpoint storage is left out",
        )
    if not stored:
        return
    after = cx.assumed(
        "storage_months_after_run",
        "months kept after the run",
        a.storage_months_after_run,
        "months",
    )
    months = cx.held_months + (dec(after.value) if after else Decimal(0))
    gb = sum((q for q, _ in stored), Decimal(0))
    months_row = led.derived(
        "storage:s3_months",
        "S3 months billed",
        float(months),
        "months",
        "held months + months after run",
        [cx.months_row, *([after.row_id] if after else [])],
    )
    led.charge(
        Component.storage,
        "S3 Standard (dataset, checkpoints, artifacts)",
        quantity=gb,
        unit="GB-month",
        periods=months,
        rate=led.rate(PriceKey.for_usage(UsageItem.s3_standard, cx.c.region)),
        inputs=[*(r for _, r in stored), months_row, cx.tier_row],
        formula="months × tiered(GB stored)",
    )


# -- data transfer ---------------------------------------------------------------------------
def data_transfer(cx: CostContext) -> None:
    """Charge data transfer out to the internet and between regions, on `cx`'s ledger::

        billing months × tiered(total / billing months)                          [USD]

    The run total [GB] is stated (`transfer_out_gb`, `transfer_inter_region_gb`) or scaled
    from the trials (`CostContext.scaled_usage`), spread evenly over its billing months.

    References
    ----------
    https://aws.amazon.com/ec2/pricing/on-demand/ ("Data Transfer", tiered per month);
    DESIGN.md, "The cost model"; seeds/000 (資料傳輸費用).
    """
    led, a = cx.ledger, cx.a
    for field, item, label, assumed in (
        (
            "transfer_out_gb",
            UsageItem.transfer_out,
            "data transfer out to the internet",
            a.transfer_out_gb,
        ),
        (
            "transfer_inter_region_gb",
            UsageItem.transfer_inter_region,
            "inter-region data transfer",
            a.transfer_inter_region_gb,
        ),
    ):
        q = cx.scaled_usage(field, label, "GB", assumed)
        if q is None:
            led.warn(f"{field}_not_measured", f"{label} neither measured nor stated: left out")
            continue
        _monthly(cx, Component.data_transfer, label, q, "GB", item)


def _monthly(
    cx: CostContext, component: Component, name: str, q: Measured[float], unit: str, item: UsageItem
) -> None:
    """A run total spread evenly over its billing months, tiered per month."""
    k = Decimal(cx.billing_months)
    cx.ledger.charge(
        component,
        name,
        quantity=dec(q.value) / k,
        unit=unit,
        periods=k,
        rate=cx.ledger.rate(PriceKey.for_usage(item, cx.c.region)),
        inputs=[q.row_id, cx.months_row, cx.tier_row],
        formula="billing months × tiered(total / billing months)",
    )


# -- logs ----------------------------------------------------------------------------------
def logs(cx: CostContext) -> None:
    """Charge CloudWatch Logs ingestion and storage and custom metrics, on `cx`'s ledger::

        ingestion: billing months × tiered(total / billing months)               [USD]
        storage:   GB × (held months / 2 + retention months) × GB-month rate     [USD]
        metrics:   held months × tiered(metrics)                                 [USD]

    The GB ingested are stated or scaled from the trials; logs accumulate over the run (half
    stored on average), then are kept for the stated retention months. The metric count is
    stated, else the largest a trial published (a count, not scaled).

    References
    ----------
    https://aws.amazon.com/cloudwatch/pricing/; DESIGN.md, "The cost model"; seeds/000 (日誌).
    """
    led, a = cx.ledger, cx.a
    ingest = cx.scaled_usage("log_ingest_gb", "CloudWatch Logs ingested", "GB", a.log_ingest_gb)
    if ingest is None:
        led.warn(
            "log_ingest_gb_not_measured",
            "CloudWatch Logs volume neither measured nor stated: left out",
        )
    else:
        _monthly(
            cx, Component.logs, "CloudWatch Logs ingestion", ingest, "GB", UsageItem.logs_ingestion
        )
        after = cx.assumed(
            "log_retention_months_after_run",
            "log retention after the run",
            a.log_retention_months_after_run,
            "months",
        )
        # Logs accumulate over the run (on average half stored), then are kept whole.
        gb_months = dec(ingest.value) * (cx.held_months / 2 + (dec(after.value) if after else 0))
        led.charge(
            Component.logs,
            "CloudWatch Logs storage",
            quantity=gb_months,
            unit="GB-month",
            rate=led.rate(PriceKey.for_usage(UsageItem.logs_storage, cx.c.region)),
            inputs=[ingest.row_id, cx.months_row, *([after.row_id] if after else [])],
            formula="GB × (held months / 2 + retention months) × GB-month rate",
        )
    metrics = cx.assumed(
        "custom_metrics", "custom metrics", a.custom_metrics, "metrics"
    ) or cx.ev.usage_max("custom_metrics", "custom metrics", "metrics")
    if metrics.value is None:
        led.warn(
            "custom_metrics_not_measured",
            "custom metric count neither measured nor stated: left out",
        )
        return
    led.charge(
        Component.logs,
        "CloudWatch custom metrics",
        quantity=dec(metrics.value),
        unit="metric-month",
        periods=cx.held_months,
        rate=led.rate(PriceKey.for_usage(UsageItem.custom_metrics, cx.c.region)),
        inputs=[metrics.row_id, cx.months_row, cx.tier_row],
        formula="held months × tiered(metrics)",
    )


# -- data preparation ------------------------------------------------------------------------
def data_preparation(cx: CostContext) -> None:
    """Charge the stated preprocessing (`assumptions.data_preparation`), on `cx`'s ledger::

        instance-hours × hourly rate                                             [USD]

    at the on-demand price of its instance type, in its region or the candidate's. Stated
    only, never measured; not stated: left out, with a warning.

    References
    ----------
    DESIGN.md, "The cost model" (preprocessing instance-hours); seeds/000 (前處理).
    """
    led, prep = cx.ledger, cx.a.data_preparation
    if prep is None:
        led.warn(
            "data_preparation_not_stated",
            "no data-preparation compute stated: preprocessing is left out",
        )
        return
    row = led.row(
        "assumption:data_preparation",
        f"preprocessing on {prep.instance_type}",
        prep.instance_hours,
        "instance-hour",
        UserAssumption(name="data preparation", note=prep.note),
    )
    key = PriceKey.for_instance(prep.instance_type, prep.region or cx.c.region)
    led.charge(
        Component.data_preparation,
        f"preprocessing ({prep.instance_type})",
        quantity=dec(prep.instance_hours),
        unit="instance-hour",
        rate=led.rate(key),
        inputs=[row],
        formula="instance-hours × hourly rate",
    )


# -- adaptation & reruns ---------------------------------------------------------------------
def adaptation_reruns(cx: CostContext) -> None:
    """Charge every trial of the candidate (pooled or excluded: it ran and was billed) and
    the stated engineering time, on `cx`'s ledger::

        instance-seconds / 3600 × on-demand hourly rate          (each trial)    [USD]
            instance-seconds: as billed, else n × billed wall (+ reruns) seconds
        hours × hourly cost                          (engineering: a labour line) [USD]

    Trials are priced on demand, whatever the candidate's purchase option. Engineering needs
    both `engineering_hours` and `engineering_hourly_usd`.

    References
    ----------
    DESIGN.md, "The cost model" and principle 8; seeds/000 (適配與重跑成本).
    """
    led = cx.ledger
    for t in cx.ev.all_trials:  # excluded trials ran and were billed: they count as cost
        _trial_cost(cx, t)
    eng = cx.a.engineering_cost_inputs()
    if eng is None:
        led.warn(
            "engineering_not_stated", "no engineering hours stated: adaptation effort is left out"
        )
        return
    stated_hours, stated_hourly = eng
    hours, hourly = stated_hours.value, stated_hourly.value
    hours_row = led.row(
        "assumption:engineering_hours",
        "engineering hours for adaptation",
        hours,
        "h",
        UserAssumption(name="engineering_hours", note=stated_hours.note),
    )
    rate_row = led.row(
        "assumption:engineering_hourly_usd",
        "engineering cost per hour",
        hourly,
        "USD/h",
        UserAssumption(name="engineering_hourly_usd", note=stated_hourly.note),
    )
    led.charge_amount(
        Component.adaptation_reruns,
        "engineering (adaptation, debugging)",
        quantity=hours,
        unit="h",
        rate_usd=hourly,
        amount=dec(hours) * hourly,
        inputs=[hours_row, rate_row],
        formula="hours × hourly cost",
    )


def _trial_cost(cx: CostContext, t: TrialRun) -> None:
    led, tc = cx.ledger, t.candidate
    if t.billed_instance_seconds is not None:
        seconds = dec(t.billed_instance_seconds)
        how = "as billed"
    else:
        per = sagemaker_billed_seconds if tc.on_sagemaker else ec2_billed_seconds
        seconds = Decimal(tc.instance_count * per(t.wall.total_s))
        if t.reliability.rerun_s > 0:
            seconds += Decimal(tc.instance_count * per(t.reliability.rerun_s))
        how = "n × billed wall (+ reruns)"
    row = led.row(
        f"trial:{t.trial_id}:instance_seconds",
        f"trial {t.trial_id} ({t.phase}, {t.status}) instance-seconds",
        float(seconds),
        "instance-s",
        _trial_measurement(t, f"billed instance-seconds, {how}"),
    )
    # Trials are priced on demand: that is what a trial run is billed at unless stated.
    key = PriceKey.for_instance(tc.instance_type, tc.region, PurchaseOption.on_demand, tc.platform)
    led.charge(
        Component.adaptation_reruns,
        f"trial {t.trial_id} ({t.phase}, {tc.instance_count}× {tc.instance_type})",
        quantity=seconds / Decimal(3600),
        unit="instance-hour",
        rate=led.rate(key),
        inputs=[row],
        formula="instance-seconds / 3600 × on-demand hourly rate",
    )


def _trial_measurement(t: TrialRun, metric: str) -> TrialMeasurement:
    return measured([t.trial_id], metric, [t.code_version], [t.dataset_id])


COMPONENTS = (instances, storage, data_transfer, logs, data_preparation, adaptation_reruns)

"""Physical upper bounds of every numeric input, defined once, with why each is where it is.

A bound is far above anything real (a training run, a team, a price) and far below what would
break the arithmetic: the Decimal ledger (`trncost.estimate.ledger`) keeps money to the
micro-dollar in Python's default 28-digit context, so an amount stays exact while it is below
1e21 USD (21 + 6 digits); a float quantity has 17 significant digits, a Price List rate about
10, and their product fits in 28. With every input inside its bound, no line can come near
that: the engine still refuses (422) any line above `LEDGER_MAX_USD` rather than round it.

A value above its bound is a 422 naming the field (pydantic's `le`), never a 500.

| bound              | value            | why                                                  |
|--------------------|------------------|------------------------------------------------------|
| MAX_WORK           | 1e18 units       | tokens, samples or steps of a target or a trial: the |
|                    |                  | largest published runs are ~1e14 tokens              |
| MAX_PARAMETERS     | 1e15             | model parameters (largest models: ~2e12)             |
| MAX_PER_UNIT       | 1e9              | tokens per sample, samples per step                  |
| MAX_THROUGHPUT     | 1e15 units/s     | a measured rate (a 100k-chip cluster: ~1e9 tokens/s) |
| MAX_SECONDS        | 1e9 s            | one span of wall time (~31 years)                    |
| MAX_INSTANCE_S     | 1e14 s           | billed instance-seconds (100k instances × 31 years)  |
| MAX_HOURS          | 1e8 h            | hours of people or instances (~11,000 years)         |
| MAX_MONTHS         | 1200             | months of retention after a run (100 years)          |
| MAX_GB             | 1e9 GB           | data held or moved (an exabyte)                      |
| MAX_COUNT          | 1e9              | checkpoints, metrics, errors, saves, reruns          |
| MAX_FAILURE_RATE   | 100 /inst-hour   | one failure every 36 s per instance                  |
| MAX_RATE_USD       | 1e8 USD per unit | a unit price (an instance hour is ~1e2; a Capacity   |
|                    |                  | Block's upfront fee, 64 instances × 26 weeks: ~1e7)  |
| MAX_HOURLY_USD     | 1e4 USD/h        | a person's or an instance's hourly rate              |
| MAX_TIER_QUANTITY  | 1e15             | a Price List tier boundary (GB, requests, hours)     |
| MAX_USD            | 1e12 USD         | a budget, a credit grant                             |
| MAX_METRIC         | 1e12             | a quality metric's value or threshold (a loss, an    |
|                    |                  | accuracy, a perplexity)                              |
| MAX_ACCELERATOR_HOURS | 1e12 h        | a fleet's accelerator-hours (1e6 accelerators × 1e5 h) |
| MAX_PRIOR_SHAPE    | 1e6              | a failure prior's strength (failures of evidence)    |
| LEDGER_MAX_USD     | 1e18 USD         | the largest line the ledger computes (see above)     |
| MAX_HELD_HOURS     | 1e8 h            | a time to target beyond this is infeasible           |
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError

MAX_WORK = 1e18
MAX_PARAMETERS = 1e15
MAX_PER_UNIT = 1e9
MAX_THROUGHPUT = 1e15
MAX_SECONDS = 1e9
MAX_INSTANCE_S = 1e14
MAX_HOURS = 1e8
MAX_MONTHS = 1200.0
MAX_GB = 1e9
MAX_COUNT = 1_000_000_000
MAX_FAILURE_RATE = 100.0
MAX_RATE_USD = Decimal(100_000_000)
MAX_HOURLY_USD = Decimal(10_000)
MAX_TIER_QUANTITY = Decimal(10) ** 15
MAX_USD = Decimal(10) ** 12
MAX_METRIC = 1e12
MAX_ACCELERATOR_HOURS = 1e12
MAX_PRIOR_SHAPE = 1e6
LEDGER_MAX_USD = Decimal(10) ** 18
MAX_HELD_HOURS = 1e8

# -- the field types ------------------------------------------------------------------------------
# Money (Decimal, never NaN or infinite) and physical quantities (float, finite), each bounded.
# A quantity is a JSON number: `true` or `"5"` is refused (issue 23: pydantic's lax mode took
# them as 1 and 5, and hostile trial records were stored), as NaN and infinities are.


def a_number(value: object) -> object:
    """`value` unchanged unless it is a boolean or text standing in for a number."""
    if isinstance(value, bool | str | bytes):
        raise PydanticCustomError(
            "number_type",
            "Input should be a valid number, not {kind}",
            {"kind": "a boolean" if isinstance(value, bool) else "text"},
        )
    return value


Numeric = BeforeValidator(a_number)
RateUsd = Annotated[Decimal, Field(ge=0, le=MAX_RATE_USD, allow_inf_nan=False)]
HourlyUsd = Annotated[Decimal, Field(ge=0, le=MAX_HOURLY_USD, allow_inf_nan=False)]
PositiveHourlyUsd = Annotated[Decimal, Field(gt=0, le=MAX_HOURLY_USD, allow_inf_nan=False)]
Usd = Annotated[Decimal, Field(ge=0, le=MAX_USD, allow_inf_nan=False)]
TierQuantity = Annotated[Decimal, Field(ge=0, le=MAX_TIER_QUANTITY, allow_inf_nan=False)]
WorkAmount = Annotated[float, Numeric, Field(ge=0, le=MAX_WORK, allow_inf_nan=False)]
PositiveWorkAmount = Annotated[float, Numeric, Field(gt=0, le=MAX_WORK, allow_inf_nan=False)]
Parameters = Annotated[float, Numeric, Field(gt=0, le=MAX_PARAMETERS, allow_inf_nan=False)]
PerUnit = Annotated[float, Numeric, Field(gt=0, le=MAX_PER_UNIT, allow_inf_nan=False)]
Throughput = Annotated[float, Numeric, Field(gt=0, le=MAX_THROUGHPUT, allow_inf_nan=False)]
Seconds = Annotated[float, Numeric, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
PositiveSeconds = Annotated[float, Numeric, Field(gt=0, le=MAX_SECONDS, allow_inf_nan=False)]
InstanceSeconds = Annotated[float, Numeric, Field(gt=0, le=MAX_INSTANCE_S, allow_inf_nan=False)]
Hours = Annotated[float, Numeric, Field(ge=0, le=MAX_HOURS, allow_inf_nan=False)]
PositiveHours = Annotated[float, Numeric, Field(gt=0, le=MAX_HOURS, allow_inf_nan=False)]
Months = Annotated[float, Numeric, Field(ge=0, le=MAX_MONTHS, allow_inf_nan=False)]
Gigabytes = Annotated[float, Numeric, Field(ge=0, le=MAX_GB, allow_inf_nan=False)]
Count = Annotated[int, Numeric, Field(ge=0, le=MAX_COUNT)]
PositiveCount = Annotated[int, Numeric, Field(ge=1, le=MAX_COUNT)]
FailureRate = Annotated[float, Numeric, Field(ge=0, le=MAX_FAILURE_RATE, allow_inf_nan=False)]
MetricValue = Annotated[float, Numeric, Field(ge=-MAX_METRIC, le=MAX_METRIC, allow_inf_nan=False)]

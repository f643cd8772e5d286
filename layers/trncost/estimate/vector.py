"""The time and cost model of one estimate, re-expressed over numpy arrays.

The Monte Carlo and the tornado evaluate thousands of variants of one estimate; calling the
pydantic engine for each would be far too slow. This module rebuilds the same formulas
(timing.py and costs.py) from the deterministic estimate: its input rows give the constants,
its line items say which formula each line follows (by the input rows each line uses).

Drift guard: at construction every line is re-evaluated at the deterministic inputs and
compared with the engine's amount (or pending quantity); a line that does not match, or that
follows no known formula, is held at the engine's figure and named in `notes`. Tests check
that a zero-spread Monte Carlo reproduces `estimate()` to the cent for arbitrary scenarios.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NoReturn, overload

import numpy as np
from numpy.typing import NDArray

from trncost.estimate.ledger import Ledger
from trncost.estimate.money import EC2_MINIMUM_BILLED_SECONDS, HOURS_PER_MONTH
from trncost.estimate.vector_tiers import Tiers
from trncost.model.estimate import Estimate, EstimateInput, InputRow, LineItem
from trncost.model.price import PriceKey

Array = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
Quantity = Array | float  # one value per draw, or one for all draws (broadcast)
Values = Mapping[str, Quantity]  # input-table row id → its value(s)
# a line's (quantity per period, periods) as a function of (held hours, values)
QuantityFn = Callable[[Array, Values], tuple[Quantity, Quantity]]
MONTH_H = float(HOURS_PER_MONTH)
MONTHLY_FIELDS = ("transfer_out_gb", "transfer_inter_region_gb", "log_ingest_gb")
TIER_ROW = "assumption:tier_position"
MONTHS_ROW = "time:held_months"


@dataclass
class Line:
    """One line item: quantity per period and periods as functions of (held hours, values)."""

    name: str
    price_key: str | None
    price_row: str | None
    tiers: Tiers | None  # None while the price is PENDING
    qty: QuantityFn
    inputs: tuple[str, ...] = ()  # the value rows this line reads
    fixed_amount: float | None = None  # held at the engine's figure
    fixed_quantity: float | None = None

    def evaluate(self, held_h: Array, v: Values, factors: Values) -> tuple[Quantity, Quantity]:
        """(amount [USD], pending quantity [unit of the price]), the other one 0, at held time
        `held_h` [h] per draw, input rows `v` and price `factors` (the tornado's × price)."""
        if self.fixed_amount is not None:
            return self.fixed_amount * _factor(factors, self.price_row), 0.0
        if self.fixed_quantity is not None:
            return 0.0, self.fixed_quantity
        q, periods = self.qty(held_h, v)
        if self.tiers is None:
            return 0.0, periods * q
        amount = self.tiers.amount(q)
        factor = _factor(factors, self.price_row)
        if (
            isinstance(amount, np.ndarray)
            and amount.ndim
            and np.broadcast_shapes(amount.shape, np.shape(periods), np.shape(factor))
            == amount.shape
        ):
            # in place (amount is a fresh array): two 100,000-sample temporaries fewer per line
            amount *= periods
            amount *= factor
            return amount, 0.0
        return periods * amount * factor, 0.0

    @property
    def pending_key(self) -> str | None:
        """The price key this line's quantity waits for; None when the line has an amount."""
        return self.price_key if self.tiers is None and self.fixed_amount is None else None


def _factor(factors: Values, row: str | None) -> Quantity:
    return factors.get(row, 1.0) if row is not None else 1.0


@dataclass
class Outcome:
    """The vector model's figures per draw (each field's comment says what, and its unit)."""

    known: Array  # USD over priced lines; nan where infeasible
    pending: dict[str, Array]  # price key → quantity; nan where infeasible
    total_h: Array  # inf where infeasible
    held_h: Array
    feasible: BoolArray


@dataclass
class VectorModel:
    """One estimate's time and cost model over arrays; `point`: every row's value."""

    inp: EstimateInput
    est: Estimate
    point: dict[str, float]  # the deterministic value of every row the model reads
    rate_row: str
    lam_row: str
    restart_row: str | None
    idle_row: str | None
    interval: float | None
    save: float | None
    lines: list[Line] = field(default_factory=list)
    pending_units: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    # -- time ------------------------------------------------------------------------------
    def time(self, v: Values) -> tuple[Array, Array, BoolArray]:
        """(total seconds [s], inf where infeasible; held seconds [s]; feasible) exactly as
        timing.py computes them, at the row values `v` (any other row at its value)."""
        p = self.point
        rate = np.asarray(v.get(self.rate_row, p[self.rate_row]), dtype=float)
        steady_s = p["workload:target"] / rate
        checkpoint_s: Quantity
        if self.interval is not None and self.save is not None:
            checkpoint_s = steady_s / self.interval
            if isinstance(checkpoint_s, np.ndarray) and checkpoint_s.ndim:
                np.floor(checkpoint_s, out=checkpoint_s)  # in place: one temporary fewer
                checkpoint_s *= self.save
            else:
                checkpoint_s = np.floor(checkpoint_s) * self.save
        else:
            checkpoint_s = 0.0
        eval_s = steady_s * p["time:evaluation_fraction"]
        # per-run setup (timing.py: once per run and again per restart)
        setup = p.get("time:other_s", 0.0)
        # ((setup + compile + warm-up) + steady) + checkpoints + evaluation, in place where arrays
        base_s = steady_s + (setup + p["time:compile_s"] + p["time:warmup_s"])
        if (
            isinstance(base_s, np.ndarray)
            and base_s.ndim
            and np.broadcast_shapes(base_s.shape, np.shape(checkpoint_s), np.shape(eval_s))
            == base_s.shape
        ):
            base_s += checkpoint_s
            base_s += eval_s
        else:
            base_s = base_s + checkpoint_s + eval_s
        lam = v.get(self.lam_row, p[self.lam_row])
        restart = v.get(self.restart_row, p[self.restart_row]) if self.restart_row else 0.0
        lost = self.interval if self.interval else base_s
        loss_h = (restart + setup + lost / 2) / 3600
        denominator = 1 - lam * p["candidate:instance_count"] * loss_h
        base_s, denominator = np.broadcast_arrays(base_s, denominator)
        feasible = denominator > 0
        if feasible.all():
            total_s = base_s / denominator
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                total_s = np.where(feasible, base_s / denominator, np.inf)
        idle = v.get(self.idle_row, p[self.idle_row]) if self.idle_row else 0.0
        held_s = total_s / (1 - idle)
        return total_s, held_s, feasible

    def evaluate(self, v: Values, factors: Values | None = None) -> Outcome:
        """The time and every line at the row values `v` and price `factors` (× price)."""
        total_s, held_s, feasible = self.time(v)
        all_ok = bool(feasible.all())
        held_h = held_s / 3600 if all_ok else np.where(feasible, held_s / 3600, 0.0)
        factors = factors or {}
        known = np.zeros(np.shape(held_h))
        pending: dict[str, Array] = {k: np.zeros(np.shape(held_h)) for k in self.pending_units}
        for line in self.lines:
            amount, quantity = line.evaluate(held_h, v, factors)
            key = line.pending_key
            # `+`, not `+=`: a line may vary where the time does not (a drawn rate or hours on a
            # plan whose time is fixed), so the sum takes the wider shape
            if key is not None:
                pending[key] = pending[key] + quantity
            else:
                known = known + amount
        if not all_ok:
            known = np.where(feasible, known, np.nan)
            pending = {k: np.where(feasible, q, np.nan) for k, q in pending.items()}
            held_h = np.where(feasible, held_h, np.inf)
        shape = np.broadcast_shapes(
            np.shape(known), np.shape(held_h), np.shape(feasible),
            *(np.shape(q) for q in pending.values()),
        )  # fmt: skip
        return Outcome(
            np.broadcast_to(known, shape),
            {k: np.broadcast_to(q, shape) for k, q in pending.items()},
            np.broadcast_to(total_s / 3600, shape),
            np.broadcast_to(held_h, shape),
            np.broadcast_to(feasible, shape),
        )


# -- construction ----------------------------------------------------------------------------
def _num(value: str | float | None) -> float | None:
    """A row's value as a float: Decimal money is carried as a string; tier summaries are not
    numbers (None)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return float(value)


def _row_number(rows: Mapping[str, InputRow], row_id: str) -> float | None:
    row = rows.get(row_id)
    return _num(row.value) if row is not None else None


class _RowReader:
    """Reads an input row as a number (else `default`) and records it as a model point."""

    def __init__(self, rows: Mapping[str, InputRow], point: dict[str, float]) -> None:
        self.rows, self.point = rows, point

    @overload
    def __call__(self, row_id: str, default: None = None) -> float | None: ...
    @overload
    def __call__(self, row_id: str, default: float) -> float: ...
    def __call__(self, row_id: str, default: float | None = None) -> float | None:
        v = _row_number(self.rows, row_id)
        v = default if v is None else v
        if v is not None:
            self.point[row_id] = v
        return v


def build(inp: EstimateInput, est: Estimate) -> VectorModel:
    """The vector model of `est` (made from `inp`), checked against it (module docstring).

    Returns
    -------
    VectorModel
    """
    rows = {r.id: r for r in est.inputs}
    point: dict[str, float] = {}
    value = _RowReader(rows, point)
    n = est.candidate.instance_count
    value("workload:target")
    value("candidate:instance_count")
    rate_row = f"throughput:n={n}"
    value(rate_row)
    value("time:compile_s", 0.0)
    value("time:warmup_s", 0.0)
    value("time:other_s", 0.0)
    value("time:evaluation_fraction", 0.0)
    interval = (
        value("assumption:checkpoint_interval_s")
        if "assumption:checkpoint_interval_s" in rows
        else value("checkpoint:interval_s")
    )
    save = value("checkpoint:save_s")
    lam_row = (
        "assumption:failure_rate_per_instance_hour"
        if "assumption:failure_rate_per_instance_hour" in rows
        else "failure:rate"
    )
    value(lam_row, 0.0)
    restart_row = next(
        (
            r
            for r in ("assumption:restart_s", "failure:restart_s")
            if _row_number(rows, r) is not None
        ),
        None,
    )
    if restart_row:
        value(restart_row)
    idle_row = "assumption:idle_fraction" if "assumption:idle_fraction" in rows else None
    if idle_row:
        value(idle_row)
    model = VectorModel(
        inp=inp,
        est=est,
        point=point,
        rate_row=rate_row,
        lam_row=lam_row,
        restart_row=restart_row,
        idle_row=idle_row,
        interval=interval if interval else None,
        save=save,
    )
    if est.time is None:
        return model
    _check_time(model)
    tiers_of = _tier_lookup(inp)
    for li in est.line_items:
        line = _line(li, model, rows, value, tiers_of)
        model.lines.append(line)
    for term in est.pending_terms:
        model.pending_units[term.price_key] = term.unit
    _check_lines(model)
    return model


def _check_time(model: VectorModel) -> None:
    total_s, held_s, _ = model.time({})
    t = model.est.time
    assert t is not None
    if not (
        np.isclose(total_s / 3600, t.total_h, rtol=1e-9)
        and np.isclose(held_s / 3600, t.held_h, rtol=1e-9)
    ):
        model.notes.append(
            f"the vector time model gives {float(total_s) / 3600:.6g} h, the engine "
            f"{t.total_h:.6g} h: the range is approximate"
        )


def _tier_lookup(inp: EstimateInput) -> Callable[[str], Tiers | None]:
    keys: dict[str, PriceKey] = {str(q.key): q.key for q in inp.prices.quotes}
    keys.update({str(o.key): o.key for o in inp.assumptions.price_overrides})
    ledger = Ledger(inp.prices, inp.assumptions.price_overrides)

    def tiers(price_key: str) -> Tiers | None:
        key = keys.get(price_key)
        if key is None:
            return None
        rate = ledger.rate(key)
        if rate.tiers is None:
            return None
        return Tiers(
            begin=np.array([float(t.begin) for t in rate.tiers]),
            end=np.array([np.inf if t.end is None else float(t.end) for t in rate.tiers]),
            rate=np.array([float(t.usd) for t in rate.tiers]),
        )

    return tiers


def _months(h: Array) -> Array:
    return h / MONTH_H


@dataclass(frozen=True)
class _LineContext:
    """One engine line item, seen by the formulas that may reproduce it (see costs.py)."""

    li: LineItem
    model: VectorModel
    rows: Mapping[str, InputRow]
    value: _RowReader
    price_row: str | None
    tiers: Tiers | None  # None while the price is PENDING

    @property
    def ids(self) -> list[str]:
        """The input rows the line used: they say which formula it follows."""
        return list(self.li.inputs)

    @property
    def head(self) -> str:
        return self.li.inputs[0] if self.li.inputs else ""

    @property
    def field_name(self) -> str:
        """The usage field of the first row (`usage:log_ingest_gb` → `log_ingest_gb`)."""
        return self.head.split(":", 1)[-1]

    @property
    def n(self) -> float:
        return float(self.model.est.candidate.instance_count)

    def line(self, qty: QuantityFn, inputs: tuple[str, ...] = ()) -> Line:
        return Line(
            name=self.li.name,
            price_key=self.li.price_key,
            price_row=self.price_row,
            tiers=self.tiers,
            qty=qty,
            inputs=inputs,
        )


def _line(
    li: LineItem,
    model: VectorModel,
    rows: Mapping[str, InputRow],
    value: _RowReader,
    tiers_of: Callable[[str], Tiers | None],
) -> Line:
    """The formula `li` follows, recognised by the input rows it used (see costs.py); the
    first formula that recognises it wins. A line no formula knows is held at its figure."""
    price_row = f"price:{li.price_key}" if li.price_key else None
    tiers = tiers_of(li.price_key) if li.price_key and li.amount_usd is not None else None
    cx = _LineContext(li, model, rows, value, price_row, tiers)
    for formula in FORMULAS:
        line = formula(cx)
        if line is not None:
            return line
    model.notes.append(f"line {li.name!r} follows no formula the range knows: held at its figure")
    return _fixed(li, price_row)


def _instance_hours(cx: _LineContext) -> Line | None:
    """n × billed seconds / 3600: EC2 with its 60 s minimum, SageMaker whole seconds."""
    if "billing:seconds_per_instance" not in cx.ids:
        return None
    sagemaker = cx.model.est.candidate.on_sagemaker
    minimum = 1 if sagemaker else EC2_MINIMUM_BILLED_SECONDS
    n = cx.n

    def instances(h: Array, v: Values) -> tuple[Quantity, Quantity]:
        billed = np.maximum(minimum, np.ceil(np.round(h * 3600, 6)))
        return n * billed / 3600, 1.0

    return cx.line(instances)


def _capacity_blocks(cx: _LineContext) -> Line | None:
    """ceil(held h / block hours) × ceil(n / block instances) blocks."""
    if "billing:capacity_blocks" not in cx.ids:
        return None
    terms = next(
        (q.capacity_block for q in cx.model.inp.prices.quotes if str(q.key) == cx.li.price_key),
        None,
    )
    if terms is None:
        return None
    per_count = float(np.ceil(cx.n / terms.instance_count))
    hours = terms.duration_hours
    return cx.line(lambda h, v: (np.ceil(h / hours) * per_count, 1.0))


def _ebs(cx: _LineContext) -> Line | None:
    """GB per instance × n × held months."""
    r = "assumption:ebs_gb_per_instance"
    if r not in cx.ids:
        return None
    cx.value(r)
    model, n = cx.model, cx.n
    return cx.line(lambda h, v: (v.get(r, model.point[r]) * n * _months(h), 1.0), inputs=(r,))


def _s3(cx: _LineContext) -> Line | None:
    """(held months + months after the run) × tiered(GB stored)."""
    if "storage:s3_months" not in cx.ids:
        return None
    stored = [
        i for i in cx.ids if i not in ("storage:s3_months", TIER_ROW) and not i.startswith("price:")
    ]
    gb = sum(cx.value(i) or 0.0 for i in stored)
    after = (
        cx.value("assumption:storage_months_after_run", 0.0)
        if "assumption:storage_months_after_run" in cx.rows
        else 0.0
    )
    return cx.line(lambda h, v: (gb, _months(h) + after))


def _monthly_usage(cx: _LineContext) -> Line | None:
    """A run total of transfer or logs: billing months × tiered(total / billing months), or
    (logs storage) total × (held months / 2 + retention months after the run)."""
    ids, head, field_name = cx.ids, cx.head, cx.field_name
    if field_name not in MONTHLY_FIELDS or MONTHS_ROW not in ids:
        return None
    total = _usage_total(head, field_name, cx.value, cx.n)
    if total is None:
        return None
    fn, reads = total
    if TIER_ROW in ids:

        def monthly(h: Array, v: Values) -> tuple[Quantity, Quantity]:
            k = np.maximum(1.0, np.ceil(h / MONTH_H))
            return fn(h, v) / k, k

        return cx.line(monthly, inputs=reads)
    after_row = "assumption:log_retention_months_after_run"
    after = cx.value(after_row, 0.0) if after_row in ids else 0.0

    def log_storage(h: Array, v: Values) -> tuple[Quantity, Quantity]:
        return fn(h, v) * (_months(h) / 2 + after), 1.0

    return cx.line(log_storage, inputs=reads)


def _custom_metrics(cx: _LineContext) -> Line | None:
    """held months × tiered(metrics)."""
    head = cx.head
    if cx.field_name != "custom_metrics" or TIER_ROW not in cx.ids:
        return None
    metrics = cx.value(head)
    if metrics is None:
        return None
    return cx.line(lambda h, v: (v.get(head, metrics), _months(h)), inputs=(head,))


def _data_preparation(cx: _LineContext) -> Line | None:
    """Stated preprocessing instance-hours × hourly rate."""
    r = "assumption:data_preparation"
    if r not in cx.ids:
        return None
    cx.value(r)
    model = cx.model
    return cx.line(lambda h, v: (v.get(r, model.point[r]), 1.0), inputs=(r,))


def _trial(cx: _LineContext) -> Line | None:
    """A trial run's billed instance-hours: measured, so fixed in every draw."""
    ids = cx.ids
    if not (ids and all(i.startswith(("trial:", "price:")) for i in ids)):
        return None
    q = cx.li.quantity
    return cx.line(lambda h, v: (q, 1.0))


def _engineering(cx: _LineContext) -> Line | None:
    """Engineering hours × a user-assumed hourly cost (no price key: a flat rate of 1)."""
    if cx.li.price_key is not None or cx.ids != [
        "assumption:engineering_hours",
        "assumption:engineering_hourly_usd",
    ]:
        return None
    hours_row, rate_row = cx.ids
    cx.value(hours_row)
    cx.value(rate_row)
    model = cx.model
    return Line(
        name=cx.li.name,
        price_key=None,
        price_row=None,
        tiers=Tiers(np.zeros(1), np.full(1, np.inf), np.ones(1)),
        qty=lambda h, v: (
            v.get(hours_row, model.point[hours_row]) * v.get(rate_row, model.point[rate_row]),
            1.0,
        ),
        inputs=(hours_row, rate_row),
    )


# The formulas of costs.py, in the order they are tried.
FORMULAS: tuple[Callable[[_LineContext], Line | None], ...] = (
    _instance_hours,
    _capacity_blocks,
    _ebs,
    _s3,
    _monthly_usage,
    _custom_metrics,
    _data_preparation,
    _trial,
    _engineering,
)


def _usage_total(
    head: str, field_name: str, value: _RowReader, n: float
) -> tuple[Callable[[Array, Values], Quantity], tuple[str, ...]] | None:
    """A run total: stated (assumption row) or per-instance-hour rate × n × held hours."""
    if head.startswith("assumption:"):
        stated = value(head)
        if stated is None:
            return None
        return (lambda h, v: v.get(head, stated) + 0.0 * h), (head,)
    per_row = f"usage:{field_name}_per_instance_hour"
    per = value(per_row)
    if per is None:
        return None
    return (lambda h, v: v.get(per_row, per) * n * h), (per_row,)


def _fixed(li: LineItem, price_row: str | None) -> Line:
    if li.amount_usd is not None:
        return Line(
            li.name, li.price_key, price_row, None, _none, fixed_amount=float(li.amount_usd)
        )
    return Line(li.name, li.price_key, price_row, None, _none, fixed_quantity=li.quantity)


def _none(h: Array, v: Values) -> NoReturn:  # pragma: no cover - fixed lines never call it
    raise AssertionError


def _check_lines(model: VectorModel) -> None:
    t = model.est.time
    assert t is not None
    held = np.array([t.held_h])
    for i, (line, li) in enumerate(zip(model.lines, model.est.line_items, strict=True)):
        if line.fixed_amount is not None or line.fixed_quantity is not None:
            continue
        amount, quantity = (float(np.ravel(x)[0]) for x in line.evaluate(held, {}, {}))
        if li.amount_usd is not None:
            ok = abs(amount - float(li.amount_usd)) <= 1e-4 + 1e-9 * float(li.amount_usd)
        else:
            ok = bool(np.isclose(quantity, li.quantity, rtol=1e-9, atol=1e-9))
        if not ok:
            model.notes.append(
                f"line {li.name!r}: the range's formula does not reproduce the engine's "
                "figure; held at the engine's figure"
            )
            model.lines[i] = _fixed(li, line.price_row)

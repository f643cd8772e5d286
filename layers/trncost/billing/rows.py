"""FOCUS 1.2 and CUR 2.0 rows → each estimate's billed lines, summed per billing period.

Pure: rows in (CSV text, or the typed values a Parquet reader gives), a `ParsedBill` out. The
columns read (FOCUS 1.2 column definitions; AWS's CUR 2.0 data dictionary):

| what           | FOCUS 1.2          | CUR 2.0                                         |
|----------------|--------------------|-------------------------------------------------|
| billed [USD]   | BilledCost         | line_item_net_unblended_cost, else _unblended_  |
| list [USD]     | ListCost           | pricing_public_on_demand_cost                   |
| quantity       | PricingQuantity    | line_item_usage_amount                          |
| unit           | PricingUnit        | pricing_unit                                    |
| category       | ChargeCategory,    | line_item_line_item_type (below)                |
|                | ChargeClass        |                                                 |
| billing period | BillingPeriodStart | bill_billing_period_start_date                  |
| charge period  | ChargePeriodStart, | line_item_usage_start_date, _end_date           |
|                | ChargePeriodEnd    |                                                 |
| service        | ServiceName,       | product.product_name, line_item_product_code    |
|                | x_ServiceCode      |                                                 |
| SKU            | SkuId              | product_sku                                     |
| usage type     | SkuMeter           | line_item_usage_type                            |
| region         | RegionId           | product_region_code                             |
| account        | BillingAccountId   | bill_payer_account_id                           |
| currency       | BillingCurrency    | line_item_currency_code                         |
| tags           | Tags               | resource_tags, else tags                        |

CUR line item types: Usage, DiscountedUsage and SavingsPlanCoveredUsage are usage; Fee, RIFee
and the Savings Plan fees are purchases; Tax is tax; Credit is a credit; Refund is a credit
that corrects an earlier period; the discounts and SavingsPlanNegation are adjustments.

A tag map is a JSON object in CSV (FOCUS Key-Value Format) and a map in Parquet. Parsed tag
maps are cached by their text: a bill repeats a handful of them across millions of rows.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from operator import itemgetter
from typing import Any

from trncost.billing.tags import ESTIMATE_KEYS, WORKLOAD_KEYS, as_mapping, find
from trncost.errors import InvalidInput
from trncost.model.actuals import BilledLine, BillFormat, BillGroup, Delivery, ParsedBill

FOCUS_COLUMNS: dict[str, str] = {
    "billed": "BilledCost",
    "list": "ListCost",
    "quantity": "PricingQuantity",
    "unit": "PricingUnit",
    "category": "ChargeCategory",
    "charge_class": "ChargeClass",
    "period": "BillingPeriodStart",
    "start": "ChargePeriodStart",
    "end": "ChargePeriodEnd",
    "service_name": "ServiceName",
    "service_code": "x_ServiceCode",
    "sku": "SkuId",
    "usage_type": "SkuMeter",
    "region": "RegionId",
    "account": "BillingAccountId",
    "currency": "BillingCurrency",
    "tags": "Tags",
}
FOCUS_REQUIRED = ("billed", "period", "start", "end", "category", "service_name", "account", "tags")
CUR_COLUMNS: dict[str, str] = {
    "billed": "line_item_unblended_cost",
    "net": "line_item_net_unblended_cost",
    "list": "pricing_public_on_demand_cost",
    "quantity": "line_item_usage_amount",
    "unit": "pricing_unit",
    "line_type": "line_item_line_item_type",
    "period": "bill_billing_period_start_date",
    "start": "line_item_usage_start_date",
    "end": "line_item_usage_end_date",
    "product": "product",
    "service_code": "line_item_product_code",
    "sku": "product_sku",
    "usage_type": "line_item_usage_type",
    "region": "product_region_code",
    "account": "bill_payer_account_id",
    "currency": "line_item_currency_code",
    "tags": "resource_tags",
    "tags2": "tags",
}
CUR_REQUIRED = ("billed", "line_type", "period", "start", "end", "service_code", "account")
LEGACY_CUR = "lineItem/UnblendedCost"
# Every field a row is read for, in the order `BillRows.add` unpacks them (absent: None).
FIELDS = (
    "tags", "tags2", "currency", "category", "charge_class", "billed", "net", "line_type",
    "service_name", "product", "account", "period", "service_code", "sku", "usage_type",
    "region", "unit", "quantity", "list", "start", "end",
)  # fmt: skip

CUR_LINE_TYPES: dict[str, tuple[str, str | None]] = {
    "Usage": ("Usage", None),
    "DiscountedUsage": ("Usage", None),
    "SavingsPlanCoveredUsage": ("Usage", None),
    "Fee": ("Purchase", None),
    "RIFee": ("Purchase", None),
    "SavingsPlanRecurringFee": ("Purchase", None),
    "SavingsPlanUpfrontFee": ("Purchase", None),
    "Tax": ("Tax", None),
    "Credit": ("Credit", None),
    "Refund": ("Credit", "Correction"),
}
FOCUS_CATEGORIES = frozenset({"Usage", "Purchase", "Tax", "Credit", "Adjustment"})
_PERIOD = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])")
_IDENTIFIER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,127}$")
_CACHE_LIMIT = 50_000


def columns_of(header: Sequence[str]) -> tuple[BillFormat, dict[str, int]]:
    """Which export `header` is (FOCUS 1.2 or CUR 2.0) and where each column trncost reads
    is; InvalidInput naming what is missing."""
    names = [h.strip().lstrip("\ufeff") for h in header]
    where = {n: i for i, n in enumerate(names)}
    required: tuple[str, ...]
    if "BilledCost" in where:
        fmt: BillFormat = "focus_1_2"
        wanted, required = FOCUS_COLUMNS, FOCUS_REQUIRED
    elif "line_item_unblended_cost" in where:
        fmt, wanted, required = "cur_2_0", CUR_COLUMNS, CUR_REQUIRED
    elif LEGACY_CUR in where:
        raise InvalidInput(
            "body: a legacy CUR (lineItem/... columns) is not read: export CUR 2.0 or FOCUS 1.2 "
            "(AWS Data Exports)",
            fields=["body"],
        )
    else:
        raise InvalidInput(
            "body: neither a FOCUS 1.2 export (no BilledCost column) nor a CUR 2.0 export (no "
            "line_item_unblended_cost column)",
            fields=["body"],
        )
    index = {k: where[c] for k, c in wanted.items() if c in where}
    missing = [wanted[k] for k in required if k not in index]
    if fmt == "cur_2_0" and "tags" not in index and "tags2" not in index:
        missing.append("resource_tags")
    if missing:
        raise InvalidInput(
            f"body: the {fmt} export has no {', '.join(missing)} column", fields=missing
        )
    return fmt, index


def _decimal(value: Any, column: str, where: str) -> Decimal | None:
    if type(value) is str:  # CSV: the hot path
        if not value:
            return None
        try:
            number = Decimal(value)
        except InvalidOperation:
            raise _bad(column, value, where) from None
    elif value is None:
        return None
    elif isinstance(value, Decimal):
        number = value
    elif isinstance(value, bool):
        raise _bad(column, value, where)
    else:
        try:
            number = Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value))
        except InvalidOperation:
            raise _bad(column, value, where) from None
    if not number.is_finite():
        raise _bad(column, value, where)
    return number


def _bad(column: str, value: Any, where: str) -> InvalidInput:
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    return InvalidInput(f"{column}: {shown} is not a number ({where})", fields=[column])


def _text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


def _period(value: Any, column: str, where: str) -> str:
    if isinstance(value, datetime | date):
        return f"{value.year:04d}-{value.month:02d}"
    m = _PERIOD.match(str(value or "").strip())
    if not m:
        raise InvalidInput(
            f"{column}: {value!r} is not a date (YYYY-MM-DD...) ({where})", fields=[column]
        )
    return f"{m.group(1)}-{m.group(2)}"


@dataclass
class _Line:
    quantity: Decimal = Decimal(0)
    billed: Decimal = Decimal(0)
    listed: Decimal | None = None
    rows: int = 0
    first: str | None = None
    last: str | None = None


@dataclass
class _Group:
    workload_id: str | None = None
    rows: int = 0
    lines: dict[tuple[str | None, ...], _Line] = field(default_factory=dict)


@dataclass(frozen=True)
class _Tagged:
    estimate_id: str | None
    spelling: str | None
    workload_id: str | None


class BillRows:
    """Rows of one export (FOCUS 1.2 or CUR 2.0) summed into each estimate's lines per billing
    period and billing account. Feed it rows (`add`) and rows the pre-filter skipped
    (`skipped`), then take the `ParsedBill`.

    Parameters
    ----------
    header : Sequence[str]
        The export's column names (a CSV header, a Parquet schema).
    file : str
        Named in error messages.
    """

    def __init__(self, header: Sequence[str], file: str = "body") -> None:
        self.format, self.index = columns_of(header)
        self.file = file
        self.rows_read = 0
        self.untagged = 0
        self.without_estimate = 0
        self.other_currency = 0
        self.deliveries: set[tuple[str, str]] = set()
        self.groups: dict[tuple[str, str, str], _Group] = {}
        self.spellings: Counter[str] = Counter()
        self._tags: dict[Any, _Tagged] = {}
        self._products: dict[str, str | None] = {}
        # the columns read, picked from a row in one call (the hot path of a million rows): a
        # field the export has not is the None appended to each row
        self._width = len(header)
        self._pick = itemgetter(*(self.index.get(f, self._width) for f in FIELDS))
        self._columns = {k: self._column(k) for k in ("period", "quantity", "list")}
        self._periods: dict[str, str] = {}

    # -- rows ----------------------------------------------------------------------------------
    def skipped(self, n: int = 1) -> None:
        """`n` rows read and left unparsed: they carry no trncost tag."""
        self.rows_read += n
        self.untagged += n

    def add(self, row: Sequence[Any], line: int) -> None:
        """One row (its values in header order); `line` names it in errors."""
        self.rows_read += 1
        if type(row) is list and len(row) == self._width:
            row.append(None)  # the csv module's own list: what an absent field reads
            cells = row
        else:
            cells = [*row[: self._width], *([None] * (self._width - len(row))), None]
        (tags, tags2, currency, category, charge_class, billed, net, line_type, service_name,
         product, account, raw_period, service_code, sku, usage_type, region, unit, quantity,
         listed, start, end) = self._pick(cells)  # fmt: skip
        tagged = self._tagged(tags, tags2, line)
        if tagged.estimate_id is None:
            if tagged.spelling is None and tagged.workload_id is None:
                self.untagged += 1
            else:
                self.without_estimate += 1
            return
        if currency and currency != "USD":
            self.other_currency += 1
            return
        where = f"{self.file} row {line}"
        category, charge_class, cost, service_name = self._charge(
            (category, charge_class, billed, net, line_type, service_name, product), where
        )
        account = account or "unknown"
        period = self._period_of(raw_period, where)
        group_key = (account, period, tagged.estimate_id)
        group = self.groups.get(group_key)
        if group is None:
            group = self.groups[group_key] = _Group()
            self.deliveries.add((f"{self.format}:{account}", period))
        group.rows += 1
        if tagged.workload_id and not group.workload_id:
            group.workload_id = tagged.workload_id
        key = (
            service_name,
            service_code or None,
            sku or None,
            usage_type or None,
            region or None,
            category,
            charge_class,
            unit or None,
        )
        acc = group.lines.get(key)
        if acc is None:
            acc = group.lines[key] = _Line()
        self._accumulate(acc, cost, quantity, listed, start, end, where)
        if tagged.spelling:
            self.spellings[tagged.spelling] += 1

    def _charge(
        self, cells: tuple[Any, ...], where: str
    ) -> tuple[str, str | None, Decimal, str | None]:
        """(category, class, billed [USD], service name) of a row."""
        category, charge_class, billed, net, line_type, service_name, product = cells
        if self.format == "focus_1_2":
            if category not in FOCUS_CATEGORIES:
                raise InvalidInput(
                    f"ChargeCategory: {category!r} is not one of "
                    f"{', '.join(sorted(FOCUS_CATEGORIES))} ({where})",
                    fields=["ChargeCategory"],
                )
            cost = _decimal(billed, "BilledCost", where)
            named = service_name or None
            charge_class = charge_class or None
        else:
            category, charge_class = CUR_LINE_TYPES.get(str(line_type or ""), ("Adjustment", None))
            cost = _decimal(net, "line_item_net_unblended_cost", where)
            if cost is None:
                cost = _decimal(billed, "line_item_unblended_cost", where)
            named = self._product_name(product)
        if cost is None:
            column = self._column("billed")
            raise InvalidInput(f"{column}: empty ({where})", fields=[column])
        return category, charge_class, cost, named

    def _period_of(self, raw: Any, where: str) -> str:
        """The billing period (YYYY-MM) of a BillingPeriodStart, cached by its text."""
        found = self._periods.get(raw) if type(raw) is str else None
        if found is None:
            found = _period(raw, self._columns["period"], where)
            if type(raw) is str and len(self._periods) < _CACHE_LIMIT:
                self._periods[raw] = found
        return found

    def _accumulate(
        self, acc: _Line, cost: Decimal, quantity: Any, listed: Any, start: Any, end: Any,
        where: str,
    ) -> None:  # fmt: skip
        acc.rows += 1
        acc.billed += cost
        amount = _decimal(quantity, self._columns["quantity"], where)
        if amount is not None:
            acc.quantity += amount
        amount = _decimal(listed, self._columns["list"], where)
        if amount is not None:
            acc.listed = amount if acc.listed is None else acc.listed + amount
        if start:
            start = start if type(start) is str else _text(start)
            if acc.first is None or start < acc.first:
                acc.first = start
        if end:
            end = end if type(end) is str else _text(end)
            if acc.last is None or end > acc.last:
                acc.last = end

    def _column(self, name: str) -> str:
        columns = FOCUS_COLUMNS if self.format == "focus_1_2" else CUR_COLUMNS
        return columns.get(name, name)

    def _tagged(self, tags: Any, fallback: Any, line: int) -> _Tagged:
        key = tags if isinstance(tags, str) or tags is None else None
        if key is not None and fallback is None:
            found = self._tags.get(key)
            if found is not None:
                return found
        mapping = self._mapping(tags, line)
        estimate, spelling = find(mapping, ESTIMATE_KEYS)
        if fallback is not None:  # CUR 2.0: resource_tags first, then tags
            other = self._mapping(fallback, line)
            if estimate is None:
                estimate, spelling = find(other, ESTIMATE_KEYS)
            mapping = {**other, **mapping}
        workload, workload_key = find(mapping, WORKLOAD_KEYS)
        if estimate is not None and not _IDENTIFIER.match(estimate):
            # not an id trncost makes: kept (as a safe id) to be reported as unknown
            estimate = "x" + re.sub(r"[^A-Za-z0-9._:/+-]", "_", estimate)[:120]
        found = _Tagged(estimate, spelling or workload_key, workload)
        if key is not None and fallback is None and len(self._tags) < _CACHE_LIMIT:
            self._tags[key] = found
        return found

    def _mapping(self, value: Any, line: int) -> Mapping[str, Any]:
        if isinstance(value, str):
            text = value.strip()
            if not text:
                return {}
            try:
                parsed = json.loads(text)
            except ValueError:
                column = self._column("tags")
                raise InvalidInput(
                    f"{column}: not a JSON object ({self.file} row {line})", fields=[column]
                ) from None
            return as_mapping(parsed)
        return as_mapping(value)

    def _product_name(self, product: Any) -> str | None:
        if product is None or product == "":
            return None
        if isinstance(product, str):
            if product in self._products:
                return self._products[product]
            try:
                mapping = as_mapping(json.loads(product))
            except ValueError:
                mapping = {}
            name = _text(mapping.get("product_name"))
            if len(self._products) < _CACHE_LIMIT:
                self._products[product] = name
            return name
        return _text(as_mapping(product).get("product_name"))

    # -- the result ----------------------------------------------------------------------------
    def result(self, files: Sequence[str] = ()) -> ParsedBill:
        """What was read, as a ParsedBill (each group's lines in a stable order)."""
        groups = []
        for (account, period, estimate_id), g in sorted(self.groups.items()):
            source = f"{self.format}:{account}"
            lines = [
                BilledLine(
                    service_name=k[0],
                    service_code=k[1],
                    sku_id=k[2],
                    usage_type=k[3],
                    region=k[4],
                    charge_category=k[5],
                    charge_class=k[6],
                    unit=k[7],
                    quantity=acc.quantity,
                    billed_usd=acc.billed,
                    list_usd=acc.listed,
                    rows=acc.rows,
                    first_charge=acc.first,
                    last_charge=acc.last,
                )
                for k, acc in g.lines.items()
            ]
            lines.sort(key=lambda x: x.key)
            groups.append(
                BillGroup(
                    source=source,
                    period=period,
                    estimate_id=estimate_id,
                    workload_id=g.workload_id
                    if g.workload_id and _IDENTIFIER.match(g.workload_id)
                    else None,
                    rows=g.rows,
                    lines=lines,
                )
            )
        return ParsedBill(
            format=self.format,
            files=list(files),
            rows_read=self.rows_read,
            untagged_rows=self.untagged,
            without_estimate_rows=self.without_estimate,
            other_currency_rows=self.other_currency,
            deliveries=[Delivery(source=s, period=p) for s, p in sorted(self.deliveries)],
            groups=groups,
            tag_keys_seen=dict(sorted(self.spellings.items())),
        )


def merge(bills: Sequence[ParsedBill]) -> ParsedBill:
    """Several parts of one delivery (an export split into files) as one bill: their groups
    of the same (source, period, estimate) summed line by line."""
    if not bills:
        raise InvalidInput("files: no file given", fields=["files"])
    formats = {b.format for b in bills}
    if len(formats) > 1:
        raise InvalidInput(
            f"files: one import is one export; these mix {', '.join(sorted(formats))}",
            fields=["files"],
        )
    if len(bills) == 1:
        return bills[0]
    lines: dict[tuple[str, str, str], dict[str, BilledLine]] = {}
    meta: dict[tuple[str, str, str], tuple[str | None, int]] = {}
    spellings: Counter[str] = Counter()
    for bill in bills:
        spellings.update(bill.tag_keys_seen)
        for g in bill.groups:
            k = (g.source, g.period, g.estimate_id)
            workload, rows = meta.get(k, (None, 0))
            meta[k] = (workload or g.workload_id, rows + g.rows)
            into = lines.setdefault(k, {})
            for line in g.lines:
                into[line.key] = _sum(into.get(line.key), line)
    groups = [
        BillGroup(
            source=k[0],
            period=k[1],
            estimate_id=k[2],
            workload_id=meta[k][0],
            rows=meta[k][1],
            lines=sorted(v.values(), key=lambda x: x.key),
        )
        for k, v in sorted(lines.items())
    ]
    deliveries = sorted({(d.source, d.period) for b in bills for d in b.deliveries})
    return ParsedBill(
        format=bills[0].format,
        files=[f for b in bills for f in b.files],
        rows_read=sum(b.rows_read for b in bills),
        untagged_rows=sum(b.untagged_rows for b in bills),
        without_estimate_rows=sum(b.without_estimate_rows for b in bills),
        other_currency_rows=sum(b.other_currency_rows for b in bills),
        deliveries=[Delivery(source=s, period=p) for s, p in deliveries],
        groups=groups,
        tag_keys_seen=dict(sorted(spellings.items())),
    )


def _sum(a: BilledLine | None, b: BilledLine) -> BilledLine:
    if a is None:
        return b
    listed = None if a.list_usd is None and b.list_usd is None else (
        (a.list_usd or Decimal(0)) + (b.list_usd or Decimal(0))
    )  # fmt: skip
    firsts = [x for x in (a.first_charge, b.first_charge) if x]
    lasts = [x for x in (a.last_charge, b.last_charge) if x]
    return a.model_copy(
        update={
            "quantity": a.quantity + b.quantity,
            "billed_usd": a.billed_usd + b.billed_usd,
            "list_usd": listed,
            "rows": a.rows + b.rows,
            "first_charge": min(firsts) if firsts else None,
            "last_charge": max(lasts) if lasts else None,
        }
    )

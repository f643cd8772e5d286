"""`cloudwatch:GetMetricData`, batched: many queries in few calls, every page, merged per query.

The API's limits, honoured here (Amazon CloudWatch API reference, GetMetricData):

- at most 500 `MetricDataQuery` structures in one call (metric-stat queries and expressions
  alike); queries are spread over ⌈n / 500⌉ calls of near-equal size, so every call needs about
  the same number of pages;
- at most `MaxDatapoints` (default and maximum 100,800) datapoints in one response: the rest
  comes with a `NextToken`, asked for with the very same queries; a result cut short says
  `PartialData` and continues on the next page. Pages are merged per query id;
- an expression may only use queries of the same call: a `MetricAggregate` (one series computed
  by metric math over many per-host queries, e.g. `AVG([h0, h1, ...])`) is kept whole in one
  call, its member queries sent with `ReturnData: false`. Only the aggregate comes back, which
  is what keeps a 64-instance read to a few calls.

Results are read oldest first (`ScanBy: TimestampAscending`). A query that still says
`PartialData`, `InternalError` or `Forbidden` after the last page is returned with that status
and its messages: the caller treats it as not measured, never as complete.

The client is created lazily by `trncost.aws` (standard retries: throttling is retried there)
and can be injected; `calls` counts the API calls made.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from trncost import aws
from trncost.errors import QueryError

MAX_QUERIES_PER_CALL = 500
MAX_DATAPOINTS_PER_CALL = 100_800
MAX_EXPRESSION_CHARS = 2048  # GetMetricData: MetricDataQuery.Expression length limit
ID_PATTERN = re.compile(r"^[a-z][a-zA-Z0-9_]{0,254}$")
AggregateFunction = Literal["AVG", "SUM", "MIN", "MAX"]


def _check_id(query_id: str) -> None:
    if not ID_PATTERN.match(query_id):
        raise QueryError(
            f"query id {query_id!r} must start with a lowercase letter and hold only letters, "
            "digits and underscores (GetMetricData rule)"
        )


@dataclass(frozen=True)
class MetricQuery:
    """One metric series: namespace, name and exact dimensions, read with one statistic."""

    id: str
    namespace: str
    metric: str
    dimensions: tuple[tuple[str, str], ...] = ()
    stat: str = "Average"
    period: int = 60
    unit: str | None = None  # None: any unit (a unit here filters out data sent with another)

    def __post_init__(self) -> None:
        _check_id(self.id)
        if self.period <= 0 or (self.period >= 60 and self.period % 60):
            raise QueryError(f"period {self.period} s: use 1, 5, 10, 30 or a multiple of 60")

    @property
    def size(self) -> int:
        return 1

    def dimension(self, name: str) -> str | None:
        return dict(self.dimensions).get(name)

    def api(self, return_data: bool = True) -> dict[str, Any]:
        stat: dict[str, Any] = {
            "Metric": {
                "Namespace": self.namespace,
                "MetricName": self.metric,
                "Dimensions": [{"Name": k, "Value": v} for k, v in self.dimensions],
            },
            "Period": self.period,
            "Stat": self.stat,
        }
        if self.unit:
            stat["Unit"] = self.unit
        out: dict[str, Any] = {"Id": self.id, "MetricStat": stat}
        if not return_data:
            out["ReturnData"] = False
        return out


@dataclass(frozen=True)
class MetricAggregate:
    """One series computed by CloudWatch metric math over many queries of the same call:
    `AVG`, `SUM`, `MIN` or `MAX` of the members at each timestamp. Members are not returned."""

    id: str
    function: AggregateFunction
    members: tuple[MetricQuery, ...]

    def __post_init__(self) -> None:
        _check_id(self.id)
        if not self.members:
            raise QueryError(f"aggregate {self.id} has no member queries")
        if len(self.members) + 1 > MAX_QUERIES_PER_CALL:
            raise QueryError(
                f"aggregate {self.id} has {len(self.members)} members: one call holds at most "
                f"{MAX_QUERIES_PER_CALL - 1} plus the expression; split it"
            )
        periods = {m.period for m in self.members}
        if len(periods) != 1:
            raise QueryError(f"aggregate {self.id} mixes periods {sorted(periods)}")
        if len(self.expression) > MAX_EXPRESSION_CHARS:
            raise QueryError(
                f"aggregate {self.id}: expression longer than {MAX_EXPRESSION_CHARS} characters; "
                "use shorter member ids or fewer members"
            )

    @property
    def size(self) -> int:
        return len(self.members) + 1

    @property
    def period(self) -> int:
        return self.members[0].period

    @property
    def expression(self) -> str:
        return f"{self.function}([{', '.join(m.id for m in self.members)}])"

    def api(self) -> list[dict[str, Any]]:
        return [
            *(m.api(return_data=False) for m in self.members),
            {"Id": self.id, "Expression": self.expression, "Label": self.id},
        ]


Item = MetricQuery | MetricAggregate


@dataclass(frozen=True)
class Series:
    """What came back for one query id, oldest first. Timestamps are UTC; each is the start of
    a period of `period` seconds. `status` is the API's StatusCode after the last page."""

    id: str
    period: int
    timestamps: tuple[datetime, ...] = ()
    values: tuple[float, ...] = ()
    status: str = "Complete"
    label: str | None = None
    messages: tuple[str, ...] = ()
    query: Item | None = None

    @property
    def complete(self) -> bool:
        return self.status == "Complete"

    def points(self) -> Iterator[tuple[datetime, float]]:
        return zip(self.timestamps, self.values, strict=True)


def _utc(ts: datetime) -> datetime:
    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)


def _floor(ts: datetime, period: int) -> datetime:
    epoch = ts.timestamp()
    return datetime.fromtimestamp(epoch - epoch % period, tz=UTC)


def _ceil(ts: datetime, period: int) -> datetime:
    epoch = ts.timestamp()
    return datetime.fromtimestamp(math.ceil(epoch / period) * period, tz=UTC)


def _greedy(items: Sequence[Item], cap: int) -> list[list[Item]]:
    calls: list[list[Item]] = []
    used = cap
    for item in items:
        if used + item.size > cap:
            calls.append([])
            used = 0
        calls[-1].append(item)
        used += item.size
    return calls


def plan_calls(items: Sequence[Item], limit: int = MAX_QUERIES_PER_CALL) -> list[list[Item]]:
    """Split items into calls of at most `limit` structures: as few calls as the sizes allow
    (⌈structures / limit⌉ when no aggregate straddles a boundary), of near-equal size so that
    each call needs about the same number of pages. An aggregate and its members stay in one
    call."""
    ids = Counter(
        [i.id for i in items]
        + [m.id for i in items if isinstance(i, MetricAggregate) for m in i.members]
    )
    dupes = sorted(i for i, n in ids.items() if n > 1)
    if dupes:
        raise QueryError(f"duplicate query ids: {', '.join(dupes[:5])}")
    if not items:
        return []
    fewest = len(_greedy(items, limit))
    target = math.ceil(sum(i.size for i in items) / fewest)
    while target < limit:
        calls = _greedy(items, target)
        if len(calls) <= fewest:
            return calls
        target += max(1, target // 50)
    return _greedy(items, limit)


@dataclass
class _Acc:
    timestamps: list[datetime] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    status: str = "Complete"
    label: str | None = None
    messages: list[str] = field(default_factory=list)


class MetricsReader(aws.RegionalAdapter):
    """Reads many series over one time window with as few GetMetricData calls as the limits
    allow."""

    service = "cloudwatch"

    def __init__(
        self,
        region: str,
        client: Any = None,
        max_datapoints: int | None = None,
    ) -> None:
        if max_datapoints is not None and not 0 < max_datapoints <= MAX_DATAPOINTS_PER_CALL:
            raise ValueError(f"max_datapoints must be in 1..{MAX_DATAPOINTS_PER_CALL}")
        super().__init__(region, client)
        self.max_datapoints = max_datapoints
        self.messages: list[str] = []  # top-level Messages of every response

    def read(self, items: Sequence[Item], start: datetime, end: datetime) -> dict[str, Series]:
        """Every item's series over [start, end) (widened to whole periods), by query id."""
        if not items:
            return {}
        start, end = _utc(start), _utc(end)
        if end <= start:
            raise ValueError(f"end {end.isoformat()} is not after start {start.isoformat()}")
        longest = max(i.period for i in items)
        start, end = _floor(start, longest), _ceil(end, longest)
        by_id = {i.id: i for i in items}
        acc: dict[str, _Acc] = {i.id: _Acc() for i in items}
        for batch in plan_calls(items):
            queries: list[dict[str, Any]] = []
            for item in batch:
                queries.extend(item.api() if isinstance(item, MetricAggregate) else [item.api()])
            for page in self._pages(queries, start, end):
                for result in page.get("MetricDataResults", []):
                    a = acc.get(result["Id"])
                    if a is None:  # a member returned despite ReturnData false: ignore it
                        continue
                    a.timestamps.extend(_utc(t) for t in result.get("Timestamps", []))
                    a.values.extend(float(v) for v in result.get("Values", []))
                    a.status = result.get("StatusCode", "Complete")
                    a.label = result.get("Label", a.label)
                    a.messages.extend(
                        f"{m.get('Code', '')}: {m.get('Value', '')}".strip(": ")
                        for m in result.get("Messages", [])
                    )
        return {qid: _series(by_id[qid], a) for qid, a in acc.items()}

    def _pages(
        self, queries: list[dict[str, Any]], start: datetime, end: datetime
    ) -> Iterator[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "MetricDataQueries": queries,
            "StartTime": start,
            "EndTime": end,
            "ScanBy": "TimestampAscending",
        }
        if self.max_datapoints is not None:
            kwargs["MaxDatapoints"] = self.max_datapoints
        for page in self.client.get_paginator("get_metric_data").paginate(**kwargs):
            self.calls += 1
            self.messages.extend(
                f"{m.get('Code', '')}: {m.get('Value', '')}".strip(": ")
                for m in page.get("Messages", [])
            )
            yield page

    def count_metrics(self, namespace: str, dimensions: Mapping[str, str]) -> int:
        """How many distinct metrics (name + dimensions) in `namespace` carry all `dimensions`
        (ListMetrics: metrics with data in the past two weeks)."""
        seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
        pages = self.client.get_paginator("list_metrics").paginate(
            Namespace=namespace,
            Dimensions=[{"Name": k, "Value": v} for k, v in dimensions.items()],
        )
        for page in pages:
            self.calls += 1
            for m in page.get("Metrics", []):
                dims = tuple(sorted((d["Name"], d["Value"]) for d in m.get("Dimensions", [])))
                seen.add((m["MetricName"], dims))
        return len(seen)


def _series(item: Item, a: _Acc) -> Series:
    pairs = sorted(zip(a.timestamps, a.values, strict=True), key=lambda p: p[0])
    merged: dict[datetime, float] = {}
    for ts, v in pairs:  # a repeated timestamp (an overlapping page) keeps its last value
        merged[ts] = v
    return Series(
        id=item.id,
        period=item.period,
        timestamps=tuple(merged),
        values=tuple(merged.values()),
        status=a.status,
        label=a.label,
        messages=tuple(a.messages),
        query=item,
    )


def window(start: datetime, end: datetime, period: int) -> tuple[datetime, datetime]:
    """[start, end) widened to whole periods, in UTC: the window `read` asks for."""
    return _floor(_utc(start), period), _ceil(_utc(end), period)


def expected_points(start: datetime, end: datetime, period: int) -> int:
    """Datapoints one query returns over the window when a value exists in every period."""
    s, e = window(start, end, period)
    return int((e - s) / timedelta(seconds=period))

"""Estimate vs actual: billed actuals in (three ways), each estimate scored against them, the
stage's scorecard, forecasts as FOCUS rows and a budget from an estimate.

Actuals come in as a `ParsedBill` whatever the way:

- a FOCUS 1.2 or CUR 2.0 export: `POST /actuals` with the file (CSV, gzip CSV or Parquet, up
  to what a request takes: trncost.api.app), or `trncost actuals import FILE…`, which reads
  the files on its own machine (any size, several parts of one delivery) and sends what they
  hold for trncost as JSON;
- Cost Explorer, daily (the actuals Lambda): GetCostAndUsage grouped by the estimate tag;
- SageMaker, at job end (the ingest): BillableTimeInSeconds × InstanceCount at the rate of the
  estimate's price snapshot, the first same-day figure, superseded by the bill.

Each (source, billing period) a bill covers is replaced whole by it (trncost.store.actuals): a
repeated file changes nothing, a newer delivery of the same period replaces the older one, and
the answer says which lines were added, removed or changed. Rows naming an estimate this stage
does not have are counted as unmatched and not kept. "Actuals Imported" is published after
each import, whatever changed, so an announcement lost to a crash is sent by the retry.

An estimate is compared as it stood when the billed usage began (the latest version made
before the first billed charge), with its range recomputed from the evidence it had then;
trncost.estimate.actuals holds the arithmetic.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from trncost import aws
from trncost.bus import EventPublisher
from trncost.errors import Busy, DomainError, InvalidInput, NotFound, UnusableEvent
from trncost.events import DetailType
from trncost.model.actuals import (
    ActualsComparison,
    ActualsImport,
    BilledLine,
    BillGroup,
    BudgetAlert,
    BudgetRequest,
    BudgetView,
    Delivery,
    LineChanges,
    ParsedBill,
    PeriodImport,
    Scorecard,
    StoredGroup,
)
from trncost.model.analysis import MoneyPercentiles
from trncost.model.records import EstimateDefinition, EstimateVersion
from trncost.store.actuals import ActualsStore
from trncost.store.records import RecordStore

if TYPE_CHECKING:
    from trncost.billing.budgets import Budgets
    from trncost.billing.cost_explorer import CostExplorer
    from trncost.metrics.events import EstimateRun
    from trncost.metrics.sagemaker import TrainingJobReader
    from trncost.report.render import Rendered
    from trncost.services.estimates import EstimateService

log = logging.getLogger(__name__)
__all__ = ["ActualsService", "delivery_id"]

RANGE_SAMPLES = 100_000  # the Monte Carlo's draws, as a comparison's default
RANGE_SEED = 0
MICRO = Decimal("0.000001")
LOOKBACK_DAYS = 1  # Cost Explorer: yesterday is the last whole day; the pull ends tomorrow


def _now() -> datetime:
    return datetime.now(UTC)


def delivery_id(source: str, period: str, groups: list[BillGroup]) -> str:
    """A hash of what a delivery holds for (source, period): the same content, the same id."""
    digest = hashlib.sha256(f"{source}\x1f{period}".encode())
    for g in sorted(groups, key=lambda x: x.estimate_id):
        digest.update(g.model_dump_json().encode())
    return digest.hexdigest()[:24]


def _diff(old: list[StoredGroup], new: list[BillGroup]) -> LineChanges:
    def lines(groups: list[BillGroup]) -> dict[tuple[str, str], BilledLine]:
        return {(g.estimate_id, x.key): x for g in groups for x in g.lines}

    before, after = lines([s.group for s in old]), lines(new)
    changed = sum(1 for k in before.keys() & after.keys() if before[k] != after[k])
    return LineChanges(
        added=len(after.keys() - before.keys()),
        removed=len(before.keys() - after.keys()),
        changed=changed,
    )


class ActualsService:
    def __init__(
        self,
        store: ActualsStore,
        records: RecordStore,
        estimates: EstimateService | Callable[[], EstimateService],
        *,
        publisher: EventPublisher | None = None,
        clock: Callable[[], datetime] = _now,
        cost_explorer: Callable[[], CostExplorer] | None = None,
        budgets: Callable[[], Budgets] | None = None,
        sagemaker: Callable[[str], TrainingJobReader] | None = None,
        account_id: str | None = None,
    ) -> None:
        self.store = store
        self.records = records
        self._estimates = estimates  # or how to make it: the ingest builds it only if used
        self.publisher = publisher
        self.clock = clock
        self._cost_explorer = cost_explorer
        self._budgets = budgets
        self._sagemaker = sagemaker
        self.account_id = account_id

    @property
    def estimates(self) -> EstimateService:
        if callable(self._estimates):
            self._estimates = self._estimates()
        return self._estimates

    # -- actuals in ------------------------------------------------------------------------------
    def import_body(self, body: bytes, content_type: str, imported_by: str) -> ActualsImport:
        """An API body: what `trncost actuals import` sends (application/json), or an export
        file itself (CSV, gzip CSV, Parquet)."""
        if content_type == "application/json":
            bill = ParsedBill.model_validate_json(body)  # a ValidationError is a 422
            if bill.format not in ("focus_1_2", "cur_2_0"):
                raise InvalidInput(
                    "format: only focus_1_2 or cur_2_0 come in by POST /actuals", fields=["format"]
                )
        else:
            from trncost.billing.files import read_bill_bytes

            bill = read_bill_bytes(body, "body")
        return self.import_bill(bill, imported_by)

    def import_bill(self, bill: ParsedBill, imported_by: str) -> ActualsImport:
        """Keep what `bill` holds for this stage's estimates: each (source, period) it covers
        replaced whole (see the module)."""
        ids = sorted({g.estimate_id for g in bill.groups})
        definitions = {eid: self._definition(eid) for eid in ids}
        known = {eid: d.workload_id for eid, d in definitions.items() if d is not None}
        unknown = [eid for eid, d in definitions.items() if d is None]
        by_delivery: dict[tuple[str, str], list[BillGroup]] = {
            (d.source, d.period): [] for d in bill.deliveries
        }
        for g in bill.groups:
            if g.estimate_id in known:
                by_delivery[(g.source, g.period)].append(g)
        at = self.clock().isoformat()
        periods = [
            self._replace(source, period, groups, known, at, imported_by)
            for (source, period), groups in sorted(by_delivery.items())
        ]
        matched = sum(g.rows for g in bill.groups if g.estimate_id in known)
        reasons = {
            "no_trncost_tag": bill.untagged_rows,
            "no_estimate_tag": bill.without_estimate_rows,
            "unknown_estimate": sum(g.rows for g in bill.groups if g.estimate_id not in known),
            "not_usd": bill.other_currency_rows,
        }
        result = ActualsImport(
            format=bill.format,
            files=bill.files,
            rows_read=bill.rows_read,
            matched=matched,
            unmatched=bill.rows_read - matched,
            unmatched_reasons={k: v for k, v in reasons.items() if v},
            unknown_estimate_ids=unknown[:50],
            tag_keys_seen=bill.tag_keys_seen,
            periods=periods,
            estimate_ids=sorted(known),
            changed=any(p.outcome != "unchanged" for p in periods),
        )
        if bill.tag_keys_seen:
            log.info("billing tag keys seen", extra={"tag_keys_seen": bill.tag_keys_seen})
        self._announce(result)
        return result

    def _definition(self, estimate_id: str) -> EstimateDefinition | None:
        try:
            return self.records.get_estimate_definition(estimate_id)
        except ValidationError:
            return None

    def _replace(
        self,
        source: str,
        period: str,
        groups: list[BillGroup],
        workloads: dict[str, str],
        at: str,
        imported_by: str,
        attempts: int = 5,
    ) -> PeriodImport:
        new_id = delivery_id(source, period, groups)
        estimate_ids = sorted(g.estimate_id for g in groups)
        billed = sum((x.billed_usd for g in groups for x in g.lines if x.counted), Decimal(0))

        def answer(outcome: str, changes: LineChanges) -> PeriodImport:
            return PeriodImport(
                source=source,
                period=period,
                outcome=outcome,
                estimate_ids=estimate_ids,
                lines=sum(len(g.lines) for g in groups),
                billed_usd=billed,
                changes=changes,
            )

        for _ in range(attempts):
            current = self.store.current(source, period)
            old_id = str(current["delivery_id"]) if current else None
            if old_id == new_id:
                return answer("unchanged", LineChanges())
            old_ids = [str(x) for x in current.get("estimate_ids", [])] if current else []
            old = self.store.delivery_groups(source, period, old_id, old_ids) if old_id else []
            self.store.put_groups([(g, workloads[g.estimate_id]) for g in groups], new_id, at)
            if self.store.switch(
                source,
                period,
                delivery_id=new_id,
                estimate_ids=estimate_ids,
                imported_at=at,
                imported_by=imported_by,
                replacing=old_id,
            ):
                if old_id:
                    self.store.delete_groups(source, period, old_id, old_ids)
                return answer("replaced" if current else "created", _diff(old, groups))
            now = self.store.current(source, period)
            if now is None or now.get("delivery_id") != new_id:  # another delivery won: ours goes
                self.store.delete_groups(source, period, new_id, estimate_ids)
        raise Busy(f"actuals of {source} {period}: other imports kept replacing them; retry")

    def _announce(self, result: ActualsImport) -> None:
        if self.publisher is None:
            return
        self.publisher.publish(
            DetailType.actuals_imported,
            {
                "format": result.format,
                "estimate_ids": result.estimate_ids[:100],
                "periods": [
                    {"source": p.source, "period": p.period, "outcome": p.outcome}
                    for p in result.periods[:100]
                ],
                "changed": result.changed,
            },
        )

    # -- Cost Explorer (the daily actuals Lambda) ------------------------------------------------
    def pull_cost_explorer(
        self, start: date | None = None, end: date | None = None
    ) -> dict[str, Any]:
        """Ask Cost Explorer for the tagged spend from the first of last month (or `start`, a
        first of a month) to tomorrow (or `end`), and import it. Cost Explorer saying the
        data or the tag is not there yet is answered, not raised."""
        from trncost.billing import cost_explorer as ce

        today = self.clock().date()
        start = ce.month_start(start) if start else ce.previous_month_start(today)
        end = end or today + timedelta(days=LOOKBACK_DAYS)
        if end <= start:
            raise InvalidInput("end: must be after start", fields=["end"])
        if self._cost_explorer is None:
            raise DomainError("no Cost Explorer client configured")
        explorer = self._cost_explorer()
        try:
            pages = explorer.cost_and_usage(ce.request(start, end))
        except Exception as exc:
            code = aws.error_code(exc)
            if code in ce.NOT_READY_CODES or (
                code == "ValidationException" and "tag" in str(exc).lower()
            ):
                log.warning("Cost Explorer has no data for the tag yet: %s", exc)
                return {"status": "not_ready", "reason": f"{code}: {exc}"[:1000]}
            raise
        result = self.import_bill(ce.parse(pages, start, end), "cost-explorer")
        return {
            "status": "ok",
            "start": start.isoformat(),
            "end": end.isoformat(),
            "requests": len(pages),
            **result.model_dump(mode="json", include={"rows_read", "matched", "unmatched"}),
            "estimate_ids": result.estimate_ids,
            "periods": [p.model_dump(mode="json") for p in result.periods],
        }

    # -- SageMaker, at job end (the ingest) -----------------------------------------------------
    def record_training_job(self, run: EstimateRun) -> str:
        """The first same-day actual of a SageMaker training job tagged with an estimate:
        BillableTimeInSeconds × InstanceCount instance-seconds at the rate of the estimate's
        price snapshot. Says what it recorded; UnusableEvent says why nothing could be (an
        estimate this stage has not, no billable time, no rate)."""
        from trncost.estimate.usage_types import sagemaker_usage_type
        from trncost.metrics.jobs import ESTIMATE_ID_TAG
        from trncost.model import Platform, PriceKey, PurchaseOption

        definition = self._definition(run.estimate_id)
        if definition is None:
            raise UnusableEvent(
                f"job {run.job_name} names estimate {run.estimate_id} (trncost:estimate-id), "
                "which this stage has not: no actual recorded"
            )
        if self._sagemaker is None:
            raise UnusableEvent("no SageMaker reader configured: no actual recorded")
        facts = self._sagemaker(run.region).describe(run.job_name)
        seconds = facts.billed_instance_seconds
        if seconds is None or not facts.instance_type:
            raise UnusableEvent(
                f"job {run.job_name}: SageMaker gives no billable time × instance count "
                "(a job that failed early, or instance groups): no actual recorded"
            )
        version = self.estimates.version(run.estimate_id)
        snapshot = self.estimates.snapshot(version.estimate.snapshot_id)
        key = PriceKey.for_instance(
            facts.instance_type, run.region, PurchaseOption.on_demand, Platform.sagemaker
        )
        quote = snapshot.quote_for(key)
        rate = None if quote.is_pending else quote.flat_rate
        if rate is None:
            raise UnusableEvent(
                f"job {run.job_name}: no flat rate for {key} in snapshot {snapshot.snapshot_id} "
                f"(estimate {run.estimate_id}'s): no actual recorded"
            )
        hours = Decimal(str(seconds)) / Decimal(3600)
        amount = (hours * rate).quantize(MICRO)
        window = facts.wall_window
        ended = facts.training_end or (window[1] if window else None) or self.clock()
        started = facts.training_start or (window[0] if window else None)
        period = f"{ended.year:04d}-{ended.month:02d}"
        source = f"sagemaker:{run.region}:{run.job_name}"
        group = BillGroup(
            source=source,
            period=period,
            estimate_id=run.estimate_id,
            workload_id=definition.workload_id,
            rows=1,
            lines=[
                BilledLine(
                    service_name="Amazon SageMaker",
                    service_code=key.service.value,
                    sku_id=quote.sku,
                    usage_type=sagemaker_usage_type(facts.instance_type),
                    region=run.region,
                    unit="Hrs",
                    quantity=hours,
                    billed_usd=amount,
                    list_usd=amount,
                    rows=1,
                    first_charge=started.strftime("%Y-%m-%dT%H:%M:%SZ") if started else None,
                    last_charge=ended.strftime("%Y-%m-%dT%H:%M:%SZ"),
                )
            ],
            estimated=True,
            note=f"BillableTimeInSeconds × InstanceCount at snapshot {snapshot.snapshot_id}'s rate",
        )
        bill = ParsedBill(
            format="sagemaker",
            files=[f"sagemaker job {run.job_name}"],
            rows_read=1,
            deliveries=[Delivery(source=source, period=period)],
            groups=[group],
            tag_keys_seen={ESTIMATE_ID_TAG: 1},
        )
        self.import_bill(bill, "ingest")
        return (
            f"actual of job {run.job_name}: {hours:.4f} instance-hours × {rate} = USD {amount} "
            f"(estimate {run.estimate_id}, {period})"
        )

    # -- one estimate against its actuals --------------------------------------------------------
    def comparison(self, estimate_id: str) -> ActualsComparison:
        """The estimate against its actuals; NotFound for an estimate with none."""
        from trncost.estimate.actuals import compare, select_actuals

        definition = self._definition(estimate_id)
        if definition is None:
            raise NotFound(f"estimate {estimate_id} not found")
        groups = self.store.estimate_groups(estimate_id)
        if not groups:
            raise NotFound(
                f"estimate {estimate_id} has no actuals yet: import a bill (POST /actuals), "
                "or wait for Cost Explorer (daily) once the tags are active"
            )
        lines, periods, sources = select_actuals(groups)
        version, before = self._forecast_version(estimate_id, lines, [p.period for p in periods])
        run, notes = self._run_range(definition, version)
        result = compare(
            version.estimate,
            lines,
            run,
            estimate_id=estimate_id,
            version=version.version,
            forecast_before_spend=before,
            periods=periods,
            sources=sources,
        )
        return result.model_copy(update={"notes": [*result.notes, *notes]})

    def comparison_or_none(self, estimate_id: str) -> ActualsComparison | None:
        """The comparison, or None for an estimate without actuals (the report's section)."""
        try:
            return self.comparison(estimate_id)
        except NotFound:
            return None

    def _forecast_version(
        self, estimate_id: str, lines: list[BilledLine], periods: list[str]
    ) -> tuple[EstimateVersion, bool]:
        """The latest version made before the first billed charge (else the first one, and
        False: no version was a forecast)."""
        starts = [x.first_charge for x in lines if x.first_charge]
        began = min(starts) if starts else (f"{min(periods)}-01T00:00:00" if periods else "")
        began = began.replace(" ", "T")[:19]
        versions = sorted(self.estimates.versions(estimate_id), key=lambda v: int(v["version"]))
        before = [v for v in versions if str(v["created_at"])[:19] <= began]
        chosen = before[-1] if before else versions[0]
        return self.estimates.version(estimate_id, int(chosen["version"])), bool(before)

    def _run_range(
        self, definition: EstimateDefinition, version: EstimateVersion
    ) -> tuple[MoneyPercentiles | None, list[str]]:
        """The run's P10/P50/P90 with the evidence the version had (trials recorded by then,
        its snapshot), labour left out (AWS does not bill it)."""
        from trncost.estimate import estimate, monte_carlo
        from trncost.estimate.actuals import run_range, trials_usd
        from trncost.model import EstimateInput
        from trncost.services.versions import fingerprint

        workload = self.records.get_workload(definition.workload_id)
        if workload is None:
            return None, [f"workload {definition.workload_id} not found: no range"]
        inp = EstimateInput(
            workload=workload,
            candidate=definition.candidate,
            trials=self.records.trials_recorded_by(definition.workload_id, version.created_at),
            prices=self.estimates.snapshot(version.estimate.snapshot_id),
            assumptions=definition.assumptions,
        )
        notes = []
        if fingerprint(inp, definition) != version.fingerprint:
            notes.append(
                f"the range is recomputed from the trials recorded by version {version.version}'s "
                "time and its snapshot; the evidence differs a little from what it was made from"
            )
        cloud_only = inp.model_copy(
            update={
                "assumptions": inp.assumptions.model_copy(
                    update={"engineering_hours": None, "engineering_hourly_usd": None}
                )
            }
        )
        try:
            est = estimate(cloud_only, check_price_overrides=False)
            cloud = monte_carlo(cloud_only, samples=RANGE_SAMPLES, seed=RANGE_SEED, est=est)
        except DomainError as exc:
            return None, [*notes, f"no range: {exc}"]
        notes.append(
            f"P10/P50/P90: {RANGE_SAMPLES:,} draws (seed {RANGE_SEED}) of the cloud cost, less "
            "the trials already run"
        )
        return run_range(cloud.total_usd, trials_usd(est)), notes

    # -- the scorecard ---------------------------------------------------------------------------
    def scorecard(self, workload_id: str | None = None) -> Scorecard:
        """Every estimate with actuals (of a workload, or the stage) compared, and scored."""
        from trncost.estimate.actuals import scorecard

        if workload_id is not None and self.records.get_workload(workload_id) is None:
            raise NotFound(f"workload {workload_id} not found")
        found = self.store.estimates_with_actuals(workload_id)
        comparisons = []
        for estimate_id in sorted(found):
            try:
                comparisons.append(self.comparison(estimate_id))
            except (NotFound, DomainError) as exc:
                log.warning("estimate %s left out of the scorecard: %s", estimate_id, exc)
        return scorecard(comparisons, workload_id=workload_id)

    # -- forecasts as FOCUS rows -----------------------------------------------------------------
    def forecast_focus(
        self, estimate_id: str, version: int | None = None, start: date | None = None
    ) -> Rendered:
        """The estimate's run as FOCUS-shaped forecast rows (CSV): the point and P10/P50/P90,
        from `start` (default: the day the version was made)."""
        from trncost.report.focus import forecast_csv

        found = self.estimates.version(estimate_id, version)
        definition = self._definition(estimate_id)
        run, _ = self._run_range(definition, found) if definition else (None, [])
        begin = start or date.fromisoformat(found.created_at[:10])
        return forecast_csv(found.estimate, estimate_id, found.version, run, begin)

    # -- a budget from an estimate ---------------------------------------------------------------
    def create_budget(self, estimate_id: str, request: BudgetRequest) -> BudgetView:
        """An AWS Budget on the estimate's tag: limit the run's P90, alerts at P50 and P90.
        The same budget again is unchanged; other figures replace it."""
        from trncost.billing import budgets as b
        from trncost.metrics.jobs import ESTIMATE_ID_TAG

        definition = self._definition(estimate_id)
        if definition is None:
            raise NotFound(f"estimate {estimate_id} not found")
        if not self.account_id:
            raise DomainError("this stage does not know its account id: no budget can be made")
        if self._budgets is None:
            raise DomainError("no Budgets client configured")
        latest = self.estimates.version(estimate_id)
        run, _ = self._run_range(definition, latest)
        if run is None or run.p50 is None or run.p90 is None:
            raise DomainError(
                f"estimate {estimate_id} has no P90 to budget (a PENDING price, or an "
                "infeasible plan): price it first"
            )
        start = request.start or self.clock().date().replace(day=1)
        end = request.end or start.replace(year=start.year + 1)
        if end <= start:
            raise InvalidInput("end: must be after start", fields=["end"])
        wanted = b.create_request(
            account_id=self.account_id,
            estimate_id=estimate_id,
            limit=run.p90,
            p50=run.p50,
            start=start,
            end=end,
            subscribers=list(request.subscribers),
        )
        name = wanted["Budget"]["BudgetName"]
        client = self._budgets()
        existing = client.describe(self.account_id, name)
        if existing is not None and b.same_budget(existing, wanted):
            outcome = "unchanged"
        else:
            if existing is not None:
                client.delete(self.account_id, name)
            client.create(wanted)
            outcome = "replaced" if existing is not None else "created"
        return BudgetView(
            budget_name=name,
            account_id=self.account_id,
            estimate_id=estimate_id,
            estimate_version=latest.version,
            limit_usd=Decimal(wanted["Budget"]["BudgetLimit"]["Amount"]),
            alerts=[
                BudgetAlert(percentile="P50", threshold_usd=Decimal(b.usd(run.p50))),
                BudgetAlert(percentile="P90", threshold_usd=Decimal(b.usd(run.p90))),
            ],
            start=start.isoformat(),
            end=end.isoformat(),
            tag_key=ESTIMATE_ID_TAG,
            metric=b.METRIC,
            outcome=outcome,
        )

"""Estimates as stored, versioned things: create one, read its versions and its report,
recompute it when its evidence or its prices change.

The refresh rule: a version is added only when the estimate's *figures* change (totals, line
items, time, throughput, pending terms, warnings: `trncost.estimate.changes`), and it lists
what changed, from what to what. Unchanged inputs are not even recomputed (the fingerprint);
changed inputs that leave every figure where it was (a trial of another instance type, a new
snapshot with the same prices) add nothing. A repeated event changes nothing.

A refresh is isolated per estimate: one that cannot be recomputed (its inputs out of range, a
stored record that no longer validates, missing evidence) is recorded as a refresh failure of
that estimate with its reason, and the others go on. Only an AWS service failing after its
retries (throttling, 5xx, no answer) stops the refresh: the message is then retried, and ends
in the dead-letter queue if it keeps failing, so nothing is lost.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from trncost import aws
from trncost.errors import (
    Busy,
    Conflict,
    DomainError,
    InvalidInput,
    NoPrices,
    NotFound,
    Unavailable,
    first_validation_error,
)
from trncost.events import DetailType
from trncost.model import (
    Assumptions,
    Candidate,
    Decision,
    EstimateInput,
    PriceSnapshot,
)
from trncost.model.records import (
    EstimateDefinition,
    EstimateListing,
    EstimatePage,
    EstimateVersion,
    RefreshFailure,
    Standing,
    UnreadableDefinition,
    VersionSummary,
)
from trncost.pricing.names import KnownNames
from trncost.services.versions import (
    changes_between,
    estimate,
    estimate_decision,
    estimate_extras,
    fingerprint,
    scope_of,
    summary_of,
)
from trncost.store.prices import PriceStore
from trncost.store.records import RecordStore

if TYPE_CHECKING:  # the report is imported on first use, not at cold start
    from trncost.bus import EventPublisher
    from trncost.model.actuals import ActualsComparison
    from trncost.model.capacity import CapacityPlan
    from trncost.report.break_even import Alternative
    from trncost.report.render import Rendered
    from trncost.store.outbox import OutboxEvent

log = logging.getLogger(__name__)
__all__ = [
    "EstimateService",
    "Refreshed",
    "infrastructure_failure",
    "route_refresh",
]


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Refreshed:
    estimate_id: str
    version: int | None  # None: unchanged, or could not be computed (see reason)
    reason: str
    failed: bool = False  # could not be recomputed: recorded as a refresh failure


def infrastructure_failure(exc: BaseException) -> bool:
    """An AWS service still throttling or failing after its retries (or another delivery
    holding the work): a later try may succeed, so the message goes back to the queue. Anything
    else is about this estimate's own data and cannot get better by retrying."""
    return isinstance(exc, Unavailable | Busy) or aws.unavailable(exc)


class EstimateService:
    def __init__(
        self,
        records: RecordStore,
        prices: PriceStore,
        clock: Callable[[], datetime] = _now,
        names: KnownNames | None = None,
        actuals: Callable[[str], ActualsComparison | None] | None = None,
        capacity: Callable[[str, int], CapacityPlan | None] | None = None,
        publisher: EventPublisher | None = None,
    ) -> None:
        self.records = records
        self.prices = prices
        self.clock = clock
        self.names = names or KnownNames()  # botocore's names (+ the stage catalog's)
        # the estimate's billed actuals, for its report (trncost.services.actuals); None: none
        self.actuals = actuals
        # the capacity last quoted for a version, for its report (trncost.services.capacity)
        self.capacity = capacity
        # "Estimate Decision Changed" when a refreshed version decides otherwise, written with
        # the version in the outbox (None: no bus, nothing announced)
        from trncost.services.outbox import Outbox

        self.outbox = Outbox.beside(records, publisher)

    # -- reading ----------------------------------------------------------------------------
    def version(self, estimate_id: str, version: int | None = None) -> EstimateVersion:
        """One version (the latest when `version` is None); NotFound when there is none."""
        found = self.records.get_version(estimate_id, version)
        if found is None:
            what = f"estimate {estimate_id}" + (f" version {version}" if version else "")
            raise NotFound(f"{what} not found")
        return found

    def listing(self, workload_id: str, limit: int = 50, cursor: str | None = None) -> EstimatePage:
        """One page of the workload's estimates, each with its latest version; NotFound for an
        unknown workload."""
        if self.records.get_workload(workload_id) is None:
            raise NotFound(f"workload {workload_id} not found")
        page = self.records.list_estimates(workload_id, limit, cursor)
        listed = [self._listed(d, summary) for d, summary in page.items]
        standings = self.records.get_standings([e.estimate_id for e in listed if e.summary])
        listed = [replace(e, standing=standings.get(e.estimate_id)) for e in listed]
        return EstimatePage(listed, page.cursor)

    def _listed(
        self,
        definition: EstimateDefinition | UnreadableDefinition,
        summary: VersionSummary | None = None,
    ) -> EstimateListing:
        if isinstance(definition, UnreadableDefinition):
            return EstimateListing(definition.estimate_id, None, None, None, definition.reason)
        if summary is not None:  # the headline kept with the definition: no version read
            eid, pinned = definition.estimate_id, definition.snapshot_id
            return EstimateListing(eid, definition.candidate, pinned, None, summary=summary)
        eid = definition.estimate_id
        try:
            latest = self.records.get_version(eid)
        except ValidationError as exc:
            why = f"latest version does not validate: {_reason(exc)}"
            return EstimateListing(eid, definition.candidate, definition.snapshot_id, None, why)
        problem = None if latest is not None else "no version stored"
        return EstimateListing(eid, definition.candidate, definition.snapshot_id, latest, problem)

    def versions(self, estimate_id: str) -> list[dict[str, Any]]:
        """Every version's number, time, reason and changes, oldest first."""
        versions = self.records.list_versions(estimate_id)
        if not versions:
            raise NotFound(f"estimate {estimate_id} not found")
        return versions

    def render(self, estimate_id: str, version: int | None = None, fmt: str = "html") -> Rendered:
        """A version's report as `fmt`: the HTML page (with the break-even of a PENDING price
        against the best comparable estimate of the workload), or its line items and input
        table as CSV or Markdown."""
        from trncost.report.render import check_format, render_estimate

        try:
            check_format(fmt)
        except ValueError as exc:
            raise InvalidInput(str(exc), fields=["format"]) from None
        found = self.version(estimate_id, version)
        workload = self.records.get_workload(found.estimate.workload_id)
        return render_estimate(
            found.estimate,
            fmt,
            estimate_id=estimate_id,
            version=found.version,
            created_at=found.created_at,
            workload_name=workload.name if workload else None,
            alternative=self.alternative(found) if fmt != "csv" else None,
            rng=found.range,
            actuals=self.actuals(estimate_id) if self.actuals and fmt == "html" else None,
            checkpoint=found.checkpoint,
            capacity=(
                self.capacity(estimate_id, found.version)
                if self.capacity and fmt == "html"
                else None
            ),
            decision=self._decision(found) if fmt != "csv" else None,
        )

    def _decision(self, found: EstimateVersion) -> Decision | None:
        """The version's decision; decided now for a version stored before decisions were
        kept (on the evidence it was computed from, trials recorded by then)."""
        if found.decision is not None:
            return found.decision
        definition = self.records.get_estimate_definition(found.estimate_id)
        if definition is None:
            return None
        try:
            inp = self._input(definition)
        except (DomainError, NotFound):
            return None
        trials = self.records.trials_recorded_by(definition.workload_id, found.created_at)
        inp = inp.model_copy(update={"trials": trials})
        return estimate_decision(inp, found.estimate)

    def standing(self, estimate_id: str, workload_id: str) -> Standing | None:
        """Where the estimate stands among its workload's (stored when a version is added;
        computed once here for an estimate stored before standings were kept)."""
        found = self.records.get_standing(estimate_id)
        if found is None:
            found = self.restand(workload_id).get(estimate_id)
        return found

    def restand(self, workload_id: str) -> dict[str, Standing]:
        """Rank the workload's estimates from their latest headlines and store each standing
        that moved (trncost.estimate.standings): run whenever a version is added, so a read
        never ranks. An estimate stored before headlines were kept is summarised first."""
        from trncost.estimate.standings import standings

        entries: list[tuple[str, VersionSummary]] = []
        for eid, summary in self.records.summaries(workload_id):
            if summary is None:
                summary = self._summarize_stored(eid)
            if summary is not None:
                entries.append((eid, summary))
        computed = standings(entries, at=self.clock().isoformat())
        before = self.records.get_standings(list(computed)) if len(computed) <= 100 else {}
        moved = [
            st
            for eid, st in computed.items()
            if eid not in before
            or before[eid].model_dump(exclude={"computed_at"})
            != st.model_dump(exclude={"computed_at"})
        ]
        self.records.put_standings(moved)
        return computed

    def _summarize_stored(self, estimate_id: str) -> VersionSummary | None:
        """The headline of a version stored before headlines were kept, kept now."""
        definition = self.records.get_estimate_definition(estimate_id)
        latest = self.records.get_version(estimate_id)
        if definition is None or latest is None:
            return None
        try:
            scope = scope_of(self._input(definition))
        except (DomainError, NotFound):
            scope = None
        summary = summary_of(latest, scope)
        self.records.set_summary(estimate_id, summary)
        return summary

    def alternative(self, found: EstimateVersion) -> Alternative | None:
        """The break-even of a PENDING estimate against the cheapest fully priced comparable
        estimate of its workload, as stored with its standing; None for an estimate with no
        PENDING price."""
        from trncost.report.break_even import Alternative

        if not found.estimate.incomplete:  # incomplete, or projected with a PENDING price
            return None
        st = self.standing(found.estimate_id, found.estimate.workload_id)
        if st is None:
            return None
        return Alternative(
            st.break_even,
            against_estimate_id=st.against_estimate_id,
            against_total_usd=st.against_total_usd,
            considered=st.considered,
        )

    def snapshot(self, snapshot_id: str | None) -> PriceSnapshot:
        """A pinned snapshot, or the latest; NoPrices when there is none."""
        return self._snapshot(snapshot_id)

    def _snapshot(self, snapshot_id: str | None) -> PriceSnapshot:
        try:
            snap = self.prices.get_snapshot(snapshot_id) if snapshot_id else self.prices.latest()
        except ValidationError as exc:  # stored before a bound existed (trncost.model.bounds)
            raise DomainError(
                f"price snapshot {snapshot_id or '(latest)'} holds a quote out of range"
                f" ({first_validation_error(exc)[1]}): take a new snapshot"
            ) from None
        if snap is None:
            raise NoPrices(
                f"price snapshot {snapshot_id} not found"
                if snapshot_id
                else "no price snapshot yet: take one (POST /prices/snapshots) first"
            )
        return snap

    def input_for(self, estimate_id: str) -> EstimateInput:
        """The estimate's inputs now: its definition, the workload's trials and its snapshot
        (the latest for one that follows the latest); NotFound for an unknown estimate."""
        definition = self.records.get_estimate_definition(estimate_id)
        if definition is None:
            raise NotFound(f"estimate {estimate_id} not found")
        return self._input(definition)

    def _input(self, definition: EstimateDefinition) -> EstimateInput:
        workload = self.records.get_workload(definition.workload_id)
        if workload is None:
            raise NotFound(f"workload {definition.workload_id} not found")
        return EstimateInput(
            workload=workload,
            candidate=definition.candidate,
            trials=self.records.all_trials(definition.workload_id),
            prices=self._snapshot(definition.snapshot_id),
            assumptions=definition.assumptions,
        )

    def create(
        self,
        workload_id: str,
        candidate: Candidate,
        assumptions: Assumptions,
        snapshot_id: str | None = None,
        created_by: str | None = None,
    ) -> EstimateVersion:
        """Compute and store a new estimate (version 1), noting who asked (`created_by`: the
        caller's IAM ARN). Domain errors surface unchanged; an instance type or region AWS does
        not know is refused (422, with the close matches)."""
        self.names.check_candidate(candidate)
        self.names.check_assumptions(assumptions)
        retraction = self.records.workload_retraction(workload_id)
        if retraction is not None:
            raise Conflict(
                f"workload {workload_id} was retracted at {retraction.at} ({retraction.reason}):"
                " it takes no new estimate"
            )
        definition = EstimateDefinition(
            estimate_id=f"est-{uuid.uuid4().hex[:12]}",
            workload_id=workload_id,
            candidate=candidate,
            assumptions=assumptions,
            snapshot_id=snapshot_id,
            created_at=self.clock().isoformat(),
            created_by=created_by,
        )
        inp = self._input(definition)
        result = estimate(inp)  # raises MissingEvidence / DomainError before anything is stored
        extras = estimate_extras(inp, result)
        first = EstimateVersion(
            estimate_id=definition.estimate_id,
            version=1,
            created_at=self.clock().isoformat(),
            reason="created",
            fingerprint=fingerprint(inp, definition),
            estimate=result,
            created_by=created_by,
            range=extras.range,
            checkpoint=extras.checkpoint,
            decision=extras.decision,
        )
        # the definition and its first version together, with the version's headline (what a
        # list page reads): never one without the other
        self.records.put_estimate(definition, first, summary_of(first, scope_of(inp)))
        try:  # the estimate is stored: a failure from here on must not answer 503
            self.restand(workload_id)
        except Exception as exc:  # noqa: BLE001 - the next version (or its first report) ranks
            if not infrastructure_failure(exc):
                raise
            eid = definition.estimate_id
            log.warning("estimate %s stored; the workload's standings were not: %s", eid, exc)
        return first

    def recompute(
        self, definition: EstimateDefinition, reason: str, attempts: int = 10
    ) -> Refreshed:
        """A new version from the current inputs, unless its figures are those of the latest.

        The latest version is read before the inputs and the next number is then taken
        exactly: if another refresh took it meanwhile, its inputs may be newer than ours, so
        the inputs are read again and the estimate recomputed — a newer version is never
        computed from older evidence. "Figures unchanged" is answered only while the version
        compared against is still the latest.
        """
        eid = definition.estimate_id
        for _ in range(attempts):
            latest = self.records.get_version(eid)
            try:
                inp = self._input(definition)
                fp = fingerprint(inp, definition)
                if latest is not None and latest.fingerprint == fp:
                    # a refresh retried after its version was stored: its headline too
                    if self.records.summary_version(eid) < latest.version:
                        self.records.set_summary(eid, summary_of(latest, scope_of(inp)))
                    return Refreshed(eid, None, "inputs unchanged")
                # its overrides were checked when it was created; a refresh never stalls on them
                result = estimate(inp, check_price_overrides=False)
            except (DomainError, NotFound) as exc:
                return self._failed(eid, reason, str(exc))
            moved = changes_between(latest.estimate, result) if latest is not None else []
            if latest is not None and not moved:
                if self.records.latest_version_number(eid) == latest.version:
                    return Refreshed(eid, None, "figures unchanged")
                continue  # another refresh stored a version meanwhile: compare with it
            extras = estimate_extras(inp, result)
            version = EstimateVersion(
                estimate_id=eid,
                version=(latest.version if latest else 0) + 1,
                created_at=self.clock().isoformat(),
                reason=reason,
                fingerprint=fp,
                estimate=result,
                created_by=definition.created_by,
                changes=moved,
                range=extras.range,
                checkpoint=extras.checkpoint,
                decision=extras.decision,
            )
            events = self._announcement(definition, latest, version)
            if self.records.put_version(version, events):
                self.records.set_summary(eid, summary_of(version, scope_of(inp)))
                if events and self.outbox is not None:
                    self.outbox.deliver(events)  # never raises: the sweeper sends the rest
                return Refreshed(eid, version.version, reason)
        raise RuntimeError(f"estimate {eid}: versions kept changing under {attempts} refreshes")

    def _announcement(
        self,
        definition: EstimateDefinition,
        before: EstimateVersion | None,
        after: EstimateVersion,
    ) -> list[OutboxEvent]:
        """'Estimate Decision Changed' with before/after, when the new version's own decision
        (action or reason codes) differs from the one before, or its total became known
        (trncost.services.readiness): the outbox event written with the version."""
        from trncost.services.readiness import decision_change

        if before is None or self.outbox is None:
            return []
        detail = decision_change(definition, before, after)
        if detail is None:
            return []
        subject = f"{definition.estimate_id}\n{after.version}"
        return [self.outbox.event(DetailType.estimate_decision_changed, subject, detail)]

    # -- isolated refreshes --------------------------------------------------------------------
    def _failed(self, estimate_id: str, trigger: str, why: str) -> Refreshed:
        """Record that this estimate could not be refreshed (its own data), and go on."""
        log.warning("estimate %s not refreshed (%s): %s", estimate_id, trigger, why)
        self.records.put_refresh_failure(
            RefreshFailure(estimate_id, self.clock().isoformat(), trigger, why)
        )
        return Refreshed(estimate_id, None, why, failed=True)

    def refresh_one(
        self, definition: EstimateDefinition | UnreadableDefinition, trigger: str
    ) -> Refreshed:
        """One estimate refreshed on its own: whatever its own data raises is its failure;
        an infrastructure failure is raised (the message is retried)."""
        if isinstance(definition, UnreadableDefinition):
            return self._failed(definition.estimate_id, trigger, definition.reason)
        try:
            return self.recompute(definition, trigger)
        except Exception as exc:
            if infrastructure_failure(exc):
                raise
            why = _reason(exc)
            return self._failed(definition.estimate_id, trigger, why)

    def refresh_failures(self, estimate_id: str) -> list[RefreshFailure]:
        """Why the estimate's refreshes failed, newest first (empty: none did)."""
        return self.records.refresh_failures(estimate_id)

    def refresh_workload(self, workload_id: str, reason: str) -> list[Refreshed]:
        done = [self.refresh_one(d, reason) for d in self.records.readable_definitions(workload_id)]
        if done:  # always: a retried refresh stands what its first try stored and did not stand
            self.restand(workload_id)
        return done

    def refresh_for_snapshot(self, previous_id: str | None, new_id: str) -> list[Refreshed]:
        """Recompute estimates that follow the latest prices and were made with another
        snapshot (pinned estimates keep theirs), each on its own."""
        done: list[Refreshed] = []
        trigger = f"price snapshot {new_id}"
        cursor = None
        while True:
            ids, cursor = self.records.workload_ids(limit=100, cursor=cursor)
            for workload_id in ids:
                mine = [
                    self.refresh_one(definition, trigger)
                    for definition in self.records.readable_definitions(workload_id)
                    if self._follows_other_snapshot(definition, new_id)
                ]
                if any(r.version is not None for r in mine):
                    self.restand(workload_id)
                done += mine
            if cursor is None:
                return done

    def _follows_other_snapshot(
        self, definition: EstimateDefinition | UnreadableDefinition, new_id: str
    ) -> bool:
        if isinstance(definition, UnreadableDefinition):
            return True  # its snapshot cannot be told: refreshed, i.e. recorded as failing
        if definition.snapshot_id is not None:
            return False
        try:
            latest = self.records.get_version(definition.estimate_id)
        except ValidationError:
            return True  # a stored version that no longer validates: recompute it
        return latest is None or latest.estimate.snapshot_id != new_id


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        return f"a stored record does not validate: {first_validation_error(exc)[1]}"
    return f"{type(exc).__name__}: {exc}"[:1000]


def route_refresh(service: EstimateService, event: dict[str, Any]) -> list[Refreshed]:
    """Which estimates an event on the bus should refresh, refreshed."""
    detail = event.get("detail") or {}
    kind = event.get("detail-type")
    if kind == DetailType.trial_recorded and detail.get("workload_id"):
        reason = f"trial {detail.get('trial_id')} recorded"
        if detail.get("outcome") == "retracted":
            reason = f"trial {detail.get('trial_id')} retracted: {detail.get('reason') or ''}"
        return service.refresh_workload(str(detail["workload_id"]), reason)
    if kind == DetailType.price_snapshot_taken and detail.get("snapshot_id"):
        return service.refresh_for_snapshot(
            detail.get("previous_snapshot_id"), str(detail["snapshot_id"])
        )
    log.warning("refresh ignored an event it does not handle: %s", kind)
    return []

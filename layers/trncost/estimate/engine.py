"""The estimate engine: workload + trials + prices + assumptions → Estimate. Pure: no I/O,
no clock, no boto3. Pydantic in, pydantic out."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import TypedDict

from trncost import __version__
from trncost.errors import DomainError
from trncost.estimate.costs import COMPONENTS, CostContext
from trncost.estimate.evidence import Evidence
from trncost.estimate.ledger import Ledger
from trncost.estimate.money import usd
from trncost.estimate.overrides import check_overrides, override_problems, used_prices
from trncost.estimate.timing import TimeModel, time_to_target
from trncost.model.basis import PriceBasis, weakest
from trncost.model.bounds import LEDGER_MAX_USD, MAX_HELD_HOURS
from trncost.model.candidate import Candidate
from trncost.model.estimate import (
    Component,
    Estimate,
    EstimateInput,
    InputRow,
    LineItem,
    PendingTerm,
)
from trncost.model.provenance import UserAssumption


class _Common(TypedDict):
    """The fields every estimate has, feasible or not."""

    engine_version: str
    workload_id: str
    candidate: Candidate
    snapshot_id: str
    target_unit: str
    target_amount: float
    target_tokens: float | None
    steady_throughput: float


def estimate(inp: EstimateInput, *, check_price_overrides: bool = True) -> Estimate:
    """The cost of one completed training target for `inp.candidate`, line by line.

    Raises MissingEvidence when no usable trial exists for the candidate, DomainError when
    the inputs contradict each other or a line would not fit the ledger exactly (above
    LEDGER_MAX_USD, trncost.model.bounds), InvalidInput when a price override names a key the
    estimate does not use or a unit that key is not billed in (unless
    `check_price_overrides` is False: a comparison checks its overrides across candidates).
    A PENDING price never counts as 0: the estimate is then `incomplete`, its total a formula
    in the unknown price, and every component with a PENDING line has no subtotal. A time to
    target past MAX_HELD_HOURS is `infeasible`.
    """
    try:
        return _estimate(inp, check_price_overrides)
    except ArithmeticError as exc:  # Decimal overflow or invalid operation, float overflow
        raise DomainError(
            f"the estimate cannot be computed exactly from these inputs ({type(exc).__name__}):"
            " a price, quantity or assumption is out of any physical range"
        ) from None


def _held_too_long(tm: TimeModel) -> TimeModel:
    """A time to target no run could take is infeasible, not a bill."""
    held = tm.time.held_h if tm.time is not None else None
    if held is None or (math.isfinite(held) and held <= MAX_HELD_HOURS):
        return tm
    reason = (
        f"the time to target ({held:.3g} instance-held hours) is past {MAX_HELD_HOURS:.0e} hours:"
        " at the trials' throughput the target is out of reach"
    )
    return dataclasses.replace(tm, time=None, infeasible_reason=reason)


def _check_ledger(ledger: Ledger) -> None:
    for line in ledger.lines:
        if line.amount_usd is not None and abs(line.amount_usd) > LEDGER_MAX_USD:
            raise DomainError(
                f"{line.name}: ${line.amount_usd:.3e} is past the ledger's ${LEDGER_MAX_USD:.0e}"
                f" bound (inputs: {', '.join(line.inputs)}): an input is out of range"
            )


def _estimate(inp: EstimateInput, check_price_overrides: bool) -> Estimate:
    w, c = inp.workload, inp.candidate
    ledger = Ledger(inp.prices, inp.assumptions.price_overrides)
    if inp.prices.basis == PriceBasis.example:
        ledger.warn(
            "example_prices",
            f"prices come from {inp.prices.snapshot_id}, an example file bundled with "
            "trncost, not from an AWS Price List snapshot: do not budget with them",
        )
    ev = Evidence.of(inp, ledger)
    tm = _held_too_long(time_to_target(ev, inp.assumptions, ledger))
    common = _Common(
        engine_version=__version__,
        workload_id=w.workload_id,
        candidate=c,
        snapshot_id=inp.prices.snapshot_id,
        target_unit=w.target.unit.value,
        target_amount=w.target.amount,
        target_tokens=w.target_tokens,
        steady_throughput=tm.steady_rate,
    )
    if tm.time is None:
        # The plan cannot finish: nothing is known, so nothing is a number (not even 0).
        return Estimate(
            **common,
            status="infeasible",
            infeasible_reason=tm.infeasible_reason,
            components={k: None for k in Component},
            total_known_usd=None,
            total_formula="no total: " + (tm.infeasible_reason or ""),
            warnings=ledger.warnings,
            inputs=_given_by(list(ledger.rows.values()), inp.assumption_sources),
            admission=ev.admission.records,
        )

    cx = CostContext(ev, tm, inp.assumptions, ledger)
    for component in COMPONENTS:
        component(cx)
    _check_ledger(ledger)
    if check_price_overrides:
        used = used_prices(ledger.lines)
        check_overrides(override_problems(inp.assumptions.price_overrides, used))
    _basis_warnings(ledger, inp)

    lines = ledger.lines
    known = sum((li.amount_usd for li in lines if li.amount_usd is not None), Decimal(0))
    pending = ledger.pending_terms()
    cloud, labour = _split(lines, "cloud"), _split(lines, "labour")
    total = None if pending else known
    per_m_tokens = None
    if total is not None and w.target_tokens:
        per_m_tokens = usd(total * Decimal(1_000_000) / Decimal(repr(w.target_tokens)))
    return Estimate(
        **common,
        status="incomplete" if pending else "complete",
        time=tm.time,
        effective_throughput=w.target.amount / (tm.time.total_h * 3600),
        line_items=lines,
        components=components_of(lines),
        total_known_usd=known,
        pending_terms=pending,
        total_usd=total,
        cloud_usd=cloud,
        labour_usd=labour,
        price_basis=weakest(li.price_basis for li in lines if li.priced),
        total_formula=total_formula(known, pending),
        cost_per_target_usd=total,
        cost_per_million_tokens_usd=per_m_tokens,
        warnings=ledger.warnings,
        inputs=_given_by(list(ledger.rows.values()), inp.assumption_sources),
        admission=ev.admission.records,
    )


def components_of(lines: list[LineItem]) -> dict[Component, Decimal | None]:
    """Each component's subtotal; None when one of its lines is PENDING (never 0 for an
    unknown). A component with no line is 0: nothing of it is charged."""
    out: dict[Component, Decimal | None] = {k: Decimal(0) for k in Component}
    for line in lines:
        so_far = out[line.component]
        if line.amount_usd is None or so_far is None:
            out[line.component] = None
        else:
            out[line.component] = so_far + line.amount_usd
    return out


def _split(lines: list[LineItem], cost: str) -> Decimal | None:
    """The sum of the `cost` lines (cloud or labour); None when one of them is PENDING."""
    total = Decimal(0)
    for line in lines:
        if line.cost != cost:
            continue
        if line.amount_usd is None:
            return None
        total += line.amount_usd
    return total


def _basis_warnings(ledger: Ledger, inp: EstimateInput) -> None:
    """Say which priced lines rest on something weaker than an official price."""
    by_basis: dict[PriceBasis, set[str]] = {}
    for line in ledger.lines:
        if line.priced and line.price_basis is not None:
            by_basis.setdefault(line.price_basis, set()).add(str(line.price_key))
    saved = by_basis.get(PriceBasis.saved_file)
    if saved:
        who = ""
        origin = inp.prices.origin
        if origin is not None and origin.basis == "saved_file":
            who = f" supplied by {origin.supplied_by} (sha256 {origin.sha256[:12]}…)"
        ledger.warn(
            "saved_file_prices",
            f"{len(saved)} price(s) come from {inp.prices.snapshot_id}, a saved Price List "
            f"file{who}: official format, unverified origin",
        )
    assumed = by_basis.get(PriceBasis.assumed)
    if assumed:
        ledger.warn(
            "assumed_prices",
            f"your override replaces the price of {', '.join(sorted(assumed))}: a what-if, "
            "not an official price",
        )


def total_formula(known: Decimal, pending: list[PendingTerm]) -> str:
    """`$known + q1 unit × P[key1] + …`: the total as a formula in the unknown prices."""
    parts = [f"${known:,.2f}"]
    for term in pending:
        parts.append(f"{term.quantity:,.2f} {term.unit} × P[{term.price_key}]")
    return " + ".join(parts)


def break_even_price(est: Estimate, alternative_total: Decimal) -> Decimal | None:
    """The price at which an incomplete estimate's total equals `alternative_total`: never
    negative.

    Defined when exactly one price is pending: (alternative − known) / quantity. None when it
    is not defined (several prices pending, a zero quantity) or when the known part alone
    already reaches the alternative (`known_part_exceeds`: no price makes it cheaper).
    """
    if len(est.pending_terms) != 1 or est.total_known_usd is None:
        return None
    term = est.pending_terms[0]
    if term.quantity <= 0 or known_part_exceeds(est, alternative_total):
        return None
    return (alternative_total - est.total_known_usd) / Decimal(repr(term.quantity))


def known_part_exceeds(est: Estimate, alternative_total: Decimal) -> bool:
    """The estimate's known part alone is at or above `alternative_total`: whatever the
    PENDING price turns out to be (≥ 0), it cannot be cheaper."""
    return est.total_known_usd is not None and est.total_known_usd >= alternative_total


def _assumption_key(name: str) -> str:
    """The Assumptions field a user-assumption row states (its provenance name)."""
    if name.startswith("price override "):
        return "price_overrides"
    return name.replace(" ", "_")


def _given_by(rows: list[InputRow], sources: Mapping[str, str]) -> list[InputRow]:
    """Each user-assumption row says where its key came from (shared or the candidate's)."""
    if not sources:
        return rows
    out = []
    for row in rows:
        prov = row.provenance
        if isinstance(prov, UserAssumption) and _assumption_key(prov.name) in sources:
            given = sources[_assumption_key(prov.name)]
            row = row.model_copy(update={"provenance": prov.model_copy(update={"given_by": given})})
        out.append(row)
    return out

"""The estimate engine: workload + trials + prices + assumptions → Estimate. Pure: no I/O,
no clock, no boto3. Pydantic in, pydantic out.

    total [USD] = instances + storage + data transfer + logs + data preparation
                  + adaptation & reruns                      (one completed training target)

The time to target comes from `timing.time_to_target`, each component from `costs.py`, every
charge through the `Ledger` (a price with its provenance, or PENDING). A PENDING price is
never 0: the total is then the formula known + Σ quantity × P[key] (`total_formula`), and
`break_even_price` gives the price at which it equals an alternative.

References
----------
DESIGN.md, principles 1 (the unit of cost), 3 (official prices, PENDING, break-even) and "The
cost model"; the seed checklist (seeds/000): 訓練實例費用 + 儲存費用 + 資料傳輸費用 + 日誌費用 +
資料準備費用 + 適配與重跑成本, and 沒有正式價格依據的費用，先列為待確認，不填入推測金額.
"""

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

        total                = Σ line amounts (every component's lines)              [USD]
        cost per 1M tokens   = total × 1,000,000 / target tokens                     [USD]
        effective throughput = target / (expected time to target × 3600)  [target units/s]

    Parameters
    ----------
    inp : EstimateInput
        The workload (target, quality gate, dataset, code version), the candidate (instance
        type, count, region, platform, purchase option), every trial of the workload, one
        price snapshot and the assumptions.
    check_price_overrides : bool
        Refuse a price override that names a key the estimate does not use, or a unit that
        key is not billed in (default). A comparison passes False and checks its overrides
        across all its candidates.

    Returns
    -------
    Estimate
        `complete` (every line priced: `total_usd` [USD] = `cloud_usd` + `labour_usd`,
        `cost_per_target_usd` [USD], `cost_per_million_tokens_usd` [USD] when the target's
        tokens are known); `incomplete` (a price is PENDING: `total_usd` is None,
        `total_known_usd` [USD] the priced part, `pending_terms` the quantities waiting for a
        price, `total_formula` the total in the unknown prices, and every component with a
        PENDING line has no subtotal); `projected` (no throughput trial of its own: the
        throughput is projected from another chip's trials, estimate/projection.py; priced as
        complete or incomplete, a planning figure, never a budget); or `infeasible` (the plan
        cannot finish, or its time is past `MAX_HELD_HOURS`: no line, no total,
        `infeasible_reason`, no `time`). Then the
        time to target (`time`, every part in [h]), the steady throughput [target units/s],
        the warnings, the input table and each trial's admission.

    Raises
    ------
    MissingEvidence
        No usable trial of the candidate's instance type and platform, and no other chip's
        trials to project it from.
    DomainError
        The inputs contradict each other, or a line would not fit the ledger exactly (above
        `LEDGER_MAX_USD`, trncost.model.bounds).
    InvalidInput
        A price override the estimate cannot use (with `check_price_overrides`).

    References
    ----------
    DESIGN.md, principles 1, 3 and 8 and "The cost model"; seeds/000 (the cost formula and
    the input table: 官方價格、自家試跑紀錄、仍是未知數).
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
        status="projected" if ev.projected else "incomplete" if pending else "complete",
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
    """Each component's subtotal: the sum of its `lines`' amounts.

    Returns
    -------
    dict[Component, Decimal or None]
        Every component's subtotal [USD]; None when one of its lines is PENDING (never 0 for
        an unknown). A component with no line is 0: nothing of it is charged.
    """
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
    """The total as a formula in the unknown prices.

    Parameters
    ----------
    known : Decimal
        The priced part of the total [USD].
    pending : list[PendingTerm]
        The quantities waiting for a price, one per price key.

    Returns
    -------
    str
        `$known + q1 unit × P[key1] + …` (`$1,234.56` alone when nothing is pending).
    """
    parts = [f"${known:,.2f}"]
    for term in pending:
        parts.append(f"{term.quantity:,.2f} {term.unit} × P[{term.price_key}]")
    return " + ".join(parts)


def break_even_price(est: Estimate, alternative_total: Decimal) -> Decimal | None:
    """The price at which an incomplete estimate's total equals `alternative_total`.

        P* = (alternative total − known part) / pending quantity

    Parameters
    ----------
    est : Estimate
        An estimate with exactly one PENDING price.
    alternative_total : Decimal
        The total to break even with, e.g. the cheapest comparable fully priced candidate's
        [USD].

    Returns
    -------
    Decimal or None
        P* [USD/unit], per unit of the pending term (e.g. per instance-hour); never negative.
        None when it is not defined (no or several prices pending, a zero quantity) or when
        the known part alone already reaches the alternative (`known_part_exceeds`: no price
        makes it cheaper).

    References
    ----------
    DESIGN.md, principle 3 (a total that needs a PENDING price is given as known part +
    quantity × price, with the break-even price against the best alternative).
    """
    if len(est.pending_terms) != 1 or est.total_known_usd is None:
        return None
    term = est.pending_terms[0]
    if term.quantity <= 0 or known_part_exceeds(est, alternative_total):
        return None
    return (alternative_total - est.total_known_usd) / Decimal(repr(term.quantity))


def known_part_exceeds(est: Estimate, alternative_total: Decimal) -> bool:
    """Whether `est`'s known part alone is at or above the alternative's total.

    Parameters
    ----------
    est : Estimate
        Any estimate (an incomplete one is the case that matters).
    alternative_total : Decimal
        The total to compare with [USD].

    Returns
    -------
    bool
        True when known part ≥ alternative total: whatever the PENDING price turns out to be
        (≥ 0), the estimate cannot be cheaper.
    """
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

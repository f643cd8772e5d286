"""The ledger: input rows, priced lines and pending terms of one estimate, in one place.

Every charge goes through `Ledger.charge`, so every line has a rate with provenance, an amount
or a pending term, and the input rows it came from.

References
----------
DESIGN.md, principles 3 (official prices only, each with its basis; PENDING, never 0) and 4
(every number has provenance; an estimate can print its input table); seeds/000 (可追溯的輸入表:
官方價格、自家試跑紀錄、仍是未知數).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from trncost.estimate.money import tiered_amount, usd
from trncost.model.basis import PriceBasis
from trncost.model.estimate import (
    Component,
    Cost,
    EstimateWarning,
    InputRow,
    LineItem,
    PendingTerm,
)
from trncost.model.price import (
    CapacityBlockTerms,
    PriceKey,
    PriceOverride,
    PriceSnapshot,
    PriceTier,
)
from trncost.model.provenance import Pending, Provenance, UserAssumption, derived


@dataclass(frozen=True)
class Rate:
    """A resolved price: tiers (None while pending; each tier's rate in USD per `unit`), its
    unit (`Hrs`, `GB-Mo`, `GB`, …), the input row holding it, why it is pending, its basis."""

    key: PriceKey
    tiers: Sequence[PriceTier] | None
    unit: str | None
    row_id: str
    pending_reason: str | None = None
    basis: PriceBasis | None = None  # None while pending

    @property
    def pending(self) -> bool:
        """Whether the price is PENDING (no tiers)."""
        return self.tiers is None

    @property
    def flat(self) -> Decimal | None:
        """The rate of a one-tier price [USD/unit]; None when tiered or pending."""
        return self.tiers[0].usd if self.tiers and len(self.tiers) == 1 else None


class Ledger:
    """The input table, line items and warnings of one estimate, and the prices it resolves.

    Parameters
    ----------
    snapshot : PriceSnapshot
        The price snapshot the estimate is priced from.
    overrides : Sequence[PriceOverride]
        User-assumed prices (basis `assumed`) that replace the snapshot's for their keys.
    """

    def __init__(self, snapshot: PriceSnapshot, overrides: Sequence[PriceOverride] = ()) -> None:
        self._snapshot = snapshot
        self._quotes = {str(q.key): q for q in snapshot.quotes}
        self._overrides = {str(o.key): o for o in overrides}
        self._rates: dict[str, Rate] = {}
        self.rows: dict[str, InputRow] = {}
        self.lines: list[LineItem] = []
        self.warnings: list[EstimateWarning] = []
        self._warned: set[str] = set()

    # -- input table -----------------------------------------------------------------------
    def row(
        self,
        row_id: str,
        label: str,
        value: str | float | int | bool | Decimal | None,
        unit: str | None,
        provenance: Provenance,
        price_basis: PriceBasis | None = None,
    ) -> str:
        """Record an input row once (the first value given for `row_id` stays).

        Parameters
        ----------
        row_id, label : str
            Its id (`time:total_h`, `price:<key>`, …) and what it is.
        value : str, float, int, bool, Decimal or None
            The figure, in `unit` [as stated] (money as a Decimal, kept as its string); None
            when not measured or pending.
        unit : str or None
            Its unit as the table shows it (`h`, `s`, `USD/Hrs`, …).
        provenance : Provenance
            Where it comes from: official price, trial measurement, user assumption,
            published reference, derived (formula and inputs) or pending.
        price_basis : PriceBasis or None
            A price's basis (official, saved_file, example, assumed).

        Returns
        -------
        str
            `row_id`.
        """
        if row_id not in self.rows:
            if isinstance(value, Decimal):
                value = str(value)
            self.rows[row_id] = InputRow.model_construct(
                id=row_id,
                label=label,
                value=value,
                unit=unit,
                provenance=provenance,
                price_basis=price_basis,
            )
        return row_id

    def derived(
        self,
        row_id: str,
        label: str,
        value: float,
        unit: str | None,
        formula: str,
        inputs: Sequence[str],
    ) -> str:
        """Record a derived row (`row_id`, `label` and `unit` as for `row`): computed by
        `formula` from the rows `inputs`.

        Parameters
        ----------
        value : float
            The figure, in `unit` [as stated].

        Returns
        -------
        str
            `row_id`.
        """
        return self.row(row_id, label, value, unit, derived(formula, list(inputs)))

    def warn(self, code: str, message: str) -> None:
        """Add the warning `code` with its `message`, once."""
        if (code, message) in {(w.code, w.message) for w in self.warnings}:
            return
        self.warnings.append(EstimateWarning(code=code, message=message))

    # -- prices ----------------------------------------------------------------------------
    def rate(self, key: PriceKey) -> Rate:
        """The rate for `key`: a user override, else the snapshot's quote, else PENDING;
        its input row `price:<key>` recorded once.

        Returns
        -------
        Rate
            Tiers in USD per billing unit, or none (PENDING, with the reason).
        """
        name = str(key)
        if name in self._rates:
            return self._rates[name]
        row_id = f"price:{name}"
        override = self._overrides.get(name)
        if override is not None:
            tiers = [PriceTier(usd=override.usd, rate_code="user_assumption")]
            rate = Rate(
                key=key, tiers=tiers, unit=override.unit, row_id=row_id, basis=PriceBasis.assumed
            )
            self.row(
                row_id,
                f"price {key}",
                override.usd,
                f"USD/{override.unit}",
                UserAssumption(name=f"price override {key}", note=override.note),
                PriceBasis.assumed,
            )
        else:
            quote = self._quotes.get(name) or self._snapshot.quote_for(key)
            if quote.is_pending:
                rate = Rate(
                    key=key,
                    tiers=None,
                    unit=None,
                    row_id=row_id,
                    pending_reason=quote.pending_reason,
                )
                self.row(row_id, f"price {key}", None, None, quote.provenance())
            else:
                rate = Rate(
                    key=key, tiers=quote.tiers, unit=quote.unit, row_id=row_id, basis=quote.basis
                )
                shown = rate.flat if rate.flat is not None else _tier_summary(quote.tiers)
                self.row(
                    row_id,
                    f"price {key}",
                    shown,
                    f"USD/{quote.unit}",
                    quote.provenance(),
                    quote.basis,
                )
        self._rates[name] = rate
        return rate

    def capacity_block_terms(self, key: PriceKey) -> CapacityBlockTerms | None:
        """The block terms of `key`'s capacity-block quote (block hours, instances).

        Returns
        -------
        CapacityBlockTerms or None
            None for an override, a pending price or a quote without block terms.
        """
        name = str(key)
        if name in self._overrides or name not in self._quotes:
            return None
        return self._quotes[name].capacity_block

    # -- charges ---------------------------------------------------------------------------
    def charge(
        self,
        component: Component,
        name: str,
        *,
        quantity: Decimal,
        unit: str,
        rate: Rate,
        inputs: Sequence[str],
        formula: str,
        periods: Decimal = Decimal(1),
    ) -> LineItem:
        """Charge `quantity` per period, through the rate's tiers, for `periods` periods::

            amount = periods × tiered(quantity)   (to the micro-dollar)          [USD]

        A PENDING rate yields no amount: the line records the pending quantity
        (periods × quantity) so the total can be written as a formula in the unknown price.

        Parameters
        ----------
        component : Component
            The cost component the line belongs to.
        name : str
            The line's name.
        quantity : Decimal
            Usage per period, in `unit` [unit of the price] (instance-hours, GB-months, GB, …).
        unit : str
            The quantity's unit as the line shows it.
        rate : Rate
            The resolved price (`Ledger.rate`).
        inputs : Sequence[str]
            The input rows the quantity comes from.
        formula : str
            How the amount is computed, in words (the line's provenance).
        periods : Decimal
            How many times the tiers restart (billing months) [months], 1 for a one-off.

        Returns
        -------
        LineItem
            The line (a cloud cost), also appended to `lines`.
        """
        row_ids = [*inputs, rate.row_id]
        if rate.pending:
            line = LineItem.model_construct(
                component=component,
                name=name,
                quantity=float(quantity * periods),
                unit=unit,
                rate_usd=None,
                rate_unit=None,
                amount_usd=None,
                price_key=str(rate.key),
                price_basis=None,
                cost="cloud",
                inputs=row_ids,
                provenance=Pending(
                    reason=rate.pending_reason or "price pending", price_key=str(rate.key)
                ),
            )
        else:
            assert rate.tiers is not None
            amount = usd(periods * tiered_amount(quantity, rate.tiers))
            line = LineItem.model_construct(
                component=component,
                name=name,
                quantity=float(quantity * periods),
                unit=unit,
                rate_usd=rate.flat,
                rate_unit=rate.unit,
                amount_usd=amount,
                price_key=str(rate.key),
                price_basis=rate.basis,
                cost="cloud",
                inputs=row_ids,
                provenance=derived(formula, row_ids),
            )
        self.lines.append(line)
        return line

    def charge_amount(
        self,
        component: Component,
        name: str,
        *,
        quantity: float,
        unit: str,
        rate_usd: Decimal,
        amount: Decimal,
        inputs: Sequence[str],
        formula: str,
        cost: Cost = "labour",
    ) -> LineItem:
        """A line whose rate is a user assumption rather than a price key (assumed labour:
        not an AWS price, so it has no price basis and is not on the cloud bill).

        Parameters
        ----------
        component, name : Component, str
            As for `charge`.
        quantity : float
            Hours [h].
        unit : str
            The quantity's unit as shown.
        rate_usd : Decimal
            The assumed hourly cost [USD/h].
        amount : Decimal
            quantity × rate [USD] (kept to the micro-dollar).
        inputs, formula : Sequence[str], str
            As for `charge`.
        cost : Cost
            `labour` (default) or `cloud`.

        Returns
        -------
        LineItem
            The line, also appended to `lines`.
        """
        line = LineItem.model_construct(
            component=component,
            name=name,
            quantity=quantity,
            unit=unit,
            rate_usd=rate_usd,
            rate_unit="h",
            amount_usd=usd(amount),
            price_key=None,
            price_basis=None,
            cost=cost,
            inputs=list(inputs),
            provenance=derived(formula, list(inputs)),
        )
        self.lines.append(line)
        return line

    def pending_terms(self) -> list[PendingTerm]:
        """The quantities waiting for a price: one term per PENDING price key, its lines'
        quantities summed.

        Returns
        -------
        list[PendingTerm]
            Price key, quantity [unit of the price], unit, reason and line names.
        """
        terms: dict[str, PendingTerm] = {}
        for line in self.lines:
            if line.amount_usd is not None or line.price_key is None:
                continue
            reason = line.provenance.reason if isinstance(line.provenance, Pending) else ""
            term = terms.get(line.price_key)
            if term is None:
                terms[line.price_key] = PendingTerm(
                    price_key=line.price_key,
                    quantity=line.quantity,
                    unit=line.unit,
                    reason=reason,
                    lines=[line.name],
                )
            else:
                terms[line.price_key] = term.model_copy(
                    update={
                        "quantity": term.quantity + line.quantity,
                        "lines": [*term.lines, line.name],
                    }
                )
        return list(terms.values())


def _tier_summary(tiers: Sequence[PriceTier]) -> str:
    parts = []
    for t in tiers:
        upper = "∞" if t.end is None else str(t.end.normalize())
        parts.append(f"[{t.begin.normalize()}–{upper}) {t.usd.normalize()}")
    return "; ".join(parts)

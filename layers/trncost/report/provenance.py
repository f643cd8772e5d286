"""Where a number comes from, as HTML: the provenance kinds, their badges and the anchors of
input rows that other rows (and the analysis page's charts) link to."""

from __future__ import annotations

from collections.abc import Iterable

from trncost.model import (
    OfficialPrice,
    Provenance,
    ProvenanceKind,
    PublishedReference,
    TrialMeasurement,
)
from trncost.model.basis import PriceBasis
from trncost.report.format import esc, timestamp

KIND_HELP: dict[ProvenanceKind, str] = {
    ProvenanceKind.official_price: "AWS Price List snapshot (SKU, rate code, effective date)",
    ProvenanceKind.trial_measurement: "measured in trial runs (trial ids, metric)",
    ProvenanceKind.user_assumption: "stated by the user (name, note)",
    ProvenanceKind.published_reference: "from named public sources (title, URL, date)",
    ProvenanceKind.derived: "computed by a formula over other rows",
    ProvenanceKind.pending: "no basis yet: never 0, never guessed",
}


# A derived figure's inputs are listed inline up to this many, folded beyond.
FOLD_INPUTS = 3


def row_anchor(row_id: str) -> str:
    """The anchor of an input row on the estimate page (whitespace becomes `_`)."""
    return "input-" + "_".join(row_id.split())


def kind_badge(kind: str, text: str | None = None) -> str:
    """The provenance kind as a badge (`text`: what it says instead of the kind's name)."""
    # a line may break after an underscore (`published_reference` in a narrow column)
    shown = esc(text if text is not None else kind).replace("_", "_<wbr>")
    return f'<span class="kind kind-{esc(kind)}">{shown}</span>'


NOT_MEASURED = "not measured"  # a pending input that is not a price: PENDING is for prices


def provenance_badge(p: Provenance, basis: PriceBasis | None) -> str:
    """The badge of a row or line's provenance as it is true: an official-format price whose
    basis is weaker than official gets no `official_price` badge (its basis badge says what it
    is: example, saved_file, assumed); a pending input that is not a price is "not measured"."""
    if p.kind == ProvenanceKind.official_price and basis not in (None, PriceBasis.official):
        return ""
    if p.kind == ProvenanceKind.pending and not getattr(p, "price_key", None):
        return kind_badge("not_measured", NOT_MEASURED)
    return kind_badge(p.kind)


BASIS_HELP: dict[PriceBasis, str] = {
    PriceBasis.official: "fetched by trncost from the AWS Price List API",
    PriceBasis.saved_file: "a Price List file a person supplied: official format, unverified",
    PriceBasis.example: "the illustrative file bundled with trncost",
    PriceBasis.assumed: "a user override (a what-if or a negotiated rate)",
}


def basis_badge(basis: PriceBasis | None) -> str:
    """A price's basis as a badge; a dash for a row or line that is not a price."""
    if basis is None:
        return '<span class="muted">—</span>'
    return (
        f'<span class="basis basis-{esc(basis.value)}" title="{esc(BASIS_HELP[basis])}">'
        f"{esc(basis.value)}</span>"
    )


def row_links(ids: Iterable[str], known: set[str]) -> str:
    """Row ids as code, linked to their rows when they are `known` on the page."""
    parts = []
    for row_id in ids:
        if row_id in known:
            parts.append(f'<a href="#{esc(row_anchor(row_id))}"><code>{esc(row_id)}</code></a>')
        else:
            parts.append(f"<code>{esc(row_id)}</code>")
    return ", ".join(parts)


def _origin(p: OfficialPrice) -> str:
    o = p.origin
    if o is None:
        return ""
    if o.basis == "official":
        filters = ", ".join(f"{f.field}={f.value}" for f in o.filters)
        return (
            f" · asked {esc(o.endpoint)} ({esc(o.operation)}) at {esc(timestamp(o.requested_at))}"
            + (f" with {esc(filters)}" if filters else "")
        )
    if o.basis == "saved_file":
        note = f" — {esc(o.note)}" if o.note else ""
        return (
            f" · file sha256 <code>{esc(o.sha256[:16])}…</code> supplied by "
            f"<code>{esc(o.supplied_by)}</code> at {esc(timestamp(o.supplied_at))}{note}"
        )
    return f" · bundled file <code>{esc(o.file)}</code>"


def _official(p: OfficialPrice) -> str:
    out = (
        f"snapshot <code>{esc(p.snapshot_id)}</code> ({esc(p.source)}, basis "
        f"{esc(p.basis.value)}) · SKU <code>{esc(p.sku)}</code> · rate code "
        f"<code>{esc(p.rate_code)}</code>"
    )
    if p.effective_date:
        out += f" · effective {esc(timestamp(p.effective_date))}"
    return out + _origin(p)


def _measured(p: TrialMeasurement) -> str:
    trials = ", ".join(f"<code>{esc(t)}</code>" for t in p.trial_ids)
    out = f"{esc(p.metric)} ← trials {trials}"
    if p.code_versions:
        out += " · code " + ", ".join(f"<code>{esc(v)}</code>" for v in p.code_versions)
    if p.dataset_ids:
        out += " · dataset " + ", ".join(f"<code>{esc(d)}</code>" for d in p.dataset_ids)
    return out


def _published(p: PublishedReference) -> str:
    # The sources folded: a row stays a line or two tall until someone asks for them.
    items = "".join(f"<li>{esc(src)}</li>" for src in p.sources)
    n = len(p.sources)
    out = esc(p.figure)
    if n:
        out += (
            f'<details class="sources"><summary>{n} source{"s" if n != 1 else ""}</summary>'
            f'<ul class="sources small">{items}</ul></details>'
        )
    if p.data_file:
        out += f'<span class="small">data: <code>{esc(p.data_file)}</code></span>'
    return out


def provenance_html(p: Provenance, known: set[str]) -> str:
    """Where a number comes from, as HTML (every data text escaped)."""
    match p.kind:
        case "official_price":
            return _official(p)
        case "trial_measurement":
            return _measured(p)
        case "published_reference":
            return _published(p)
        case "user_assumption":
            note = f" — {esc(p.note)}" if p.note else ""
            return f"<strong>{esc(p.name)}</strong>{note}"
        case "derived":
            out = f"<code>{esc(p.formula)}</code>"
            if len(p.inputs) > FOLD_INPUTS:  # folded: the row stays short until asked
                out += (
                    f'<details class="inputs-of small"><summary>from {len(p.inputs)} inputs'
                    f"</summary>{row_links(p.inputs, known)}</details>"
                )
            elif p.inputs:
                out += f'<span class="inputs-of small">from {row_links(p.inputs, known)}</span>'
            return out
        case _:
            if not p.price_key:  # not a price: simply not measured
                return f'<span class="muted">{NOT_MEASURED}</span>: {esc(p.reason)}'
            out = f'<span class="pending-text">PENDING</span>: {esc(p.reason)}'
            out += f" · <code>P[{esc(p.price_key)}]</code>"
            return out

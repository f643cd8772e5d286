"""A comparison's CSV and Markdown exports: what the page's first screen says (each candidate's
point, P50, P10–P90, chance of being the cheapest, price basis and decision), each decision's
reasons, the credits runway and the next trial worth running, then each candidate's line items
and input table. The CSV is one table (its `table` column says which rows are which); every
cell is guarded against spreadsheet formulas (`csv_cell`)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from trncost.model.analysis import Analysis, CandidateAnalysis, MoneyPercentiles, Runway
from trncost.report.exports import (
    CSV_COLUMNS,
    csv_cell,
    csv_rows,
    md_estimate,
    md_table,
    md_text,
    total_text,
)
from trncost.report.format import usd

SUMMARY_COLUMNS = ("candidate", "status", "point", "P50", "P10–P90", "p cheapest",
                   "price basis", "decision")  # fmt: skip
RUNWAY_FIELDS = ("targets_fit", "targets_before_expiry", "targets_on_credits", "runs_out_on",
                 "limited_by", "covered_per_target_usd", "uncovered_per_target_usd", "pace",
                 "formula")  # fmt: skip


def _band(c: CandidateAnalysis) -> tuple[MoneyPercentiles | None, str]:
    rng = c.range
    if rng is None:
        return None, ""
    if rng.total_usd is not None:
        return rng.total_usd, "total"
    return rng.known_usd, "known part"


def _summary_cells(analysis: Analysis, c: CandidateAnalysis) -> list[str]:
    ranked = {r.candidate_id: r for r in analysis.comparison.by_cost}.get(c.candidate_id)
    band, what = _band(c)
    est = c.estimate
    suffix = f" ({what})" if what == "known part" else ""
    return [
        c.candidate_id,
        est.status if est else f"not estimated: {c.error or ''}",
        total_text(est) if est else "",
        usd(band.p50) + suffix if band and band.p50 is not None else "",
        f"{usd(band.p10)} – {usd(band.p90)}{suffix}" if band and band.p10 is not None else "",
        f"{ranked.p_cheapest:.0%}" if ranked and ranked.p_cheapest is not None else "",
        est.price_basis.value if est and est.price_basis else "",
        c.decision.action.value if c.decision else "",
    ]


def _runway_values(r: Runway) -> list[tuple[str, str]]:
    return [(f, "" if getattr(r, f) is None else str(getattr(r, f))) for f in RUNWAY_FIELDS]


def _extra_rows(analysis: Analysis, c: CandidateAnalysis) -> Iterable[list[str]]:
    """The CSV rows of a candidate's summary, range, decision, runway and next trial."""
    blank = [""] * len(CSV_COLUMNS)

    def row(table: str, ident: str, label: str, value: str, amount: str = "") -> list[str]:
        out = list(blank)
        out[0], out[1], out[2], out[4], out[5], out[9] = (
            table, c.candidate_id, ident, label, value, amount
        )  # fmt: skip
        return out

    for header, cell in zip(SUMMARY_COLUMNS[1:], _summary_cells(analysis, c)[1:], strict=True):
        yield row("summary", header, header, cell)
    band, what = _band(c)
    if band is not None and c.range is not None:
        for name in ("p10", "p50", "p90"):
            value = getattr(band, name)
            yield row("range", name, what, usd(value), "" if value is None else str(value))
        yield row("range", "p_infeasible", "draws that cannot finish", f"{c.range.p_infeasible}")
    if c.decision is not None:
        yield row("decision", "action", c.decision.action.value, c.decision.summary)
        for reason in c.decision.reasons:
            yield row("decision_reason", reason.code, reason.message, reason.action.value)
    if c.runway is not None:
        for name, value in _runway_values(c.runway):
            yield row("runway", name, name.replace("_", " "), value)
        for line in c.runway.uncovered:
            amount = "" if line.amount_usd is None else str(line.amount_usd)
            yield row("runway_uncovered", line.component.value, line.name, usd(line.amount_usd),
                      amount)  # fmt: skip
    best = c.next_trial.best if c.next_trial is not None else None
    if best is not None:
        cost = "" if best.expected_cost_usd is None else str(best.expected_cost_usd)
        what_trial = f"{best.phase} at {best.instance_count} instances: {best.why}"
        yield row("next_trial", best.phase, what_trial, f"{best.narrower_by:.0%} narrower", cost)


def analysis_csv(analysis: Analysis) -> str:
    """Every candidate's summary (point, P50, P10–P90, p cheapest, basis, decision), range,
    decision reasons, credits runway and next trial, then its line items and input table."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for c in analysis.candidates:
        rows = list(_extra_rows(analysis, c))
        if c.estimate is not None:
            rows += list(csv_rows(c.candidate_id, c.estimate))
        for r in rows:
            writer.writerow([csv_cell(x) for x in r])
    return out.getvalue()


def _md_candidate(c: CandidateAnalysis) -> list[str]:
    parts: list[str] = []
    band, what = _band(c)
    if band is not None and c.range is not None:
        parts.append(
            f"**Range ({md_text(what)}):** P50 {md_text(usd(band.p50))} · P10–P90 "
            f"{md_text(usd(band.p10))} – {md_text(usd(band.p90))} "
            f"({c.range.samples:,} draws; p infeasible {c.range.p_infeasible:.1%})\n"
        )
    if c.decision is not None:
        parts.append(f"**Decision:** {md_text(c.decision.action.value)}\n")
        parts += [
            f"- {md_text(r.code)} ({md_text(r.action.value)}): {md_text(r.message)}"
            for r in c.decision.reasons
        ]
        parts.append("")
    if c.runway is not None:
        parts.append("**Credits runway**\n")
        parts.append(md_table(("field", "value"), _runway_values(c.runway)))
        if c.runway.uncovered:
            parts.append(
                "Not covered: "
                + md_text(", ".join(f"{u.name} ({usd(u.amount_usd)})" for u in c.runway.uncovered))
                + "\n"
            )
    best = c.next_trial.best if c.next_trial is not None else None
    if best is not None:
        parts.append(
            f"**Next trial worth running:** {md_text(best.phase)} at {best.instance_count} "
            f"instances, ~{best.expected_instance_hours:,.1f} instance-h "
            f"({md_text(usd(best.expected_cost_usd))}), {best.narrower_by:.0%} narrower: "
            f"{md_text(best.why)}\n"
        )
    return parts


def analysis_markdown(analysis: Analysis, *, title: str) -> str:
    """The candidates at a glance (point, P50, P10–P90, p cheapest, basis, decision), the
    migration decision, then per candidate its range, decision, runway, next trial, line items
    and input table."""
    summary = md_table(SUMMARY_COLUMNS, (_summary_cells(analysis, c) for c in analysis.candidates))
    parts = [f"# {md_text(title)}\n", "## Candidates\n", summary]
    if analysis.decision is not None:
        d = analysis.decision
        parts.append(
            f"\n**Migration decision:** {md_text(d.action.value)}, from "
            f"{md_text(d.candidate_id)}: {md_text(d.summary)}\n"
        )
    for c in analysis.candidates:
        parts.append(f"\n## {md_text(c.candidate_id)}\n")
        if c.estimate is None:
            parts.append(f"Not estimated: {md_text(c.error or '')}\n")
            continue
        parts += _md_candidate(c)
        parts += md_estimate(c.estimate, "###")
    return "\n".join(parts)

"""A report in the format asked for: the HTML page, or its line items and input table as CSV
or Markdown, with the content type and a file name to serve or write it under.

The services call these (the estimate report, the comparison report and a stored
comparison's report alike), so every route that serves a report offers the same formats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from trncost.model import Estimate, Range
from trncost.model.actuals import ActualsComparison
from trncost.model.analysis import Analysis, CheckpointAdvice, Decision
from trncost.model.capacity import CapacityPlan
from trncost.report.break_even import Alternative, break_even_text

ReportFormat = Literal["html", "csv", "md"]
FORMATS: tuple[str, ...] = get_args(ReportFormat)
CONTENT_TYPES: dict[str, str] = {
    "html": "text/html; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
}


@dataclass(frozen=True)
class Rendered:
    """A report's body, its content type and the file name it is offered under."""

    body: str
    content_type: str
    filename: str

    @property
    def disposition(self) -> str:
        """The Content-Disposition header: HTML and Markdown inline, CSV as a download."""
        how = "attachment" if self.filename.endswith(".csv") else "inline"
        return f'{how}; filename="{self.filename}"'


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "report"


def check_format(fmt: str) -> ReportFormat:
    """`fmt` if it is one of FORMATS; a ValueError naming `format` otherwise."""
    if fmt not in FORMATS:
        raise ValueError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    return fmt  # type: ignore[return-value]


def render_estimate(
    estimate: Estimate,
    fmt: str = "html",
    *,
    estimate_id: str | None = None,
    version: int | None = None,
    created_at: str | None = None,
    workload_name: str | None = None,
    alternative: Alternative | None = None,
    rng: Range | None = None,
    actuals: ActualsComparison | None = None,
    checkpoint: CheckpointAdvice | None = None,
    capacity: CapacityPlan | None = None,
    decision: Decision | None = None,
) -> Rendered:
    """One estimate's report as `fmt` (html, csv or md); `rng`: its stored range;
    `actuals`: its "Estimate vs actual" section, `checkpoint` its checkpoint interval advice and
    `capacity` the capacity last quoted for it (the page only)."""
    kind = check_format(fmt)
    stem = _safe(f"trncost-{estimate_id or estimate.candidate.instance_type}") + (
        f"-v{version}" if version else ""
    )
    if kind == "html":
        from trncost.report.html import render_report

        body = render_report(
            estimate,
            estimate_id=estimate_id,
            version=version,
            created_at=created_at,
            workload_name=workload_name,
            alternative=alternative,
            rng=rng,
            actuals=actuals,
            checkpoint=checkpoint,
            capacity=capacity,
            decision=decision,
        )
    elif kind == "csv":
        from trncost.report.exports import estimate_csv

        body = estimate_csv(estimate)
    else:
        from trncost.display import timestamp
        from trncost.report.exports import estimate_markdown

        meta = [
            ("Workload", workload_name or estimate.workload_id),
            ("Candidate", estimate.candidate.label),
            ("Status", estimate.status.upper()),
            ("Estimate", f"{estimate_id} version {version}" if estimate_id else "not stored"),
            ("Created", timestamp(created_at)),
            ("Price snapshot", estimate.snapshot_id),
        ]
        if rng is not None:
            from trncost.report.headline import range_text

            found = range_text(rng, estimate)
            if found is not None:
                meta.append(("P10–P90", re.sub(r"<[^>]+>", "", found[0] + "; " + found[1])))
        if decision is not None:
            first = "; ".join(f"{r.code}: {r.message}" for r in decision.reasons[:3])
            meta.append(("Decision", f"{decision.action.value}" + (f" — {first}" if first else "")))
        if alternative is not None and alternative.break_even is not None:
            meta.append(("Break-even", break_even_text(alternative.break_even)))
        title = f"trncost — {workload_name or estimate.workload_id} — {estimate.candidate.label}"
        body = estimate_markdown(estimate, title=title, meta=meta)
    return Rendered(body, CONTENT_TYPES[kind], f"{stem}.{kind}")


def render_analysis(
    analysis: Analysis,
    fmt: str = "html",
    *,
    workload_name: str | None = None,
    workload_id: str | None = None,
    name: str | None = None,
) -> Rendered:
    """An analysis (a comparison of candidates) as `fmt` (html, csv or md); `name` (a stored
    comparison's id) names the file."""
    kind = check_format(fmt)
    stem = _safe(f"trncost-{name or workload_id or 'comparison'}-comparison")
    if kind == "html":
        from trncost.report.analysis import render_analysis_report

        body = render_analysis_report(
            analysis, workload_name=workload_name, workload_id=workload_id
        )
    elif kind == "csv":
        from trncost.report.analysis_exports import analysis_csv

        body = analysis_csv(analysis)
    else:
        from trncost.report.analysis_exports import analysis_markdown

        title = f"trncost — {workload_name or workload_id or 'workload'} — comparison"
        body = analysis_markdown(analysis, title=title)
    return Rendered(body, CONTENT_TYPES[kind], f"{stem}.{kind}")

"""The analysis page's anchors: one section per candidate, its input rows inside it."""

from __future__ import annotations

from trncost.model.analysis import Analysis
from trncost.report.format import esc
from trncost.report.provenance import row_anchor


class PageAnchors:
    """Where each candidate's section and input rows are on the analysis page."""

    def __init__(self, analysis: Analysis) -> None:
        self.slug = {c.candidate_id: f"cand-{i}" for i, c in enumerate(analysis.candidates, 1)}
        self.rows = {
            c.candidate_id: {r.id for r in c.estimate.inputs} if c.estimate else set()
            for c in analysis.candidates
        }

    def candidate_link(self, candidate_id: str | None) -> str:
        if candidate_id is None:
            return '<span class="muted">—</span>'
        slug = self.slug.get(candidate_id)
        if slug is None:
            return esc(candidate_id)
        return f'<a href="#{slug}">{esc(candidate_id)}</a>'

    def input_anchor(self, candidate_id: str, row_id: str) -> str:
        return f"{self.slug[candidate_id]}-{row_anchor(row_id)}"

    def input_link(self, candidate_id: str, row_id: str, text: str | None = None) -> str:
        label = f"<code>{esc(text or row_id)}</code>"
        if row_id in self.rows.get(candidate_id, set()):
            return f'<a href="#{esc(self.input_anchor(candidate_id, row_id))}">{label}</a>'
        return label

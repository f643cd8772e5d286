"""Self-contained HTML reports (inline CSS and SVG; no CDN, no scripts): one estimate, or an
analysis of several candidates (decision, comparison, range, tornado, scaling curve)."""

from trncost.report.analysis import render_analysis_report
from trncost.report.html import render_report

__all__ = ["render_analysis_report", "render_report"]

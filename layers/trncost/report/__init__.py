"""Self-contained HTML report of an estimate (inline CSS and SVG; no CDN, no scripts)."""

from trncost.report.html import render_report

__all__ = ["render_report"]

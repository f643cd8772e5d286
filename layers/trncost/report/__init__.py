"""Self-contained HTML reports (inline CSS and SVG; no CDN, no scripts): one estimate, or an
analysis of several candidates (decision, comparison, range, tornado, scaling curve).

One module per section; the two pages are thin assemblers:

- `html`: one estimate's page (`render_report`) from `headline` (header, headline figures,
  warnings), `breakdown` (cost and time charts), `line_items` and `inputs`.
- `analysis`: the analysis page (`render_analysis_report`) from `decision` (header,
  decision), `comparison` and `candidate`, which draws on `ranges`, `tornado`, `scaling`,
  `mfu`, `credits` and `inputs`; `anchors` places each candidate's rows on the page.
- Shared by both: `format` (escaping, display rounding), `shell` (the page shell, labels and
  badges), `provenance` (where a number comes from), `style` (the CSS and chart colours).
"""

from trncost.report.analysis import render_analysis_report
from trncost.report.html import render_report

__all__ = ["render_analysis_report", "render_report"]

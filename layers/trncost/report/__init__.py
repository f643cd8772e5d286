"""Self-contained HTML reports (inline CSS and SVG; no CDN, no scripts): one estimate, or an
analysis of several candidates (decision, comparison, range, tornado, scaling curve).

One module per section; the two pages are thin assemblers:

- `render`: a report in the format asked for (`render_estimate`, `render_analysis`: HTML,
  CSV or Markdown, with its content type and file name): what the services call.
- `html`: one estimate's page (`render_report`) from `headline` (header, headline figures,
  warnings), `break_even` (a PENDING price against the best comparable estimate),
  `breakdown` (cost and time charts), `line_items` and `inputs`.
- `analysis`: the analysis page (`render_analysis_report`) from `decision` (header,
  decision), `comparison` (led by `sidebyside`, the candidates' cost and time on one chart)
  and `candidate`, which draws on `ranges`, `tornado`, `scaling`, `mfu`, `credits` and
  `inputs`; `anchors` places each candidate's rows on the page.
- `exports`: the line items and input table as CSV and Markdown.
- Shared: `format` (escaping; the numbers and times come from `trncost.display`, which the CLI
  and the exports use too), `shell` (the page shell, labels and badges), `provenance` (where a
  number comes from), `style` (the CSS and chart colours).
"""

from trncost.report.analysis import render_analysis_report
from trncost.report.html import render_report
from trncost.report.render import Rendered, render_analysis, render_estimate

__all__ = [
    "Rendered",
    "render_analysis",
    "render_analysis_report",
    "render_estimate",
    "render_report",
]

"""The report's stylesheet: inlined into every page (no CDN, no web fonts, no images)."""

from __future__ import annotations

# One colour per cost component, in the order of `Component`.
COMPONENT_COLOURS = ("#2563eb", "#0d9488", "#7c3aed", "#db2777", "#ea580c", "#4d7c0f")

# One colour per segment of the time split (steady, compile, warm-up, checkpoints,
# evaluation, failures, idle/queue).
TIME_COLOURS = ("#2563eb", "#f59e0b", "#fbbf24", "#0d9488", "#7c3aed", "#dc2626", "#94a3b8")

PENDING_STRIPE = "#d97706"

CSS = """
:root {
  --ink: #0f172a; --muted: #475569; --line: #cbd5e1; --soft: #f1f5f9; --paper: #ffffff;
  --ok: #166534; --ok-bg: #dcfce7; --warn: #92400e; --warn-bg: #fef3c7;
  --bad: #991b1b; --bad-bg: #fee2e2;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; color: var(--ink); background: var(--soft);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
        sans-serif;
}
main, .report-header { max-width: 1180px; margin: 0 auto; padding: 0 20px; }
.report-header { padding-top: 20px; }
section, .report-header > .card {
  background: var(--paper); border: 1px solid var(--line); border-radius: 8px;
  padding: 16px 20px; margin: 16px 0;
}
h1 { font-size: 1.5rem; margin: 0 0 4px; }
h2 { font-size: 1.15rem; margin: 0 0 12px; }
h3 { font-size: 1rem; margin: 12px 0 6px; }
p { margin: 6px 0; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: .88em; overflow-wrap: anywhere; }
.muted { color: var(--muted); }
.small { font-size: .85em; }
a { color: inherit; }
.candidate { font-size: 1.1rem; margin: 2px 0 10px; }
.meta { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr));
  gap: 6px 20px; margin: 10px 0 0; }
.meta div { min-width: 0; }
.meta dt { font-size: .75rem; text-transform: uppercase; letter-spacing: .04em;
  color: var(--muted); }
.meta dd { margin: 0; overflow-wrap: anywhere; }

.status { display: inline-block; padding: 3px 12px; border-radius: 999px; font-weight: 700;
  letter-spacing: .06em; font-size: .9rem; vertical-align: middle; border: 2px solid; }
.status-complete { color: var(--ok); background: var(--ok-bg); border-color: var(--ok); }
.status-incomplete { color: var(--warn); background: var(--warn-bg); border-color: var(--warn); }
.status-infeasible { color: var(--bad); background: var(--bad-bg); border-color: var(--bad); }

.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(260px, 1fr));
  gap: 14px; }
.figure { border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; }
.figure .label { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em;
  color: var(--muted); }
.figure .value { font-size: 1.7rem; font-weight: 700; font-variant-numeric: tabular-nums; }
.figure .value.pending { color: var(--warn); }
.figure .value.none { color: var(--bad); font-size: 1.2rem; }
.formula { display: block; font-size: 1.05rem; padding: 8px 10px; margin: 6px 0;
  background: var(--warn-bg); border-left: 4px solid var(--warn); border-radius: 4px; }
.infeasible-reason { padding: 8px 10px; background: var(--bad-bg);
  border-left: 4px solid var(--bad); border-radius: 4px; }
.pending-terms { margin: 8px 0 0; padding-left: 20px; }
.pending-terms li { margin: 4px 0; }

.warnings { border: 2px solid var(--warn); background: var(--warn-bg); }
.warnings h2 { color: var(--warn); }
.warnings ul { margin: 0; padding-left: 20px; }
.warnings li { margin: 4px 0; }
.warnings .code { font-weight: 700; }
.no-warnings { border-color: var(--ok); }

.chart { width: 100%; height: auto; max-width: 900px; display: block; }
.chart text { font-size: 13px; fill: var(--ink); }
.chart .axis-label { fill: var(--muted); font-size: 12px; }
.chart .pending-label { fill: var(--warn); font-weight: 700; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 6px 0 0; padding: 0;
  list-style: none; font-size: .85rem; color: var(--muted); }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px;
  vertical-align: -1px; margin-right: 4px; border: 1px solid rgba(0,0,0,.15); }
.swatch-pending { background: repeating-linear-gradient(45deg, #d97706 0 3px, #fef3c7 3px 6px); }

.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .88rem; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left;
  vertical-align: top; }
th { background: var(--soft); font-size: .78rem; text-transform: uppercase;
  letter-spacing: .03em; color: var(--muted); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tfoot td { font-weight: 700; border-top: 2px solid var(--ink); }
tr.pending-row td { background: #fffbeb; }
.pending-text { color: var(--warn); font-weight: 700; }
td.id { white-space: nowrap; }
td.source { max-width: 460px; overflow-wrap: anywhere; }
.inputs-of { display: block; margin-top: 2px; }
.inputs-of a { text-decoration: none; border-bottom: 1px dotted var(--muted); }
tr:target td { background: #e0f2fe; }

.kind { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: .75rem;
  font-weight: 600; white-space: nowrap; border: 1px solid; }
.kind-official_price { color: #1e40af; background: #dbeafe; border-color: #93c5fd; }
.kind-trial_measurement { color: #065f46; background: #d1fae5; border-color: #6ee7b7; }
.kind-user_assumption { color: #5b21b6; background: #ede9fe; border-color: #c4b5fd; }
.kind-derived { color: #334155; background: #e2e8f0; border-color: #94a3b8; }
.kind-pending { color: #92400e; background: #fef3c7; border-color: #d97706;
  border-style: dashed; }
.kind-counts { display: flex; flex-wrap: wrap; gap: 6px 14px; margin: 0 0 10px; padding: 0;
  list-style: none; }

footer { max-width: 1180px; margin: 0 auto; padding: 8px 20px 28px; color: var(--muted);
  font-size: .8rem; }

@media print {
  @page { margin: 14mm 12mm; }
  body { background: #fff; font-size: 10.5pt; }
  main, .report-header, footer { max-width: none; padding: 0; }
  section, .report-header > .card { border: none; border-radius: 0; padding: 0;
    margin: 0 0 14pt; }
  .warnings { border: 1.5pt solid var(--warn); padding: 6pt 8pt; }
  h2 { break-after: avoid; page-break-after: avoid; }
  tr, .figure, .chart, .warnings li { break-inside: avoid; page-break-inside: avoid; }
  thead { display: table-header-group; }
  .table-wrap { overflow: visible; }
  a { text-decoration: none; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""

"""The report's stylesheet: inlined into every page (no CDN, no web fonts, no images)."""

from __future__ import annotations

# One colour per cost component, in the order of `Component`.
COMPONENT_COLOURS = ("#2563eb", "#0d9488", "#7c3aed", "#db2777", "#ea580c", "#4d7c0f")

# One colour per segment of the time split (steady, compile, warm-up, checkpoints,
# evaluation, failures, idle/queue).
TIME_COLOURS = ("#2563eb", "#f59e0b", "#fbbf24", "#0d9488", "#7c3aed", "#dc2626", "#94a3b8")

PENDING_STRIPE = "#d97706"

# The analysis page's charts (SVG attributes, so a chart copied out of the page keeps them).
LOW_COLOUR = "#2563eb"  # tornado: the input at the low end of its range
HIGH_COLOUR = "#ea580c"  # tornado: the input at the high end of its range
BAND_COLOUR = "#93c5fd"
MEDIAN_COLOUR = "#1e3a8a"
POINT_COLOUR = "#0f172a"
FIT_COLOUR = "#2563eb"
IDEAL_COLOUR = "#94a3b8"
MEASURED_COLOUR = "#0d9488"
PLANNED_COLOUR = "#7c3aed"
AXIS_COLOUR = "#94a3b8"
GRID_COLOUR = "#e2e8f0"
EXTRAPOLATED_FILL = "#fef3c7"

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
.status-incomplete, .status-projected { color: var(--warn); background: var(--warn-bg);
  border-color: var(--warn); }
.status-infeasible { color: var(--bad); background: var(--bad-bg); border-color: var(--bad); }
.status-complete.status-not-ready { color: var(--warn); background: var(--warn-bg);
  border-color: var(--warn); }
.estimate-verdict { border-left: 4px solid #1e40af; background: #f8fafc; padding: 8px 14px;
  margin: 0 0 14px; }
.estimate-verdict[data-action="ready_to_budget"] { border-left-color: var(--ok); }
.estimate-verdict[data-action="pause_migration"] { border-left-color: var(--bad); }
.estimate-verdict p { margin: 0 0 4px; }
#summary-table .action { white-space: normal; }
#summary-table td[data-col="candidate"] { min-width: 9em; }
.first-reasons { margin: 4px 0 0; padding-left: 20px; }
.figure .value.range { font-size: 1.35rem; }

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

/* The line items and input tables: a fixed layout that shares the page's width (the
   <colgroup> says how), so from 1024 px up every column is on screen and nothing scrolls
   sideways; long ids, keys and sources wrap. Under 760 px each row is a card, every cell
   labelled with its column. */
table.fit { table-layout: fixed; }
table.fit td, table.fit th { overflow-wrap: anywhere; word-break: normal; }
table.fit td.num { white-space: normal; }
table.fit th { white-space: normal; letter-spacing: .01em; font-size: .72rem; }
table.fit td.badges .kind, table.fit td.badges .basis-of { display: inline-block;
  margin: 0 4px 3px 0; }
table.fit td.unit { overflow-wrap: break-word; }
table.fit td.input .label { display: block; }
table.fit td.input .component { display: block; text-transform: uppercase;
  letter-spacing: .03em; font-size: .72rem; }
table.fit .row-id { display: block; color: var(--muted); font-size: .78em; margin-top: 1px; }
table.fit .price-key { text-align: left; font-size: .78em; }
table.fit .kind, table.fit .basis { white-space: normal; max-width: 100%; }
table.fit td.source { max-width: none; }
table.fit td.total { text-align: right; }
table.fit td.total-formula { text-align: left; }
table.fit details.sources, table.fit details.tiers { margin: 2px 0 0; }
table.fit details.tiers summary { font-size: inherit; color: inherit; }
table.fit details.inputs-of { margin: 2px 0 0; }
table.fit details.inputs-of summary { font-size: .8rem; }
table.fit ul.tier-list { margin: 2px 0; padding: 0; list-style: none; text-align: right; }
table.fit details.sources summary { font-size: .8rem; }
table.fit ul.sources { margin: 2px 0; padding-left: 16px; }
@media (max-width: 759px) {
  table.fit, table.fit tbody, table.fit tr, table.fit td { display: block; width: 100%; }
  table.fit colgroup, table.fit thead { display: none; }
  table.fit tr { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 8px;
    padding: 4px 8px; }
  table.fit td { border: none; padding: 2px 0; text-align: left; }
  table.fit td.num { text-align: left; }
  table.fit td[data-col]::before { content: attr(data-col) ": "; color: var(--muted);
    font-size: .72rem; text-transform: uppercase; letter-spacing: .03em; }
  table.fit td.input[data-col]::before { content: none; }
  table.fit tfoot td { display: inline-block; width: auto; }
}

.kind { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: .75rem;
  font-weight: 600; white-space: nowrap; border: 1px solid; }
.kind-official_price { color: #1e40af; background: #dbeafe; border-color: #93c5fd; }
.kind-trial_measurement { color: #065f46; background: #d1fae5; border-color: #6ee7b7; }
.kind-user_assumption { color: #5b21b6; background: #ede9fe; border-color: #c4b5fd; }
.kind-derived { color: #334155; background: #e2e8f0; border-color: #94a3b8; }
.kind-not_measured { color: #475569; background: #f1f5f9; border-color: #cbd5e1; }
.kind-pending { color: #92400e; background: #fef3c7; border-color: #d97706;
  border-style: dashed; }
.basis { display: inline-block; padding: 1px 8px; border-radius: 4px; font-size: .75rem;
  font-weight: 700; white-space: nowrap; border: 1px solid; }
.basis-official { color: #065f46; background: #d1fae5; border-color: #10b981; }
.basis-saved_file { color: #92400e; background: #fef3c7; border-color: #d97706; }
.basis-example { color: #9a3412; background: #ffedd5; border-color: #ea580c; }
.basis-assumed { color: #5b21b6; background: #ede9fe; border-color: #7c3aed; }
.price-basis { margin: 10px 0 0; padding: 0; list-style: none; }
.price-basis li { margin: 4px 0; padding: 6px 10px; border-left: 4px solid var(--warn);
  background: var(--warn-bg); border-radius: 4px; font-weight: 600; }
.price-basis li.basis-line-assumed { border-left-color: #7c3aed; background: #ede9fe; }
.price-basis.all-official li { border-left-color: var(--ok); background: var(--ok-bg);
  font-weight: 400; }
.kind-counts { display: flex; flex-wrap: wrap; gap: 6px 14px; margin: 0 0 10px; padding: 0;
  list-style: none; }

footer { max-width: 1180px; margin: 0 auto; padding: 8px 20px 28px; color: var(--muted);
  font-size: .8rem; }

/* -- the analysis page: decision, comparison, range, tornado, scaling -- */
.action { display: inline-block; padding: 3px 12px; border-radius: 999px; font-weight: 700;
  letter-spacing: .05em; font-size: .9rem; vertical-align: middle; border: 2px solid;
  white-space: nowrap; }
.action-small { padding: 1px 8px; font-size: .72rem; border-width: 1px; }
.action-ready_to_budget { color: var(--ok); background: var(--ok-bg); border-color: var(--ok); }
.action-continue_trials { color: #1e40af; background: #dbeafe; border-color: #1e40af; }
.action-compare_alternatives { color: #5b21b6; background: #ede9fe; border-color: #5b21b6; }
.action-pause_migration { color: var(--bad); background: var(--bad-bg);
  border-color: var(--bad); }
.verdict { padding: 10px 14px; border-radius: 6px; border-left: 6px solid var(--line);
  background: var(--soft); margin: 0 0 8px; }
.verdict p:first-child { font-size: 1.1rem; }
.verdict-ready_to_budget { border-left-color: var(--ok); }
.verdict-continue_trials { border-left-color: #1e40af; }
.verdict-compare_alternatives { border-left-color: #5b21b6; }
.verdict-pause_migration { border-left-color: var(--bad); }
.reason-code { font-weight: 700; white-space: nowrap; overflow-wrap: normal; }
.reason-list { margin: 0; padding-left: 18px; }
.reason-list li { margin: 2px 0; }
.status-error { color: var(--bad); background: var(--bad-bg); border-color: var(--bad); }
h2 .status, h2 .action { margin-left: 6px; }
.bad-text { color: var(--bad); font-weight: 700; }
.next-trial td.num { white-space: normal; }
.next-trial td.num .small { display: block; overflow-wrap: anywhere; min-width: 120px; }
td.num .pending-formula { white-space: normal; text-align: left; min-width: 200px; }
#ranking td:last-child { min-width: 140px; }
#ranking td:nth-child(4) { min-width: 150px; }
#ranking td.num .pending-formula { min-width: 160px; overflow-wrap: anywhere; }
#ranking td.num, #ranking th { white-space: normal; }
table .status { font-size: .72rem; padding: 1px 8px; border-width: 1px; }
.by-time { margin: 4px 0; padding-left: 0; list-style: none; }
.candidate-analysis .block { border-top: 1px solid var(--line); padding-top: 8px;
  margin-top: 14px; }
.candidate-analysis .block.warnings { border: 2px solid var(--warn); border-radius: 6px;
  padding: 8px 14px; }
.candidate-analysis .block.warnings h3 { color: var(--warn); margin-top: 0; }
.cand-headline { margin: 0 0 6px; }
.error { font-size: 1rem; }
.flag { padding: 6px 10px; background: var(--warn-bg); border-left: 4px solid var(--warn);
  border-radius: 4px; }
.flag-badge { color: var(--bad); font-weight: 700; white-space: nowrap; }
tr.flag-row td { background: var(--bad-bg); }
tr.chosen td { font-weight: 700; }
.pending-note { color: var(--warn); }
.swatch-infeasible { background: repeating-linear-gradient(45deg, #dc2626 0 3px, #fee2e2 3px 6px); }
.notes { margin: 6px 0; padding-left: 20px; color: var(--muted); }
details { margin: 8px 0; }
details > summary { cursor: pointer; color: var(--muted); font-size: .9rem; }
svg.defs { position: absolute; width: 0; height: 0; overflow: hidden; }
.chart .end-label { font-size: 12px; }
.chart.side-by-side { max-width: 1100px; }
.chart .panel-title { font-weight: 700; font-size: 13px; }
.chart .row-label { font-size: 12px; }
.chart .row-sub { font-size: 11px; fill: #64748b; }
.chart .none-label { fill: var(--bad); font-weight: 700; }
.chart.tornado { max-width: 1100px; }
.chart a text { fill: #1e3a8a; text-decoration: underline; }
.params { margin: 6px 0; }
.params dt, th.greek { text-transform: none; }
.scaling-models { margin-bottom: 10px; }
h4 { font-size: .92rem; margin: 10px 0 4px; }
@media print {
  .candidate-analysis { break-before: page; page-break-before: always; }
}

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

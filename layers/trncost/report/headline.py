"""The estimate page's top: the header (workload, candidate, status, where the estimate comes
from), the headline figures (cost per completed target and per 1M tokens, the AWS bill apart
from assumed labour, time to target, effective throughput) with the formula in a PENDING
price, a badge for every price that is not official (naming it), and the warnings."""

from __future__ import annotations

from decimal import Decimal

from trncost.model import Estimate, Range
from trncost.model.analysis import Action, Decision
from trncost.model.basis import PriceBasis
from trncost.report.format import esc, hours, num, timestamp, usd
from trncost.report.shell import STATUS_TEXT, action_badge, meta_list, warning_items


# -- header ------------------------------------------------------------------------------------
def _parallelism(est: Estimate) -> str:
    par = est.candidate.parallelism
    text = f"TP {par.tensor} · PP {par.pipeline} · DP {par.data or 'auto'} · EP {par.expert}"
    if par.sequence:
        text += " · SP"
    return text


def _software(est: Estimate) -> str:
    c = est.candidate
    text = " ".join(x for x in (c.framework, c.framework_version) if x) or "—"
    if c.neuron_sdk_version:
        text += f" · Neuron SDK {c.neuron_sdk_version}"
    return text


def status_chip(est: Estimate, decision: Decision | None) -> str:
    """The status badge: green only when the estimate is complete, every price official and
    the decision is ready_to_budget; a complete estimate anything blocks says so in amber."""
    text = STATUS_TEXT.get(est.status, esc(est.status.upper()))
    cls = f"status status-{esc(est.status)}"
    title = ""
    if est.status == "complete":
        official = est.price_basis == PriceBasis.official
        ready = decision is not None and decision.action == Action.ready_to_budget
        if not (official and ready):
            cls += " status-not-ready"
            text += " · NOT READY TO BUDGET"
            why = [] if official else [f"prices are {est.price_basis or 'not priced'}"]
            if decision is None:
                why.append("no decision recorded")
            elif not ready:
                why.append(f"the decision is {decision.action.value}")
            title = f' title="every line is priced, but {esc("; ".join(why))}"'
    return f'<span class="{cls}" id="status" data-status="{esc(est.status)}"{title}>{text}</span>'


def header(
    est: Estimate,
    *,
    estimate_id: str | None,
    version: int | None,
    created_at: str | None,
    workload_name: str | None,
    decision: Decision | None = None,
) -> str:
    c = est.candidate
    workload = workload_name or est.workload_id
    workload_dd = esc(workload) + (
        f' <span class="muted">(<code>{esc(est.workload_id)}</code>)</span>'
        if workload_name and workload_name != est.workload_id
        else ""
    )
    if estimate_id:
        ident = f"<code>{esc(estimate_id)}</code>"
        ident += f" · version {esc(version)}" if version is not None else ""
    else:
        ident = '<span class="muted">not stored</span>'
    meta = [
        ("Workload", workload_dd),
        ("Estimate", ident),
        ("Created", esc(timestamp(created_at)) if created_at else '<span class="muted">—</span>'),
        ("Engine version", f"<code>{esc(est.engine_version)}</code>"),
        ("Price snapshot", f"<code>{esc(est.snapshot_id)}</code>"),
        ("Platform / purchase", f"{esc(c.platform)} · {esc(c.purchase_option)} · {esc(c.region)}"),
        ("Parallelism", esc(_parallelism(est))),
        ("Software", esc(_software(est))),
    ]
    n_warn = len(est.warnings)
    warn_chip = (
        f' <a class="small" href="#warnings">{n_warn} warning{"s" if n_warn != 1 else ""}</a>'
        if n_warn
        else ""
    )
    return (
        '<header class="report-header"><div class="card">'
        f'<p class="muted small">trncost · cost to reach one completed training target</p>'
        f"<h1>{esc(workload)}</h1>"
        f'<p class="candidate"><strong>{esc(c.label)}</strong> '
        f"{status_chip(est, decision)}{warn_chip}</p>"
        f'<dl class="meta">{meta_list(meta)}</dl>'
        "</div></header>"
    )


# -- headline ----------------------------------------------------------------------------------
def figure(label: str, value: str, sub: str = "", cls: str = "", fig_id: str = "") -> str:
    ident = f' id="{fig_id}"' if fig_id else ""
    sub_html = f'<div class="small muted">{sub}</div>' if sub else ""
    return (
        f'<div class="figure"{ident}><div class="label">{label}</div>'
        f'<div class="{" ".join(("value", cls)).strip()}">{value}</div>{sub_html}</div>'
    )


def target_text(est: Estimate) -> str:
    text = f"{num(est.target_amount)} {esc(est.target_unit)}"
    if est.target_tokens and est.target_unit != "tokens":
        text += f" ({num(est.target_tokens)} tokens)"
    return text


def _cost_figures(est: Estimate) -> list[str]:
    """Cost per completed target and per 1M tokens, as the status allows."""
    per_target, per_million = "cost-per-target", "cost-per-million-tokens"
    if est.status == "complete" or (est.projected and not est.incomplete):
        cost = est.cost_per_target_usd if est.cost_per_target_usd is not None else est.total_usd
        what = "Cost per completed target" + (" (PROJECTED)" if est.projected else "")
        first = figure(what, usd(cost), target_text(est), "", per_target)
        if est.cost_per_million_tokens_usd is not None:
            million = usd(est.cost_per_million_tokens_usd)
            return [first, figure("Cost per 1M tokens", million, "", "", per_million)]
        unknown = "tokens of the target unknown"
        return [first, figure("Cost per 1M tokens", "—", unknown, "none", per_million)]
    if est.incomplete:
        n = len(est.pending_terms)
        waits = (
            f"waits on {n} price{'s' if n != 1 else ''} with no basis yet; "
            f"known part {usd(est.total_known_usd)}"
        )
        same = "waits on the same price(s)"
        return [
            figure("Cost per completed target", "PENDING", waits, "pending", per_target),
            figure("Cost per 1M tokens", "PENDING", same, "pending", per_million),
        ]
    never = "the plan cannot finish"
    return [
        figure("Cost per completed target", "no total", never, "none", per_target),
        figure("Cost per 1M tokens", "—", "", "none", per_million),
    ]


def _range_figures(est: Estimate, rng: Range | None) -> list[str]:
    """The range beside the point: its P10–P90 and P50, each said for what it is."""
    found = range_text(rng, est)
    if found is None:
        return []
    value, sub = found
    return [figure("Range: P10–P90 (Monte Carlo)", value, sub, "range", "range-headline")]


def _split_figures(est: Estimate) -> list[str]:
    """What AWS bills, apart from the engineering time the user assumed."""
    if est.status == "infeasible":
        return []
    if est.cloud_usd is not None:
        cloud = figure("AWS bill (cloud)", usd(est.cloud_usd), _share(est), "", "cloud-usd")
    else:
        known = sum(
            (li.amount_usd for li in est.line_items if li.cost == "cloud" and li.amount_usd),
            Decimal(0),
        )
        waits = f"waits on a PENDING price; known part {usd(known)}"
        cloud = figure("AWS bill (cloud)", "PENDING", waits, "pending", "cloud-usd")
    labour = figure(
        "Assumed labour",
        usd(est.labour_usd),
        "engineering hours × your hourly cost (not billed by AWS)",
        "",
        "labour-usd",
    )
    return [cloud, labour]


def _share(est: Estimate) -> str:
    if est.cloud_usd is None or not est.total_usd:
        return "instances, storage, transfer, logs, data preparation, trials"
    return f"{float(est.cloud_usd / est.total_usd) * 100:.0f} % of the total"


def price_basis(est: Estimate) -> str:
    """A distinct badge for each price that is not official, naming it; a quiet note when
    every priced line is official."""
    lines = est.basis_lines()
    if not lines:
        if est.price_basis is None:
            return ""
        return (
            '<ul class="price-basis all-official" id="price-basis" data-basis="official">'
            "<li>every price is official: fetched by trncost from the AWS Price List</li></ul>"
        )
    items = "".join(
        f'<li class="basis-line basis-line-{esc(basis.value)}" data-basis="{esc(basis.value)}">'
        f"{esc(note)}</li>"
        for basis, note in lines
    )
    basis = est.price_basis.value if est.price_basis else ""
    return f'<ul class="price-basis" id="price-basis" data-basis="{esc(basis)}">{items}</ul>'


def _time_figures(est: Estimate) -> list[str]:
    """Time to target, and the effective throughput when there is one."""
    t = est.time
    if t is not None:
        held = f"instances held {hours(t.held_h)}"
        out = [figure("Time to target", esc(hours(t.total_h)), held, "", "time-to-target")]
    else:
        out = [figure("Time to target", "never", "", "none", "time-to-target")]
    if est.effective_throughput is not None:
        steady = (
            f"steady {num(est.steady_throughput)} {esc(est.target_unit)}/s"
            if est.steady_throughput is not None
            else ""
        )
        value = (
            f"{num(est.effective_throughput)} <span class='small'>{esc(est.target_unit)}/s</span>"
        )
        out.append(figure("Effective throughput", value, steady))
    return out


def _total(est: Estimate) -> str:
    """The total: the formula in the pending price, why it cannot finish, or the formula."""
    if est.incomplete:
        terms = "".join(
            f"<li><code>P[{esc(term.price_key)}]</code> × {term.quantity:,.2f} {esc(term.unit)}"
            f" — <span class='pending-text'>PENDING</span>: {esc(term.reason)}"
            f"<span class='inputs-of small muted'>lines: {esc('; '.join(term.lines))}</span></li>"
            for term in est.pending_terms
        )
        return (
            "<h3>Total, as a formula in the pending price</h3>"
            f'<code class="formula" id="total-formula">{esc(est.total_formula)}</code>'
            f'<ul class="pending-terms">{terms}</ul>'
        )
    if est.status == "infeasible":
        return (
            '<h3>Infeasible</h3><p class="infeasible-reason" id="infeasible-reason">'
            f"{esc(est.infeasible_reason or est.total_formula)}</p>"
        )
    return f'<p class="small muted" id="total-formula">Total: {esc(est.total_formula)}</p>'


def range_text(rng: Range | None, est: Estimate) -> tuple[str, str] | None:
    """(value, what it is) of a range's headline: the P50 and P10–P90 of the total (or of
    the known part while a price is PENDING), told apart from the point figure."""
    if rng is None:
        return None
    band = rng.total_usd or rng.known_usd
    if band is None or band.p50 is None:
        return None
    what = "total" if rng.total_usd is not None else "known part"
    value = f"{esc(usd(band.p10))} – {esc(usd(band.p90))}"
    sub = (
        f"<strong>P50 {esc(usd(band.p50))}</strong> of the {what} over {rng.samples:,} draws "
        f"(p_infeasible {rng.p_infeasible:.1%}); the point figure is the estimate at the "
        "posterior mean of every drawn input"
    )
    return value, sub


FIRST_REASONS = 3  # the reasons the headline shows; the decision section lists every one


def verdict(decision: Decision | None) -> str:
    """The candidate's decision and its first reasons, first thing in the headline."""
    if decision is None:
        return ""
    items = "".join(
        f'<li data-code="{esc(r.code)}"><span class="code">{esc(r.code)}</span>: '
        f"{esc(r.message)}</li>"
        for r in decision.reasons[:FIRST_REASONS]
    )
    more = len(decision.reasons) - FIRST_REASONS
    rest = (
        f'<p class="small"><a href="#decision">{more} more reason{"s" if more != 1 else ""}</a></p>'
        if more > 0
        else ""
    )
    return (
        f'<div class="estimate-verdict" id="verdict" data-action="{decision.action.value}">'
        f"<p><span class='muted small'>Decision for this candidate, on its own evidence:</span> "
        f"{action_badge(decision.action, ident='verdict-action')}</p>"
        f'<ul class="first-reasons">{items}</ul>{rest}</div>'
    )


def decision_section(decision: Decision | None) -> str:
    """Every reason of the decision, strongest first."""
    if decision is None:
        return ""
    rows = "".join(
        f'<li data-code="{esc(r.code)}">{action_badge(r.action, small=True)} '
        f'<span class="code">{esc(r.code)}</span>: {esc(r.message)}'
        + (
            f' <span class="small muted">({esc(", ".join(r.evidence))})</span>'
            if r.evidence
            else ""
        )
        + "</li>"
        for r in decision.reasons
    )
    none = "" if decision.reasons else f"<p>{esc(decision.summary)}</p>"
    return (
        f'<section id="decision"><h2>Decision: {action_badge(decision.action)}</h2>'
        '<p class="small muted">On this estimate\'s own evidence: a comparison of candidates '
        "(POST /workloads/{id}/comparisons) also weighs the alternatives.</p>"
        f'{none}<ul class="reasons">{rows}</ul></section>'
    )


def headline(est: Estimate, rng: Range | None = None, decision: Decision | None = None) -> str:
    cost = _cost_figures(est)
    figures = [cost[0], *_range_figures(est, rng), *cost[1:], *_split_figures(est)]
    figures += _time_figures(est)
    body = (
        verdict(decision)
        + f'<div class="figures">{"".join(figures)}</div>'
        + _projection(est)
        + price_basis(est)
        + _total(est)
    )
    if est.status != "complete":
        body += f'<p class="small">Target: {target_text(est)}</p>'
    return f'<section id="headline"><h2>Headline</h2>{body}</section>'


def _projection(est: Estimate) -> str:
    """What a projected estimate rests on (estimate/projection.py): said first, plainly."""
    if not est.projected:
        return ""
    rows = {r.id: r for r in est.inputs}
    rate = rows.get(f"throughput:n={est.candidate.instance_count}")
    ratio = rows.get("projection:ratio")
    parts = [esc(rate.label) if rate is not None else "throughput projected"]
    if ratio is not None:
        parts.append(esc(ratio.label))
    return (
        '<p class="projected" id="projection"><strong>PROJECTED, not measured:</strong> '
        f"{'; '.join(parts)}. No trial of {esc(est.candidate.instance_type)} measured its "
        "throughput: this is a planning range from another chip's trials and published "
        "per-chip ratios, never a budget; its fit trial is the next trial worth running.</p>"
    )


def warnings(est: Estimate) -> str:
    if not est.warnings:
        return (
            '<section id="warnings" class="no-warnings"><h2>Warnings</h2>'
            '<p class="muted">No warnings.</p></section>'
        )
    return (
        f'<section id="warnings" class="warnings"><h2>⚠ Warnings ({len(est.warnings)})</h2>'
        f"<ul>{warning_items(est.warnings)}</ul></section>"
    )

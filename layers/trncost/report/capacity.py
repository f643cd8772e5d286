"""Capacity you can book, as a section (services/capacity.py, estimate/capacity.py): for the
run's P50 and P90 held time, each Capacity Block and Training Plan offering with its basis and
expiry, the chance the run finishes inside it and the cost of extending or finishing on demand,
beside the on-demand instance cost."""

from __future__ import annotations

from trncost.model.capacity import BlockQuote, CapacityPlan, DurationQuotes
from trncost.report.format import esc, pct, timestamp, usd
from trncost.report.shell import notes_list

SOURCE_TEXT = {
    "ec2_capacity_block": "EC2 Capacity Block",
    "sagemaker_training_plan": "SageMaker Training Plan",
}


def _saving(q: BlockQuote) -> str:
    s = q.saving_vs_on_demand_usd
    if s is None:
        return '<span class="pending-text">on-demand PENDING</span>'
    word = "saves" if s > 0 else "costs"
    return f"{word} {esc(usd(abs(s)))}"


def _row(q: BlockQuote) -> str:
    o = q.offering
    applies = "" if q.applies else ' <span class="small muted">(other platform)</span>'
    when = f"{timestamp(o.start)} → {timestamp(o.end)}" if o.start else "—"
    parts = f" in {o.parts} parts" if o.parts > 1 else ""
    return (
        f'<tr data-source="{esc(o.source)}" data-offering="{esc(o.offering_id)}">'
        f"<td>{esc(SOURCE_TEXT[o.source])}{applies}<br><code class='small'>"
        f"{esc(o.offering_id)}</code> <span class='basis basis-{esc(o.basis.value)}'>"
        f"{esc(o.basis.value)}</span></td>"
        f"<td>{esc(o.availability_zone or '—')}<br><span class='small'>{esc(when)}{parts}"
        f"</span><br><span class='small muted'>buy before {esc(timestamp(o.expires_at))}"
        "</span></td>"
        f'<td class="num">{o.duration_hours:,.1f} h</td>'
        f'<td class="num">{esc(usd(o.upfront_fee_usd))}<br><span class="small">'
        f"{esc(usd(o.per_instance_hour_usd))}/instance-h</span></td>"
        f'<td class="num">{esc(pct(q.p_finish_inside))}</td>'
        f'<td class="num">{q.expected_overrun_h:,.1f} h<br><span class="small">extend '
        f"{esc(usd(q.expected_extension_usd))}"
        + (
            f" · on demand {esc(usd(q.expected_on_demand_finish_usd))}"
            if q.expected_on_demand_finish_usd is not None
            else ""
        )
        + "</span></td>"
        f'<td class="num">{esc(usd(q.expected_instances_usd))}<br><span class="small">'
        f"{_saving(q)}</span></td></tr>"
    )


def _duration(d: DurationQuotes, prefix: str) -> str:
    block = f"{d.block_hours:,} h" if d.block_hours is not None else "past 182 days"
    head = f"<h3>{esc(d.percentile)}: {d.held_h:,.1f} h held → blocks of {esc(block)}</h3>"
    table = ""
    if d.quotes:
        table = (
            f'<div class="table-wrap"><table id="{prefix}-capacity-{esc(d.percentile)}">'
            "<thead><tr><th>offering</th><th>where, when</th><th class='num'>duration</th>"
            "<th class='num'>fee</th><th class='num'>P(finishes inside)</th>"
            "<th class='num'>expected overrun</th><th class='num'>expected instances</th>"
            f"</tr></thead><tbody>{''.join(_row(q) for q in d.quotes)}</tbody></table></div>"
        )
    none = notes_list([f"none offered: {why}" for why in d.none_offered])
    return head + table + none


def capacity_section(plan: CapacityPlan | None, prefix: str = "estimate") -> str:
    """The section; nothing when no capacity was quoted."""
    if plan is None:
        return ""
    od = plan.on_demand
    beside = (
        f"On demand: {esc(usd(od.rate_usd))}/instance-h ({esc(od.basis.value if od.basis else '')}"
        f"), expected instances {esc(usd(od.expected_instances_usd))}"
        if od.rate_usd is not None
        else f'On demand: <span class="pending-text">PENDING</span> ({esc(od.price_key)})'
    )
    return (
        f'<section id="{prefix}-capacity" class="capacity"><h2>Capacity you can book</h2>'
        f"<p>{beside}; held time P10/P50/P90 {plan.held_h.p10 or 0:,.1f} / "
        f"{plan.held_h.p50 or 0:,.1f} / {plan.held_h.p90 or 0:,.1f} h over {plan.draws:,} "
        f"draws; asked {esc(timestamp(plan.queried_at))}.</p>"
        + "".join(_duration(d, prefix) for d in plan.durations)
        + f'<p class="small muted">{esc(plan.method)}.</p>{notes_list(plan.notes)}</section>'
    )

"""One candidate's section on the analysis page: its status, decision and headline, then its
warnings, range, tornado, scaling curve, MFU check, credits runway, notes and input table; or,
when it could not be estimated, why."""

from __future__ import annotations

from trncost.model import Estimate, Range
from trncost.model.analysis import Action, CandidateAnalysis
from trncost.model.basis import PriceBasis
from trncost.report.admission import admission_details
from trncost.report.anchors import PageAnchors
from trncost.report.checkpoint import checkpoint_block
from trncost.report.credits import runway_block
from trncost.report.decision import reason_list
from trncost.report.format import esc, hours, usd
from trncost.report.headline import range_text
from trncost.report.inputs import inputs_details
from trncost.report.mfu import mfu_block
from trncost.report.next_trial import next_trial_block
from trncost.report.ranges import range_block
from trncost.report.scaling import scaling_block
from trncost.report.shell import action_badge, notes_list, status_badge, warning_items
from trncost.report.tornado import tornado_block


def _headline(est: Estimate, rng: Range | None = None) -> str:
    if est.status == "complete" or (est.projected and not est.incomplete):
        cost = esc(usd(est.cost_per_target_usd if est.cost_per_target_usd else est.total_usd))
        if est.projected:
            cost += ' <span class="pending-text">PROJECTED</span>'
    elif est.incomplete:
        cost = (
            '<span class="pending-text">PENDING</span> '
            f'<code class="small">{esc(est.total_formula)}</code>'
        )
    else:
        cost = f'<span class="bad-text">no total</span>: {esc(est.infeasible_reason or "")}'
    time = esc(hours(est.time.total_h)) if est.time else "never"
    split = ""
    if est.status != "infeasible":
        split = (
            f" · AWS bill <strong>{esc(usd(est.cloud_usd))}</strong> + assumed labour "
            f"<strong>{esc(usd(est.labour_usd))}</strong>"
        )
    notes = "".join(
        f'<li class="basis-line basis-line-{esc(b.value)}">{esc(text)}</li>'
        for b, text in est.basis_lines()
    )
    badges = f'<ul class="price-basis">{notes}</ul>' if notes else ""
    found = range_text(rng, est)
    ranged = (
        f' <span class="cand-range">· range: <strong>{found[0]}</strong> '
        f'<span class="small muted">({found[1]})</span></span>'
        if found
        else ""
    )
    return (
        f'<p class="cand-headline">Cost per completed target (point): <strong>{cost}</strong>'
        f"{ranged}{split} · time to target: <strong>{time}</strong></p>{badges}"
    )


def _warnings(est: Estimate, prefix: str) -> str:
    if not est.warnings:
        return ""
    return (
        f'<div class="block warnings" id="{prefix}-warnings"><h3>⚠ Warnings '
        f"({len(est.warnings)})</h3><ul>{warning_items(est.warnings)}</ul></div>"
    )


def _not_estimated(c: CandidateAnalysis, prefix: str) -> list[str]:
    parts = [
        f'<p class="infeasible-reason error" id="{prefix}-error"><strong>Could not be '
        f"estimated:</strong> {esc(c.error or 'no reason given')}</p>"
        '<p class="small muted">Left out of the ranking; no range, tornado or scaling '
        "curve.</p>"
    ]
    if c.decision is not None:
        parts.append(f'<p class="small">{esc(c.decision.summary)}</p>' + reason_list(c.decision))
    parts.append(notes_list(c.notes))
    return parts


def _estimated(c: CandidateAnalysis, est: Estimate, prefix: str, page: PageAnchors) -> list[str]:
    return [
        _headline(est, c.range),
        _warnings(est, prefix),
        range_block(c, prefix, page),
        next_trial_block(c, prefix),
        checkpoint_block(c.checkpoint, prefix),
        tornado_block(c, prefix, page),
        scaling_block(c, prefix, page),
        mfu_block(c, prefix),
        runway_block(c.runway, prefix),
        notes_list([n for n in c.notes if c.scaling is not None or "scaling" not in n]),
        admission_details(est, prefix),
        inputs_details(est, prefix, lambda row_id: page.input_anchor(c.candidate_id, row_id)),
    ]


def candidate(c: CandidateAnalysis, page: PageAnchors) -> str:
    prefix = page.slug[c.candidate_id]
    est = c.estimate
    decision = f" {action_badge(c.decision.action, small=True)}" if c.decision is not None else ""
    ready = (
        c.decision is not None
        and c.decision.action == Action.ready_to_budget
        and est is not None
        and est.price_basis == PriceBasis.official
    )
    badge = status_badge(est.status if est else None, ready)
    title = f"<h2>{esc(c.candidate_id)} {badge}{decision}</h2>"
    body = _not_estimated(c, prefix) if est is None else _estimated(c, est, prefix, page)
    return "".join(
        (
            f'<section id="{prefix}" class="candidate-analysis" '
            f'data-candidate="{esc(c.candidate_id)}"'
            f' data-status="{esc(est.status) if est else "error"}">',
            title,
            *body,
            "</section>",
        )
    )

"""One candidate's MFU check on the analysis page: each trial's model FLOPs utilisation
(6 · parameters · tokens against the chips' peak), flagged when it is above what is
plausible (a measurement error is likelier than a miracle)."""

from __future__ import annotations

from trncost.model.analysis import CandidateAnalysis, MfuFinding
from trncost.report.format import esc, num, pct


def _mfu_row(f: MfuFinding) -> str:
    verdict = (
        '<span class="flag-badge">⚠ implausible</span>'
        if f.implausible
        else ('<span class="muted">—</span>' if f.mfu is None else "plausible")
    )
    precision = esc(f.precision or "—") + (
        ' <span class="small muted">(assumed)</span>' if f.precision_assumed else ""
    )
    cls = ' class="flag-row"' if f.implausible else ""
    return (
        f'<tr{cls} data-trial="{esc(f.trial_id)}" '
        f'data-implausible="{"true" if f.implausible else "false"}">'
        f'<td class="id"><code>{esc(f.trial_id)}</code></td>'
        f'<td class="num">{esc(num(f.chips))}</td><td>{precision}</td>'
        f'<td class="num">{esc(num(f.tokens_per_s))}</td>'
        f'<td class="num">{esc(pct(f.mfu)) if f.mfu is not None else "—"}</td>'
        f'<td class="num">{esc(pct(f.plausible_max, 0))}</td><td>{verdict}</td>'
        f'<td class="small">{esc(f.note)}</td></tr>'
    )


def mfu_block(c: CandidateAnalysis, prefix: str) -> str:
    """The candidate's MFU table; why there is none; nothing without an estimate."""
    if c.estimate is None:
        return ""
    head = "<h3>MFU check</h3>"
    if not c.mfu:
        return (
            f'<div class="block" id="{prefix}-mfu">{head}<p class="muted small">No MFU check: '
            "no usable trial with a known chip peak and model size.</p></div>"
        )
    n_bad = sum(f.implausible for f in c.mfu)
    flag = (
        f'<p class="flag">⚠ {n_bad} trial{"s" if n_bad != 1 else ""} above a plausible MFU: '
        "likely a measurement error (tokens counted twice, a wrong instance count, or a "
        "short burst taken as the average).</p>"
        if n_bad
        else ""
    )
    sources = sorted({f.source for f in c.mfu if f.source})
    src = (
        '<p class="small muted">Peaks: ' + "; ".join(esc(s) for s in sources) + "</p>"
        if sources
        else ""
    )
    return (
        f'<div class="block" id="{prefix}-mfu">{head}{flag}<div class="table-wrap">'
        f'<table id="{prefix}-mfu-table"><thead><tr><th>trial</th><th class="num">chips</th>'
        '<th>precision</th><th class="num">tokens/s</th><th class="num">MFU</th>'
        '<th class="num">plausible max</th><th>verdict</th><th>how</th></tr></thead>'
        f"<tbody>{''.join(_mfu_row(f) for f in c.mfu)}</tbody></table></div>{src}</div>"
    )

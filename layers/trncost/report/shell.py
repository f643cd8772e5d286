"""The page shell both reports share, and the vocabulary their sections share.

A page is one self-contained HTML5 document: inline CSS, inline SVG, no scripts, nothing
fetched (the Content-Security-Policy says so to the browser).
"""

from __future__ import annotations

from collections.abc import Sequence

from trncost.model import Component, EstimateWarning
from trncost.model.analysis import Action
from trncost.report.format import esc
from trncost.report.style import CSS

COMPONENT_LABELS: dict[Component, str] = {
    Component.instances: "instances",
    Component.storage: "storage",
    Component.data_transfer: "data transfer",
    Component.logs: "logs & metrics",
    Component.data_preparation: "data preparation",
    Component.adaptation_reruns: "adaptation & reruns",
}

STATUS_TEXT = {
    "complete": "COMPLETE",
    "incomplete": "INCOMPLETE",
    "projected": "PROJECTED",
    "infeasible": "INFEASIBLE",
}

ACTION_TEXT: dict[Action, str] = {
    Action.continue_trials: "CONTINUE TRIALS",
    Action.compare_alternatives: "COMPARE ALTERNATIVES",
    Action.pause_migration: "PAUSE MIGRATION",
    Action.ready_to_budget: "READY TO BUDGET",
}
ACTION_HELP: dict[Action, str] = {
    Action.continue_trials: "run more trials: the evidence does not support a budget yet",
    Action.compare_alternatives: "a comparable alternative does as well or better",
    Action.pause_migration: "blocked: adapt the workload or wait for what it depends on",
    Action.ready_to_budget: "verified evidence, fully priced, not beaten on the same work",
}

# The status of a candidate that could not be estimated.
ERROR_TEXT = "NOT ESTIMATED"

# The attribute that marks a table row waiting on a PENDING price.
PENDING_ROW = ' class="pending-row"'


def html_page(title: str, body_attrs: str, body: str) -> str:
    """The document around `body`; `body_attrs` is the `<body>` tag's attributes, escaped."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        '<meta name="generator" content="trncost">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f"<body {body_attrs}>{body}</body></html>\n"
    )


def meta_list(meta: Sequence[tuple[str, str]]) -> str:
    """The items of a `<dl class="meta">`: (term, HTML) pairs."""
    return "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in meta)


def warning_items(warnings: Sequence[EstimateWarning]) -> str:
    """The `<li>`s of an estimate's warnings."""
    return "".join(
        f'<li data-code="{esc(w.code)}"><span class="code">{esc(w.code)}</span>: '
        f"{esc(w.message)}</li>"
        for w in warnings
    )


def notes_list(notes: Sequence[str]) -> str:
    """Notes as a small list; nothing when there are none."""
    if not notes:
        return ""
    return '<ul class="notes small">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>"


def action_badge(action: Action | str, *, ident: str = "", small: bool = False) -> str:
    a = Action(action)
    id_attr = f' id="{esc(ident)}"' if ident else ""
    cls = "action action-small" if small else "action"
    return (
        f'<span class="{cls} action-{a.value}"{id_attr} data-action="{a.value}" '
        f'title="{esc(ACTION_HELP[a])}">{ACTION_TEXT[a]}</span>'
    )


def status_badge(status: str | None, ready: bool | None = None) -> str:
    """An estimate's status; None: the candidate could not be estimated. A complete one is a
    green light only when `ready` (ready to budget on official prices); otherwise it says it
    is not ready, in amber."""
    if status is None:
        return f'<span class="status status-error" data-status="error">{ERROR_TEXT}</span>'
    text = STATUS_TEXT.get(status, esc(status.upper()))
    cls = f"status status-{esc(status)}"
    if status == "complete" and not ready:
        cls += " status-not-ready"
        text += " · NOT READY"
    return f'<span class="{cls}" data-status="{esc(status)}">{text}</span>'

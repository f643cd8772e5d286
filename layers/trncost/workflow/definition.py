"""The trial plan state machine, defined once in `state_machine.asl.json`.

CDK passes the file as is with `DefinitionSubstitutions` (stacks/workflow.py); the tests and the
local runtime render it here. Placeholders are `${Name}` and always sit inside JSON strings, so
the file is valid JSON before and after rendering; numbers come in as strings and are turned
into numbers by `States.StringToJson` in the first state.

| placeholder            | what                                                    |
|------------------------|---------------------------------------------------------|
| TrialStepsFunctionArn  | the task Lambda (lambdas/trial_steps), every Task state |
| PollIntervalSeconds    | seconds between two "has the trial record landed?" polls |
| MaxPolls               | polls before a run counts as lost (timeout)             |
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from trncost.errors import DefinitionError

ASL_PATH = Path(__file__).with_name("state_machine.asl.json")
PLACEHOLDER = re.compile(r"\$\{([A-Za-z][A-Za-z0-9_]*)\}")
FUNCTION_ARN = "TrialStepsFunctionArn"
POLL_INTERVAL = "PollIntervalSeconds"
MAX_POLLS = "MaxPolls"
DEFAULT_POLL_INTERVAL_S = 300
DEFAULT_MAX_POLLS = 600  # with 5 minute polls: 50 hours (a run's max time is checked too)


@cache
def raw_definition() -> str:
    return ASL_PATH.read_text()


def placeholders(text: str | None = None) -> set[str]:
    return set(PLACEHOLDER.findall(raw_definition() if text is None else text))


def render(substitutions: Mapping[str, Any], text: str | None = None) -> str:
    """The definition with every `${Name}` replaced; every placeholder must be given, and
    nothing else. Values are inserted as text (inside JSON strings), as CloudFormation does."""
    source = raw_definition() if text is None else text
    wanted = placeholders(source)
    missing = wanted - set(substitutions)
    unknown = set(substitutions) - wanted
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"missing substitutions {sorted(missing)}")
        if unknown:
            parts.append(f"unknown substitutions {sorted(unknown)}")
        raise DefinitionError("; ".join(parts))
    for name, value in substitutions.items():
        text_value = str(value)
        if any(c in text_value for c in '"\\\n'):
            raise DefinitionError(f"{name}: value {text_value!r} would break the JSON string")
    rendered = PLACEHOLDER.sub(lambda m: str(substitutions[m.group(1)]), source)
    try:
        json.loads(rendered)
    except json.JSONDecodeError as exc:  # pragma: no cover - guarded above
        raise DefinitionError(f"rendered definition is not JSON: {exc}") from None
    return rendered


# What one run can take in the state machine, besides its record wait: its task states (budget
# check, launch, record checks are counted in the wait, gate, stop), each with a 120 s task
# timeout and up to 3 tries; and what a whole plan adds (configure, start, finish or record).
RUN_TASKS_S = 4 * 3 * 120
PLAN_TASKS_S = 3 * 3 * 120
MAX_EXECUTION_S = 365 * 24 * 3600  # a Standard workflow's longest execution (one year)


def plan_timeout_s(max_runs: int, poll_interval_s: int, max_polls: int) -> int:
    """The state machine's overall timeout (TimeoutSeconds), from the plan's caps: every run
    waits at most `max_polls` polls of `poll_interval_s` for its record (then it is stopped as
    lost), plus its task states; a plan has at most `max_runs` runs (the stage's
    trial_plans.max_runs). An execution still going after that is stopped by Step Functions
    (TimedOut: an alarm, stacks/monitoring)."""
    per_run = max_polls * (poll_interval_s + 3 * 120) + RUN_TASKS_S
    return min(max_runs * per_run + PLAN_TASKS_S, MAX_EXECUTION_S)


def with_timeout(text: str, timeout_s: int) -> str:
    """The definition `text` with its overall TimeoutSeconds (a number: it cannot be a
    placeholder, which sits inside a JSON string). Placeholders are kept."""
    parsed = json.loads(text)
    parsed["TimeoutSeconds"] = int(timeout_s)
    return json.dumps(parsed, indent=2, ensure_ascii=False)


def definition(substitutions: Mapping[str, Any]) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(render(substitutions))
    return parsed


def substitutions(
    function_arn: str,
    poll_interval_s: int = DEFAULT_POLL_INTERVAL_S,
    max_polls: int = DEFAULT_MAX_POLLS,
) -> dict[str, str]:
    if poll_interval_s < 0 or max_polls < 1:
        raise DefinitionError("poll interval must be ≥ 0 s and max polls ≥ 1")
    return {
        FUNCTION_ARN: function_arn,
        POLL_INTERVAL: str(int(poll_interval_s)),
        MAX_POLLS: str(int(max_polls)),
    }

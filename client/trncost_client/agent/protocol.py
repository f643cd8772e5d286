"""The line protocol a training script prints for the trial agent
(`python -m trncost_client.agent`).

One event per line, on stdout or stderr, anywhere in the output:

    TRNCOST {"event": "<name>", ...fields}

- `step` (tokens?, samples?, loss?, seconds?, data_wait?): one optimizer step done
- `compile` (seconds, cache_hit?): one graph compile
- `warmup_done` (seconds?): step time is steady from now on
- `data_wait` (seconds): the loop waited for input data
- `checkpoint_save` (seconds, bytes?): training was blocked by a save
- `checkpoint_restore` (seconds, ok): a checkpoint was loaded; ok = state and loss verified
- `eval` (metric, value, seconds?): an evaluation result, metric named as the quality gate
- `error` (message, unsupported_op?): a caught, non-fatal error
- `restart` (seconds): a failure and the time until training ran again

`seconds` of a step is its wall time; without it the agent times the gap since the previous
step. Any other line passes through untouched; a malformed TRNCOST line is reported on stderr
and counted as an agent error, never fatal. Numbers may be ints or floats; `loss` may be
"nan"/"inf" (or a JSON NaN), which counts as a non-finite loss.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from trncost.errors import ProtocolError

PREFIX = "TRNCOST "
EVENTS = {
    "step": {"tokens", "samples", "loss", "seconds", "data_wait"},
    "compile": {"seconds", "cache_hit"},
    "warmup_done": {"seconds"},
    "data_wait": {"seconds"},
    "checkpoint_save": {"seconds", "bytes"},
    "checkpoint_restore": {"seconds", "ok"},
    "eval": {"metric", "value", "seconds"},
    "error": {"message", "unsupported_op"},
    "restart": {"seconds"},
}
REQUIRED = {
    "compile": {"seconds"},
    "data_wait": {"seconds"},
    "checkpoint_save": {"seconds"},
    "checkpoint_restore": {"seconds", "ok"},
    "eval": {"metric", "value"},
    "error": {"message"},
    "restart": {"seconds"},
}


@dataclass(frozen=True)
class Event:
    name: str
    fields: dict[str, Any]

    def number(self, key: str) -> float | None:
        value = self.fields.get(key)
        if value is None:
            return None
        if isinstance(value, bool):
            raise ProtocolError(f"{self.name}.{key}: a number, not {value!r}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ProtocolError(f"{self.name}.{key}: a number, not {value!r}") from None
        if key != "loss" and (not math.isfinite(number) or number < 0):
            raise ProtocolError(f"{self.name}.{key}: a finite number ≥ 0, not {value!r}")
        return number


def parse_line(line: str) -> Event | None:
    """The event on a line, None for an ordinary line; ProtocolError for a bad TRNCOST line."""
    text = line.strip()
    if not text.startswith(PREFIX.strip()):
        return None
    body = text[len(PREFIX.strip()) :].strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"not JSON after TRNCOST: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ProtocolError("TRNCOST needs a JSON object")
    name = data.pop("event", None)
    if name not in EVENTS:
        raise ProtocolError(f"unknown event {name!r}; one of {', '.join(sorted(EVENTS))}")
    unknown = set(data) - EVENTS[name]
    if unknown:
        raise ProtocolError(f"{name}: unknown fields {sorted(unknown)}")
    missing = REQUIRED.get(name, set()) - set(data)
    if missing:
        raise ProtocolError(f"{name}: missing fields {sorted(missing)}")
    event = Event(name, data)
    for key in EVENTS[name] - {"metric", "message", "unsupported_op", "ok", "cache_hit"}:
        event.number(key)  # validate now
    if name == "eval" and not isinstance(data["metric"], str):
        raise ProtocolError("eval.metric: the metric's name, a string")
    return event


def line(event: str, **fields: Any) -> str:
    """A protocol line, for training scripts that import trncost (and for tests)."""
    return PREFIX + json.dumps({"event": event, **fields}, allow_nan=True)

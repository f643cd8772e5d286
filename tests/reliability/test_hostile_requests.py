"""The hostile requests of issue 23's adversarial run, each sent to the real API handler on moto:
every one is a 4xx naming what is wrong (never a 5xx), and none takes more than a moment.

- JSON that made the old depth check quadratic (65 brackets, then an unclosed string of
  escaped quotes) at 32 KB, 80 KB and just under the 1 MiB limit; duplicate keys;
- free text past its bound (a 500 KB trial note, a 450 KB assumption note, notes that together
  exceed DynamoDB's item limit);
- ids: a lone surrogate or '' as a snapshot_id, '/' or a control character in an id;
- trial figures: NaN, ±Infinity, negative, 1e308, booleans and text for numbers, text and
  numbers for booleans;
- names with terminal escape sequences; a malformed Idempotency-Key.

The figures (sent → 4xx / 5xx / hangs, and the depth check's time per size) are printed at the
end of the session.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator

import pytest

from tests.support.events import saved_price_list
from tests.support.factories import trial, workload
from tests.support.handlers import FakeContext, api_event, lambda_env, load_handler
from tests.support.reliability_kit import figure
from trncost.settings import ACCEPT_UPLOADS_ENV, LIVE_PRICES_ENV

pytestmark = pytest.mark.slow

SECTION = "hostile requests (issue 23)"
HANG_S = 2.0  # a request slower than this counts as a hang
WL = "wl-hostile"
COUNTS: Counter[str] = Counter()
CANDIDATE = {"instance_type": "trn2.48xlarge", "instance_count": 2, "region": "us-east-1"}


@pytest.fixture
def api(table, monkeypatch) -> Iterator:
    lambda_env(monkeypatch, table, **{LIVE_PRICES_ENV: "false", ACCEPT_UPLOADS_ENV: "true"})
    module = load_handler("api")

    def call(method, path, body=None, *, raw=None, headers=None, query=None):
        event = api_event(method, path, body, raw_body=raw, headers=headers, query=query)
        start = time.perf_counter()
        response = module.handler(event, FakeContext())
        took = time.perf_counter() - start
        status = response["statusCode"]
        payload = json.loads(response["body"]) if response["body"] else None
        return status, payload, took

    wl = workload(workload_id=WL, dataset_gb=100).model_dump(mode="json")
    assert call("POST", "/workloads", wl)[0] == 201
    t = trial("t-1", count=2, phase="target", workload_id=WL).model_dump(mode="json")
    assert call("POST", f"/workloads/{WL}/trials", t)[0] == 201
    body = {"saved_price_list": saved_price_list(), "note": "t", "publish": True}
    assert call("POST", "/prices/snapshots", body)[0] == 201
    yield call


def hostile(call, method, path, body=None, *, raw=None, expect, field=None, headers=None):
    """Send one hostile request: a 4xx (`expect`) naming `field`, quickly."""
    status, payload, took = call(method, path, body, raw=raw, headers=headers)
    COUNTS["sent"] += 1
    COUNTS["4xx" if 400 <= status < 500 else "5xx" if status >= 500 else "2xx"] += 1
    COUNTS["hangs"] += took > HANG_S
    assert status == expect, (path, status, payload)
    assert took < HANG_S, f"{path}: {took:.2f} s"
    if field is not None:
        assert any(field in f for f in payload["fields"]) or field in payload["message"], payload
    return payload, took


def _escapes(size: int) -> str:
    return "[" * 65 + '"' + '\\"' * ((size - 66) // 2)


def test_json_that_pinned_the_depth_check_is_a_quick_400(api):
    times = {}
    for label, size in (("32 KB", 32_000), ("80 KB", 80_000), ("1 MiB", 1024 * 1024 - 64)):
        _, took = hostile(api, "POST", "/workloads", raw=_escapes(size), expect=400)
        times[label] = f"{took * 1000:.0f} ms (whole request)"
    figure(SECTION, "depth check, 65 brackets + unclosed escaped quotes", times)
    payload, _ = hostile(
        api, "POST", "/workloads", raw='{"workload_id": "a", "workload_id": "b"}', expect=400
    )
    assert "duplicate key 'workload_id'" in payload["message"]


def _trial(**over):
    data = trial("t-h", count=2, phase="target", workload_id=WL).model_dump(mode="json")
    for dotted, value in over.items():
        node = data
        *parents, last = dotted.split(".")
        for p in parents:
            node = node[p]
        node[last] = value
    return data


FIGURES = {
    "work.done": [float("nan"), float("inf"), -1.0, 1e308, True, "1e3"],
    "wall.steady_s": [float("-inf"), -5.0, 1e308, True, "3600"],
    "candidate.instance_count": [0, -1, True, "2", 2.5, 1e308],
    "reliability.failures": [-1, 1.5, True, "3", 1e308],
    "steady_throughput_samples": [[True], ["5"], [float("nan")], [1e308], [-1.0]],
    "utilization.neuroncore": [1.5, -0.1, True, "0.5"],
    "checkpointing.restore_verified": ["yes", 1],
    "wall.compile_cache_hit": ["false", 0],
    "billed_instance_seconds": [True, "10", float("inf")],
}


@pytest.mark.parametrize("dotted", sorted(FIGURES))
def test_hostile_trial_figures_are_a_422_naming_the_field(api, dotted):
    for value in FIGURES[dotted]:
        raw = json.dumps(_trial(**{dotted: value}), allow_nan=True)
        hostile(api, "POST", f"/workloads/{WL}/trials", raw=raw, expect=422,
                field=dotted.split(".")[-1])  # fmt: skip
    assert api("GET", f"/workloads/{WL}/trials/t-h")[0] == 404  # none was stored


def test_free_text_past_its_bound_is_refused_naming_the_field(api):
    hostile(api, "POST", f"/workloads/{WL}/trials", _trial(notes=["n" * 500_000]),
            expect=422, field="notes")  # fmt: skip
    hostile(api, "POST", f"/workloads/{WL}/trials", _trial(notes=["n" * 5_000]),
            expect=422, field="notes")  # fmt: skip
    hostile(api, "POST", f"/workloads/{WL}/trials", _trial(notes=["n" * 3_999] * 100),
            expect=413, field="notes")  # fmt: skip
    note = {"value": 0.1, "note": "x" * 450_000}
    body = {"candidate": CANDIDATE, "assumptions": {"idle_fraction": note}}
    hostile(api, "POST", f"/workloads/{WL}/estimates", body, expect=422, field="note")


def test_ids_take_one_pattern_everywhere(api):
    raw = json.dumps({"candidates": [{"candidate": CANDIDATE}], "snapshot_id": "\\ud800"})
    hostile(api, "POST", f"/workloads/{WL}/comparisons", raw=raw.replace("\\\\", "\\"),
            expect=422, field="snapshot_id")  # fmt: skip
    pinned_to_nothing = {"candidate": CANDIDATE, "snapshot_id": ""}
    hostile(api, "POST", f"/workloads/{WL}/estimates", pinned_to_nothing, expect=422,
            field="snapshot_id")  # fmt: skip
    for bad in ("a/b", "a\x1b[31m", "a b", "-a", "x" * 129):
        wl = workload(workload_id="ok").model_dump(mode="json") | {"workload_id": bad}
        hostile(api, "POST", "/workloads", wl, expect=422, field="workload_id")


def test_names_with_terminal_escapes_are_refused(api):
    for name in ("\x1b]0;pwned\x07", "ok\x1b[2J", "bidi\u202egnp.exe", "nul\x00"):
        wl = workload(workload_id="wl-name").model_dump(mode="json") | {"name": name}
        hostile(api, "POST", "/workloads", wl, expect=422, field="name")


def test_a_malformed_idempotency_key_is_a_400(api):
    wl = workload(workload_id="wl-key").model_dump(mode="json")
    for key in ("", "a/b", "x" * 200, "k\x1b"):
        hostile(api, "POST", "/workloads", wl, headers={"Idempotency-Key": key}, expect=400,
                field="Idempotency-Key")  # fmt: skip


def test_zz_figures():
    figure(
        SECTION,
        "sent → 4xx / 5xx / hangs",
        f"{COUNTS['sent']} → {COUNTS['4xx']} / {COUNTS['5xx']} / {COUNTS['hangs']}",
    )
    assert COUNTS["5xx"] == 0 and COUNTS["hangs"] == 0

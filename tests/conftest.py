"""Shared pytest setup for all test folders (keep it small): the fixtures in tests/support,
Hypothesis's profiles, how the suite splits over workers, and the reliability figures.

Properties run the same examples on every machine by default ("repeatable": derandomized, no
example database), so CI and a laptop agree on what passed. `HYPOTHESIS_PROFILE=explore`
searches at random (a test's own max_examples still holds where it sets one) for new
counterexamples; one it finds is pinned with `@example` and its bound or its cause fixed.

`make test` runs on every core (pytest-xdist): each test file stays whole on one worker (its
module fixtures are set up once, its figures add up), every test of the synthesized stage shares
one worker (one `cdk synth` a session) and so does the e2e tier (one `trncost serve`); the groups
start in the order they are collected (`--no-loadscope-reorder`), the long e2e and infra first.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import settings

from tests.support.reliability_kit import FIGURES

pytest_plugins = ["tests.support.fixtures"]

settings.register_profile("repeatable", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

FIGURES_KEY = "trncost_reliability_figures"


# Test files outside tests/infra that read the synthesized stage (tests/unit/test_suite_groups.py
# checks that none is missing)
SYNTHESIZED_ELSEWHERE = frozenset({"tests/reliability/test_cdk_nag.py"})


def worker_group(nodeid: str) -> str:
    """Which tests run together on one worker: the synthesized stage's, the e2e tier's, else a
    file's own."""
    path = nodeid.split("::", 1)[0]
    if path.startswith("tests/infra/") or path in SYNTHESIZED_ELSEWHERE:
        return "synthesized-stage"
    if path.startswith("tests/e2e/"):
        return "e2e"
    return path


# Test files run in one process, never on an xdist worker: schemathesis there makes one item of
# all the API's operations and runs a fraction of their cases (39 requests instead of 7,034).
# `make test` runs them after the rest (TRNCOST_TESTS=serial); tests/unit/test_suite_groups.py
# checks that every schemathesis test is listed.
SERIAL = frozenset({"tests/integration/test_api_fuzz.py", "tests/reliability/test_api_requests.py"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, everything but SERIAL; with TRNCOST_TESTS=serial, SERIAL alone; in
    one plain process, everything."""
    serial_only = os.environ.get("TRNCOST_TESTS") == "serial"
    if not (serial_only or hasattr(config, "workerinput")):
        return
    keep = [i for i in items if (i.nodeid.split("::", 1)[0] in SERIAL) == serial_only]
    if len(keep) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's scope scheduling, its scopes the groups above (the xdist_group mark cannot
    say this: pytest 9 no longer reads the node id that xdist 3.8 rewrites for it)."""
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

    return ByGroup(config, log)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A worker hands its reliability figures to the controller, which prints them."""
    output: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    if output is not None:
        output[FIGURES_KEY] = {
            section: {name: str(value) for name, value in figures.items()}
            for section, figures in FIGURES.items()
        }


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    for section, figures in getattr(node, "workeroutput", {}).get(FIGURES_KEY, {}).items():
        FIGURES.setdefault(section, {}).update(figures)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not FIGURES:
        return
    tr = terminalreporter
    tr.section("reliability figures")
    width = max(len(name) for section in FIGURES.values() for name in section)
    for section, figures in FIGURES.items():
        tr.write_line(section)
        for name, value in figures.items():
            tr.write_line(f"  {name:<{width}}  {value}")

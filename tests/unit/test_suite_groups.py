"""The suite's worker groups (tests/conftest.py) keep together what shares a session fixture: every
test file that reads the synthesized stage runs on the worker that synthesized it."""

from __future__ import annotations

import re

from tests.conftest import SERIAL, worker_group
from tests.support.examples import ROOT

USES_STAGE = re.compile(r"\bsynthesized\b|pytest\.mark\.infra\b")


def test_every_file_that_reads_the_synthesized_stage_is_in_its_group():
    files = sorted((ROOT / "tests").rglob("test_*.py"))
    readers = [
        f.relative_to(ROOT).as_posix()
        for f in files
        if f.name != "test_suite_groups.py" and USES_STAGE.search(f.read_text(encoding="utf-8"))
    ]
    assert "tests/reliability/test_cdk_nag.py" in readers  # the check sees what it checks
    assert {r: worker_group(f"{r}::t") for r in readers} == {
        r: "synthesized-stage" for r in readers
    }


def test_each_other_file_is_its_own_group_and_e2e_is_one():
    assert worker_group("tests/unit/test_engine.py::test_x[1]") == "tests/unit/test_engine.py"
    assert worker_group("tests/e2e/test_local_runtime.py::t") == "e2e"
    assert worker_group("tests/e2e/test_report_layout.py::t") == "e2e"


def test_every_schemathesis_test_runs_in_one_process():
    files = sorted((ROOT / "tests").rglob("test_*.py"))
    users = {
        f.relative_to(ROOT).as_posix()
        for f in files
        if f.name != "test_suite_groups.py" and "schemathesis" in f.read_text(encoding="utf-8")
    }
    assert users <= SERIAL and users

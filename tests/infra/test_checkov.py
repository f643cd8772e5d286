"""checkov over the synthesized templates of the app as deployed (every stage of cdk.json):
every finding is acknowledged with its reason in stacks/checkov.py, and every acknowledgement
still matches a finding (a fixed finding takes its acknowledgement with it)."""

from __future__ import annotations

import pytest

from stacks.checkov import ACKNOWLEDGEMENTS, CHECKOV, acknowledgement_for, run

pytestmark = pytest.mark.infra


@pytest.fixture(scope="module")
def findings(synthesized):
    synthesized.require()
    if not CHECKOV.is_file():
        pytest.fail(f"{CHECKOV} is missing: `make test` makes it (requirements-checkov.txt)")
    return run(synthesized.outdir)


def test_checkov_read_every_stack(findings, synthesized) -> None:
    # checkov found the app's templates (a run over nothing would report nothing)
    assert synthesized.templates
    assert findings, "checkov reported nothing: did it read the templates?"


def test_every_checkov_finding_is_acknowledged_with_a_reason(findings) -> None:
    open_findings = [str(f) for f in findings if acknowledgement_for(f) is None]
    assert open_findings == []
    assert all(reason.strip() for _, _, reason in ACKNOWLEDGEMENTS)


def test_every_acknowledgement_still_matches_a_finding(findings) -> None:
    used = {acknowledgement_for(f) for f in findings}
    assert [a[:2] for a in ACKNOWLEDGEMENTS if a not in used] == []


@pytest.mark.parametrize("check_id", ["CKV_AWS_115", "CKV_AWS_158"])
def test_concurrency_and_log_encryption_pass_without_acknowledgement(findings, check_id) -> None:
    # reserved concurrency on every function, the stage's KMS key on every log group
    assert [str(f) for f in findings if f.check_id == check_id] == []
    assert check_id not in {a[0] for a in ACKNOWLEDGEMENTS}

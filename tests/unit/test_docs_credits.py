"""The credits examples of docs/estimates.md run: each `credits` block under a
`<!-- credits-example: … -->` marker is sent with the example's candidates through the
comparison service the API uses, and every figure of the table after it is what comes back."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.examples import EXAMPLE, ROOT
from trncost.model.analysis import Credits
from trncost.model.requests import ComparisonRequest
from trncost_client.requestfile import load_request_file, offline_comparisons

DOC = ROOT / "docs" / "estimates.md"
EXAMPLE_BLOCK = re.compile(
    r"<!-- credits-example: (?P<name>[^>]+?) -->\s*```json\n(?P<json>.*?)```\s*"
    r"(?P<table>(?:\|[^\n]*\|\n)+)",
    re.S,
)


def _examples() -> list[tuple[str, dict, list[list[str]]]]:
    found = []
    for m in EXAMPLE_BLOCK.finditer(DOC.read_text(encoding="utf-8")):
        rows = [
            [cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in m["table"].strip().splitlines()[2:]  # the header and its rule
        ]
        found.append((m["name"], json.loads(m["json"]), rows))
    return found


def test_the_doc_has_its_examples():
    assert {name for name, _, _ in _examples()} == {"paced", "back to back"}


@pytest.mark.parametrize("name,credits,rows", _examples(), ids=lambda x: str(x)[:20])
def test_each_credits_example_answers_what_the_doc_says(name, credits, rows):
    request = load_request_file(EXAMPLE)
    ask = ComparisonRequest(
        candidates=request.candidates,
        assumptions=request.assumptions,
        samples=1000,
        credits=Credits.model_validate(credits),
    )
    _, analysis = offline_comparisons(request).analyse(request.workload.workload_id, ask)
    runways = {c.candidate_id: c.runway for c in analysis.candidates}
    for candidate, before, fit, on_credits, limited_by in rows:
        r = runways[candidate]
        assert r is not None and r.as_of == credits["as_of"], name
        got = (r.targets_before_expiry, r.targets_fit, r.targets_on_credits, r.limited_by)
        assert got == (int(before), int(fit), int(on_credits), limited_by), (name, candidate)

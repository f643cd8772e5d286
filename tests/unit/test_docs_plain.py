"""The user docs speak to users: no issue numbers (what changed when is CHANGELOG.md's, how the
code is laid out is docs/architecture.md's)."""

from __future__ import annotations

import re

import pytest

from tests.support.examples import ROOT

USER_DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
INTERNAL = re.compile(r"\bissues? #?\d+\b|\(#\d+\)", re.I)


@pytest.mark.parametrize("page", [p for p in USER_DOCS if p.name != "architecture.md"],
                         ids=lambda p: p.name)  # fmt: skip
def test_a_user_doc_names_no_issue(page):
    found = [
        f"{page.name}:{n}: {line.strip()}"
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1)
        if INTERNAL.search(line)
    ]
    assert found == []

"""The report package's shape (issue 11): one module per section, sharing helpers only through
public names, each small enough to read in one sitting."""

from __future__ import annotations

import ast
from pathlib import Path

import trncost.report

PACKAGE = Path(trncost.report.__file__).parent
MODULES = sorted(PACKAGE.glob("*.py"))


def test_no_module_imports_a_private_name_from_another():
    private = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("trncost"):
                private += [
                    f"{path.name}: {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_")
                ]
    assert private == []


def test_every_module_is_under_600_lines():
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in MODULES}
    assert len(sizes) > 10
    assert {name: n for name, n in sizes.items() if n > 600} == {}

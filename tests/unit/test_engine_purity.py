"""House rule: the engine is pure. No boto3, no clock, no I/O in trncost.estimate."""

from __future__ import annotations

import ast
from pathlib import Path

import trncost.estimate

ENGINE = Path(trncost.estimate.__file__).parent
FORBIDDEN_MODULES = {
    "boto3",
    "botocore",
    "os",
    "pathlib",
    "time",
    "datetime",
    "random",
    "socket",
    "subprocess",
    "urllib",
    "requests",
    "io",
    "shutil",
    "tempfile",
}
FORBIDDEN_CALLS = {"open", "print", "input", "exec", "eval"}


def test_engine_modules_import_nothing_impure_and_call_no_io():
    files = sorted(ENGINE.glob("*.py"))
    assert len(files) >= 6
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                names = {(node.module or "").split(".")[0]}
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in FORBIDDEN_CALLS, f"{path.name}:{node.lineno}"
                continue
            else:
                continue
            assert not names & FORBIDDEN_MODULES, f"{path.name}:{node.lineno} imports {names}"

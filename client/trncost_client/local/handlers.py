"""Load a Lambda handler module (lambdas/<name>/handler.py) the way the runtime does: from its
file, under a unique module name."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import trncost

LAMBDAS = Path(trncost.__file__).resolve().parent.parent.parent / "lambdas"


def load_handler(name: str) -> ModuleType:
    module_name = f"trncost_lambda_{name}"
    sys.modules.pop(module_name, None)
    spec = importlib.util.spec_from_file_location(module_name, LAMBDAS / name / "handler.py")
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"no handler at {LAMBDAS / name / 'handler.py'}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module

"""House rules of the layers: handler → service (one use case) → pure engine and adapters.

- the API (trncost.api) is routes over services: it imports services, schemas, errors, the
  wiring and the domain models, never a store, the engine, an AWS adapter or boto3;
- a Lambda handler calls public methods of its services only;
- every environment variable is read in trncost.settings (the CLI's flags and the environment
  it gives child processes aside; the local runtime sets, never reads, its handlers').
"""

from __future__ import annotations

import ast
from pathlib import Path

import trncost
import trncost_client

PACKAGE = Path(trncost.__file__).parent
CLIENT = Path(trncost_client.__file__).parent
LAMBDAS = PACKAGE.parent.parent / "lambdas"
API_FORBIDDEN = (
    "trncost.store",
    "trncost.estimate",
    "trncost.pricing",
    "trncost.metrics",
    "trncost.launch",
    "trncost.bus",
    "boto3",
    "botocore",
)


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def _is_under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_the_api_imports_services_never_stores_the_engine_or_boto3() -> None:
    files = sorted((PACKAGE / "api").glob("*.py"))
    assert len(files) >= 6
    for path in files:
        for line, module in _imports(path):
            bad = [p for p in API_FORBIDDEN if _is_under(module, p)]
            assert not bad, f"api/{path.name}:{line} imports {module}"


def test_handlers_call_no_private_member() -> None:
    handlers = sorted(LAMBDAS.glob("*/handler.py"))
    assert len(handlers) == 7
    for path in handlers:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
                dunder = node.attr.startswith("__") and node.attr.endswith("__")
                assert dunder, f"{path.parent.name}/handler.py:{node.lineno} uses .{node.attr}"
        for line, module in _imports(path):
            assert not _is_under(module, "trncost.store"), f"{path}:{line} imports {module}"


def _environ_uses(path: Path) -> list[tuple[int, str]]:
    """(line, what) for every os.environ / os.getenv / os.putenv in a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    uses = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and node.attr in ("environ", "getenv", "putenv", "environb")
        ):
            parent = parents.get(node)
            method = parent.attr if isinstance(parent, ast.Attribute) else ""
            uses.append((node.lineno, f"os.{node.attr}" + (f".{method}" if method else "")))
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            names = {a.name for a in node.names} & {"environ", "getenv", "putenv"}
            uses += [(node.lineno, f"from os import {n}") for n in sorted(names)]
    return uses


# Who else may touch the environment, and how.
ENVIRONMENT_EXCEPTIONS = {
    "trncost/settings.py": None,  # reads every variable: the point of it
    "trncost_client/local/runtime.py": {"os.environ.update"},  # the in-process handlers' env
    "trncost_client/cli/runtime.py": {"os.environ.get"},  # the --url flag's default
    "trncost_client/cli/trial.py": {"os.environ"},  # the environment of the command it starts
    "trncost/launch/local.py": {"os.environ.copy"},  # the environment of the local run it starts
}


def test_only_settings_reads_the_environment() -> None:
    for path in sorted([*PACKAGE.rglob("*.py"), *CLIENT.rglob("*.py")]):
        rel = path.relative_to(PACKAGE.parent if path.is_relative_to(PACKAGE) else CLIENT.parent)
        rel = rel.as_posix()
        uses = _environ_uses(path)
        if rel in ENVIRONMENT_EXCEPTIONS:
            allowed = ENVIRONMENT_EXCEPTIONS[rel]
            uses = [u for u in uses if allowed is not None and u[1] not in allowed]
        assert not uses, f"{rel} touches the environment: {uses}"


def test_the_layer_never_imports_the_client_side() -> None:
    # the layer ships layers/trncost whole: nothing in it may reach trncost_client, even lazily
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 100
    for path in files:
        for line, module in _imports(path):
            assert not _is_under(module, "trncost_client"), f"{path}:{line} imports {module}"


def _defined_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_services_and_stores_export_only_what_they_define() -> None:
    # the domain's types live in trncost.model: a service or a store never re-exports another
    # module's names (a record type a caller needs is imported from the model)
    files = sorted([*(PACKAGE / "services").glob("*.py"), *(PACKAGE / "store").glob("*.py")])
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        exported: list[str] = []
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                exported = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
        foreign = sorted(set(exported) - _defined_names(tree))
        assert foreign == [], f"{path.relative_to(PACKAGE)} re-exports {foreign}"


def test_stores_define_no_domain_model() -> None:
    # a store maps the model's types to and from DynamoDB items; it declares none of its own
    for path in sorted((PACKAGE / "store").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        models = [
            node.name
            for node in tree.body
            if isinstance(node, ast.ClassDef)
            and any(getattr(b, "id", "") in ("DomainModel", "BaseModel") for b in node.bases)
        ]
        assert models == [], f"store/{path.name} defines {models}: they belong in trncost.model"


MAX_MODULE_LINES = 600  # a module a newcomer can hold in their head (issue 11)


def test_no_module_under_layers_client_or_stacks_is_over_600_lines() -> None:
    root_dir = PACKAGE.parent.parent
    stacks = root_dir / "stacks"
    assert (stacks / "api.py").is_file()
    too_big = {
        str(p.relative_to(root_dir)): n
        for root in (PACKAGE, CLIENT, stacks)
        for p in sorted(root.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert too_big == {}

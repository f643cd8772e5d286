"""What the trncost layer holds, and the layer bundled for real, as `cdk synth` does it: pip
for arm64, no Docker.

The bundling test needs PyPI (or pip's cache); the rest of tests/infra skips bundling (see
CLI_CONTEXT in tests/support/cdk.py). The content tests need neither: they copy the package as
the bundler does, then follow the handlers' imports through it.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import aws_cdk as cdk
import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from stacks.lambda_factory import (
    LAMBDAS_DIR,
    LAYER_REQUIREMENTS,
    LAYERS_DIR,
    PACKAGE,
    RUNTIME,
    RUNTIME_ONLY_MODULES,
    RUNTIME_PROVIDED_PACKAGES,
    TrncostLayer,
    copy_package,
    python_version,
)

pytestmark = pytest.mark.infra

ELF_MACHINE_AARCH64 = 183  # e_machine of an ELF for ARM 64-bit
LAMBDA_UNZIPPED_MAX = 262_144_000  # a function and its layers, unzipped (Lambda quotas: 250 MB)
HANDLERS_HEADROOM = 10_000_000  # the largest handler folder is a few kilobytes


def _elf_machine(path: Path) -> int:
    header = path.read_bytes()[:20]
    assert header[:4] == b"\x7fELF", f"{path} is not an ELF shared object"
    return int.from_bytes(header[18:20], "little")


def _lambda_marker_environment() -> dict[str, str]:
    version = python_version()
    return {
        **default_environment(),
        "python_version": version,
        "python_full_version": f"{version}.0",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "aarch64",
        "os_name": "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }


def _missing_dependencies(site: Path) -> dict[str, list[str]]:
    """Dependencies of the installed distributions that are neither installed nor provided by
    the Lambda runtime (the layer is installed with --no-deps)."""
    installed = {
        canonicalize_name(d.name.split("-")[0]) for d in site.glob("*.dist-info") if d.is_dir()
    }
    provided = installed | {canonicalize_name(n) for n in RUNTIME_PROVIDED_PACKAGES}
    environment = _lambda_marker_environment()
    missing: dict[str, list[str]] = {}
    for dist in site.glob("*.dist-info"):
        for line in (dist / "METADATA").read_text(encoding="utf-8").splitlines():
            if not line.startswith("Requires-Dist:"):
                continue
            requirement = Requirement(line.removeprefix("Requires-Dist:").strip())
            if requirement.marker is not None and not requirement.marker.evaluate(environment):
                continue
            if canonicalize_name(requirement.name) not in provided:
                missing.setdefault(dist.name, []).append(str(requirement))
    return missing


def test_layer_is_bundled_locally_for_arm64(tmp_path: Path, cli_context, synthesized) -> None:
    # Given a stack with the trncost layer, and bundling on (as `cdk synth` runs it)
    outdir = tmp_path / "cdk.out"
    app = cdk.App(outdir=str(outdir), context={**cli_context, "aws:cdk:bundling-stacks": ["**"]})
    stack = cdk.Stack(app, "LayerOnly", env=cdk.Environment(region="us-east-1"))
    TrncostLayer.of(stack)
    # When it is synthesized
    template = app.synth().get_stack_by_name("LayerOnly").template
    # Then the asset holds the package (less what only the CLI and local runs use) ...
    (layer,) = (
        r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::LayerVersion"
    )
    asset_hash = layer["Properties"]["Content"]["S3Key"].removesuffix(".zip")
    site = outdir / f"asset.{asset_hash}" / "python"
    assert (site / "trncost" / "estimate" / "engine.py").is_file()
    assert (site / "trncost" / "store" / "schema.py").is_file()
    assert not (site / "trncost_client").exists()  # the client side is never shipped
    assert not list(site.rglob("__pycache__")) and not list(site.rglob("*.pyc"))
    # ... and pydantic-core built for the runtime's CPython on aarch64 Linux
    tag = f"cpython-{python_version().replace('.', '')}-aarch64-linux-gnu"
    (core,) = (site / "pydantic_core").glob("_pydantic_core.*.so")
    assert tag in core.name, core.name
    assert _elf_machine(core) == ELF_MACHINE_AARCH64
    for shared_object in site.rglob("*.so"):
        assert _elf_machine(shared_object) == ELF_MACHINE_AARCH64, shared_object
    # ... with every dependency present, the AWS SDK left to the runtime
    assert _missing_dependencies(site) == {}
    # ... and small enough: Lambda unzips at most 250 MB of function code and layers together
    # (DuckDB, for Parquet billing exports, is ~55 MB of it; the handlers are kilobytes)
    unzipped = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    print(
        f"\nlayer unzipped: {unzipped / 1e6:,.1f} MB of Lambda's {LAMBDA_UNZIPPED_MAX / 1e6:,.0f}"
    )
    assert unzipped < LAMBDA_UNZIPPED_MAX - HANDLERS_HEADROOM
    assert not (site / "botocore").exists() and not (site / "boto3").exists()
    # The asset hash is the one the (unbundled) app synth records: a deploy ships this build
    synthesized.require()
    app_template = synthesized.templates["dev/TrncostPricing"]
    (app_layer,) = (
        r for r in app_template["Resources"].values() if r["Type"] == "AWS::Lambda::LayerVersion"
    )
    assert app_layer["Properties"]["Content"]["S3Key"] == f"{asset_hash}.zip"
    assert layer["Properties"]["CompatibleRuntimes"] == [RUNTIME.name]


# --- what the layer holds: everything the handlers import, nothing only the CLI uses -----------

HANDLERS = sorted(LAMBDAS_DIR.glob("*/handler.py"))


def _module_file(root: Path, module: str) -> Path | None:
    """The source of `module` (dotted) under `root`: a module file or a package's __init__."""
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(path: Path, module: str) -> Iterator[str]:
    """Every module `path` (module `module`) may import, at import time or lazily inside a
    function: `import a.b` gives a.b, `from a import b` gives a and a.b (b may be a module)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            yield source
            yield from (f"{source}.{alias.name}" for alias in node.names)


def _reached(root: Path, entry_points: list[Path]) -> tuple[set[str], set[str]]:
    """(trncost modules, other top-level modules) the entry points reach through `root`,
    parent packages included (importing a.b.c runs a and a.b first)."""
    package_modules: set[str] = set()
    others: set[str] = set()
    todo: list[tuple[Path, str]] = [(path, "handler") for path in entry_points]
    while todo:
        path, module = todo.pop()
        for name in _imports(path, module):
            top = name.split(".")[0]
            if top != PACKAGE:
                others.add(top)
                continue
            parts = name.split(".")
            for depth in range(1, len(parts) + 1):
                candidate = ".".join(parts[:depth])
                found = _module_file(root, candidate)
                if found is not None and candidate not in package_modules:
                    package_modules.add(candidate)
                    todo.append((found, candidate))
    return package_modules, others


@pytest.fixture(scope="module")
def layer_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The layer's python/ folder as the bundler writes it, less pip's part."""
    site = tmp_path_factory.mktemp("layer") / "python"
    copy_package(LAYERS_DIR, site)
    return site


def test_the_layer_is_the_whole_package_and_nothing_of_the_client_side(layer_site: Path) -> None:
    shipped = sorted(p.relative_to(layer_site).as_posix() for p in layer_site.rglob("*.py"))
    source = sorted(
        p.relative_to(LAYERS_DIR).as_posix()
        for p in (LAYERS_DIR / PACKAGE).rglob("*.py")
        if "__pycache__" not in p.parts
    )
    assert shipped == source
    assert (layer_site / PACKAGE / "estimate" / "engine.py").is_file()
    assert not (layer_site / "trncost_client").exists()
    # and its data: the OpenAPI document the API serves at /openapi.json and /docs
    shipped_spec = layer_site / PACKAGE / "api" / "openapi.json"
    assert shipped_spec.read_bytes() == (LAYERS_DIR / PACKAGE / "api" / "openapi.json").read_bytes()


def test_no_handler_reaches_the_client_side(layer_site: Path) -> None:
    # Given every module the handlers import, even lazily, followed through the source tree
    reached, others = _reached(LAYERS_DIR, HANDLERS)
    assert {"trncost.settings", "trncost.api.app", "trncost.services.trial_steps"} <= reached
    # Then none is client-side code, and the layer has each of them
    assert "trncost_client" not in others
    missing = sorted(m for m in reached if _module_file(layer_site, m) is None)
    assert missing == []


def test_what_the_handlers_import_is_pinned_for_the_layer() -> None:
    # Every third-party module the handlers reach is a pinned layer requirement, or comes with
    # the Lambda runtime (the AWS SDK)
    _, others = _reached(LAYERS_DIR, HANDLERS)
    requirements = (LAYERS_DIR / LAYER_REQUIREMENTS).read_text().splitlines()
    pinned = {
        canonicalize_name(Requirement(line).name)
        for line in requirements
        if line.strip() and not line.startswith("#")
    }
    shipped = pinned | {canonicalize_name(n) for n in RUNTIME_PROVIDED_PACKAGES}
    distributions = importlib.metadata.packages_distributions()
    third_party = sorted(
        others - set(sys.stdlib_module_names) - {"__future__"} - RUNTIME_ONLY_MODULES
    )
    unpinned = {
        module: distributions.get(module, ["<not installed>"])
        for module in third_party
        if not {canonicalize_name(d) for d in distributions.get(module, [])} & shipped
    }
    assert unpinned == {}


def test_every_handler_imports_with_the_layer_alone(layer_site: Path) -> None:
    # Given a Python that sees the layer's package and the installed dependencies, but not the
    # source tree (-I -S: no editable install, no site hooks, no current directory)
    site_packages = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    script = (
        "import importlib.util, json, sys\n"
        "sys.path[:0] = json.loads(sys.argv[1])\n"
        "for path in json.loads(sys.argv[2]):\n"
        "    name = 'handler_' + path.split('/')[-2]\n"
        "    spec = importlib.util.spec_from_file_location(name, path)\n"
        "    spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "print(json.dumps({n: getattr(m, '__file__', None) for n, m in sys.modules.items()\n"
        f"                  if n.split('.')[0] == {PACKAGE!r}}}))\n"
    )
    environment = {"AWS_DEFAULT_REGION": "us-east-1", "POWERTOOLS_TRACE_DISABLED": "1"}
    # When every handler module is loaded, as the Lambda runtime loads it
    done = subprocess.run(
        [
            sys.executable, "-I", "-S", "-c", script,
            json.dumps([str(layer_site), *site_packages]),
            json.dumps([str(h) for h in HANDLERS]),
        ],
        capture_output=True, text=True, env=environment, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # Then each trncost module it loaded came from the layer (trncost_client is not there)
    loaded: dict[str, str | None] = json.loads(done.stdout.strip().splitlines()[-1])
    assert "trncost.api.app" in loaded and "trncost.services.trial_steps" in loaded
    outside = {
        name: file
        for name, file in loaded.items()
        if file is not None and not Path(file).is_relative_to(layer_site)
    }
    assert outside == {}

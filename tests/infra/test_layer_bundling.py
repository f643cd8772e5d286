"""The layer is bundled for real, as `cdk synth` does it: pip for arm64, no Docker.

Needs PyPI (or pip's cache). The rest of tests/infra skips bundling (see conftest.CLI_CONTEXT).
"""

from __future__ import annotations

from pathlib import Path

import aws_cdk as cdk
import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from stacks.lambda_factory import RUNTIME, RUNTIME_PROVIDED_PACKAGES, TrncostLayer, python_version

pytestmark = pytest.mark.infra

ELF_MACHINE_AARCH64 = 183  # e_machine of an ELF for ARM 64-bit


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
    # Then the asset holds the package (less the CLI) under python/trncost ...
    (layer,) = (
        r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::LayerVersion"
    )
    asset_hash = layer["Properties"]["Content"]["S3Key"].removesuffix(".zip")
    site = outdir / f"asset.{asset_hash}" / "python"
    assert (site / "trncost" / "estimate" / "engine.py").is_file()
    assert (site / "trncost" / "store" / "schema.py").is_file()
    assert not (site / "trncost" / "cli").exists()
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
    assert not (site / "botocore").exists() and not (site / "boto3").exists()
    # The asset hash is the one the (unbundled) app synth records: a deploy ships this build
    synthesized.require()
    app_template = synthesized.templates["dev/TrncostPricing"]
    (app_layer,) = (
        r for r in app_template["Resources"].values() if r["Type"] == "AWS::Lambda::LayerVersion"
    )
    assert app_layer["Properties"]["Content"]["S3Key"] == f"{asset_hash}.zip"
    assert layer["Properties"]["CompatibleRuntimes"] == [RUNTIME.name]

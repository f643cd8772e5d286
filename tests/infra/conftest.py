"""Synthesize the CDK app once per test session, in-process, into a temporary cloud assembly."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from app import build_app, cdk_json_context  # noqa: E402  (after the jsii env var)

# What the CDK CLI adds to the context when it runs the app (`cdk synth`), so the in-process
# assembly matches what gets deployed (e.g. the AWS::CDK::Metadata resource). Except bundling:
# no stack is bundled (CDK then skips local bundling too), so the suite stays fast and needs no
# PyPI; the asset hashes are the same as when bundled (SOURCE hashes). test_layer_bundling.py
# bundles the layer for real.
CLI_CONTEXT = {
    "aws:cdk:enable-path-metadata": True,
    "aws:cdk:enable-asset-metadata": True,
    "aws:cdk:version-reporting": True,
    "aws:cdk:bundling-stacks": [],
}


@dataclass
class Synthesized:
    """The result of one `app.synth()`: the assembly, or the error that stopped it."""

    outdir: Path
    app: Any = None  # aws_cdk.App
    assembly: Any = None  # aws_cdk.cx_api.CloudAssembly
    error: Exception | None = None
    templates: dict[str, dict[str, Any]] = field(default_factory=dict)  # stack path -> template

    def require(self) -> Any:
        if self.error is not None:
            pytest.fail(f"cdk synth failed: {self.error}")
        return self.assembly

    @property
    def validation_report(self) -> dict[str, Any]:
        path = self.outdir / "validation-report.json"
        return json.loads(path.read_text()) if path.exists() else {"pluginReports": []}


def synthesize(app: Any, outdir: Path) -> Synthesized:
    """Synthesize `app` (built with `outdir`), keeping a validation failure for the tests."""
    result = Synthesized(outdir=outdir, app=app)
    try:
        result.assembly = app.synth()
    except RuntimeError as error:  # cdk-nag (policy validation) failures surface here
        result.error = error
        return result
    for stack in result.assembly.stacks_recursively:
        result.templates[stack.hierarchical_id] = stack.template
    return result


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    """The real app (cdk.json context, every stage), synthesized once per session."""
    outdir = tmp_path_factory.mktemp("cdk.out")
    app = build_app({**cdk_json_context(), **CLI_CONTEXT}, str(outdir))
    return synthesize(app, outdir)


@pytest.fixture
def cdk_context() -> dict[str, Any]:
    """A fresh copy of cdk.json's context, safe to modify."""
    return cdk_json_context()


@pytest.fixture
def cli_context() -> dict[str, Any]:
    """The context keys the CDK CLI adds, for throwaway apps built in a test."""
    return dict(CLI_CONTEXT)


@pytest.fixture(name="synthesize")
def synthesize_fixture() -> Any:
    """`synthesize(app, outdir) -> Synthesized`, for throwaway apps built in a test."""
    return synthesize

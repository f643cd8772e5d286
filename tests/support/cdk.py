"""Synthesizing the CDK app in tests, in-process, into a temporary cloud assembly.

`app` (aws-cdk-lib, jsii) is imported only when a synth is asked for, so that collecting the
unit tier does not pay for it."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

# jsii (the bridge aws-cdk-lib runs on) warns on every call about Node 20; set before any test
# module imports aws_cdk (this module is loaded with the fixtures, at startup).
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

STAGE = "dev"
DATA = f"{STAGE}/TrncostData"

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


def cdk_json_context() -> dict[str, Any]:
    """A fresh copy of cdk.json's context (app.cdk_json_context)."""
    from app import cdk_json_context as read

    return read()


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

    def template(self, stack: str) -> dict[str, Any]:
        """The template of stack path `stack` (e.g. "dev/TrncostData"); fails if synth did."""
        self.require()
        return self.templates[stack]

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


def synthesize_real_app(outdir: Path) -> Synthesized:
    """The real app (cdk.json context, every stage, the CLI's context keys) into `outdir`."""
    context = cdk_json_context()
    from app import build_app

    return synthesize(build_app({**context, **CLI_CONTEXT}, str(outdir)), outdir)

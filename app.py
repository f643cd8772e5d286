#!/usr/bin/env python3
"""trncost CDK app: one TrncostStage per stage in cdk.json's `stages` context, cdk-nag on.

`cdk synth` builds every stage; `cdk synth -c stage=dev` builds only that one. Importing this
module has no side effects: tests call `build_app(context, outdir)`. Run directly
(`python app.py`, not through the CDK CLI) it reads cdk.json itself and writes to cdk.out.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import aws_cdk as cdk

from stacks.config import load_stage_configs, select_stages
from stacks.nag import apply_nag
from stacks.stage import TrncostStage

CDK_JSON = Path(__file__).resolve().parent / "cdk.json"


def cdk_json_context() -> dict[str, Any]:
    """The `context` object of cdk.json (what the CDK CLI passes to the app)."""
    context: dict[str, Any] = json.loads(CDK_JSON.read_text())["context"]
    return context


def build_app(context: dict[str, Any] | None = None, outdir: str | None = None) -> cdk.App:
    """Build (not synthesize) the app. `context` is the app context, as the CLI would pass it."""
    app = cdk.App(context=context, outdir=outdir)
    stages = app.node.try_get_context("stages")
    configs = load_stage_configs({"stages": stages})
    only = app.node.try_get_context("stage")
    for name, config in select_stages(configs, only).items():
        TrncostStage(app, name, config=config)
    apply_nag(app)
    return app


def main() -> None:
    through_cli = "CDK_CONTEXT_JSON" in os.environ or "CDK_OUTDIR" in os.environ
    context = None if through_cli else cdk_json_context()
    build_app(context, outdir=os.environ.get("CDK_OUTDIR", "cdk.out")).synth()


if __name__ == "__main__":
    main()

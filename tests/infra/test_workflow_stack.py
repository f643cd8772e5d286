"""Issue #7 infrastructure, on a small app of its own (a stage with the data stack and the
workflow stack only, cdk-nag on): the definition is the ASL file, logging ALL + X-Ray, PassRole
of the training role only, no '*' actions, nag findings none or acknowledged, cfn-lint clean."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from cfnlint.api import ManualArgs, lint

from app import cdk_json_context
from stacks.config import load_stage_configs
from stacks.data import TrncostData
from stacks.nag import CONSTRUCT_ACKNOWLEDGEMENTS, apply_nag, construct_acknowledgement_targets
from stacks.nag import WORKFLOW_ACKNOWLEDGEMENTS as ACKNOWLEDGEMENTS
from stacks.workflow import (
    MAX_POLLS,
    POLL_INTERVAL_S,
    TRAINING_SERVICES,
    TrncostWorkflow,
    state_machine_name,
)
from tests.support.cdk import CLI_CONTEXT, synthesize
from tests.support.examples import ROOT
from trncost.workflow.definition import ASL_PATH, placeholders, plan_timeout_s

pytestmark = pytest.mark.infra


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("wf.cdk.out")
    app = cdk.App(context={**cdk_json_context(), **CLI_CONTEXT}, outdir=str(outdir))
    config = load_stage_configs({"stages": cdk_json_context()["stages"]})["dev"]
    stage = cdk.Stage(app, "dev", env=cdk.Environment(account=config.account, region=config.region))
    data = TrncostData(stage, "TrncostData", config=config)
    TrncostWorkflow(stage, "TrncostWorkflow", config=config, table=data.table, bus=data.bus)
    acks = CONSTRUCT_ACKNOWLEDGEMENTS + ACKNOWLEDGEMENTS
    apply_nag(app, construct_acknowledgements=acks)
    result = synthesize(app, outdir)
    result.app = app
    return result


@pytest.fixture(scope="module")
def template(built) -> dict:
    built.require()
    return built.templates["dev/TrncostWorkflow"]


def _of(template: dict, kind: str) -> dict[str, dict]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == kind}


def _statements(template: dict) -> list[tuple[str, dict]]:
    out = []
    for pid, policy in _of(template, "AWS::IAM::Policy").items():
        for s in policy["Properties"]["PolicyDocument"]["Statement"]:
            out.append((pid, s))
    return out


def _listed(v):
    return v if isinstance(v, list) else [v]


def test_definition_is_the_asl_file_with_its_substitutions(template) -> None:
    (sm,) = _of(template, "AWS::StepFunctions::StateMachine").values()
    props = sm["Properties"]
    definition = props["DefinitionString"]
    if isinstance(definition, dict):  # Fn::Join of literal parts
        parts = definition["Fn::Join"][1]
        assert all(isinstance(p, str) for p in parts)
        definition = definition["Fn::Join"][0].join(parts)
    deployed = json.loads(definition)
    # the file, with the overall timeout derived from the stage's caps (issue 23)
    timeout = deployed.pop("TimeoutSeconds")
    assert deployed == json.loads(ASL_PATH.read_text())
    config = load_stage_configs({"stages": cdk_json_context()["stages"]})["dev"]
    assert timeout == plan_timeout_s(config.trial_plans.max_runs, POLL_INTERVAL_S, MAX_POLLS)
    assert set(props["DefinitionSubstitutions"]) == placeholders()
    assert props["StateMachineName"] == state_machine_name("dev")
    assert props["StateMachineType"] == "STANDARD"


def test_logging_all_with_execution_data_and_tracing(template) -> None:
    (sm,) = _of(template, "AWS::StepFunctions::StateMachine").values()
    props = sm["Properties"]
    assert props["LoggingConfiguration"]["Level"] == "ALL"
    assert props["LoggingConfiguration"]["IncludeExecutionData"] is True
    assert props["TracingConfiguration"] == {"Enabled": True}
    groups = _of(template, "AWS::Logs::LogGroup")
    assert all(g["Properties"].get("RetentionInDays") for g in groups.values())


def test_no_star_actions_and_passrole_only_on_the_training_role(template) -> None:
    roles = _of(template, "AWS::IAM::Role")
    training = next(k for k, v in roles.items() if k.startswith("TrainingRole"))
    trust = roles[training]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    principals = {p for s in trust for p in _listed(s["Principal"]["Service"])}
    assert principals == set(TRAINING_SERVICES)
    passrole = []
    for _, s in _statements(template):
        actions = _listed(s["Action"])
        assert all("*" not in a for a in actions), actions
        if "iam:PassRole" in actions:
            passrole.append(s)
    assert len(passrole) == 1
    assert passrole[0]["Resource"] == {"Fn::GetAtt": [training, "Arn"]}
    assert passrole[0]["Condition"] == {"StringEquals": {"iam:PassedToService": TRAINING_SERVICES}}


def test_state_machine_invokes_only_the_task_function(template) -> None:
    fns = _of(template, "AWS::Lambda::Function")
    (steps,) = [k for k in fns if k.startswith("TrialSteps")]
    invokes = [
        s for _, s in _statements(template) if "lambda:InvokeFunction" in _listed(s["Action"])
    ]
    assert [s["Resource"] for s in invokes] == [{"Fn::GetAtt": [steps, "Arn"]}]


def test_cdk_nag_findings_are_none_or_acknowledged(built) -> None:
    violations = [
        f"{v['ruleName']} at {[c['constructPath'] for c in v['violatingConstructs']]}"
        for plugin in built.validation_report["pluginReports"]
        for v in plugin["violations"]
    ]
    assert violations == []
    built.require()
    targets = construct_acknowledgement_targets(built.app, ACKNOWLEDGEMENTS)
    assert all(targets.values()), [p for p, t in targets.items() if not t]


def test_cfn_lint_clean(built) -> None:
    built.require()
    for path in ("dev/TrncostWorkflow", "dev/TrncostData"):
        config = ManualArgs(regions=["us-east-1"], ignore_checks=["W3005"])
        found = lint(json.dumps(built.templates[path]), config=config)
        assert [f"{m.rule.id} {m.message}" for m in found] == [], path


def test_the_handler_folder_exists() -> None:
    assert (ROOT / "lambdas/trial_steps/handler.py").is_file()

"""Grouping constructs (stacks.base.Group) organize the stacks' code without renaming anything in
CloudFormation: a logical-id change would replace the resource on the next deploy (and, for an
alarm, a dashboard or a topic, which are upserted by name, delete it)."""

from __future__ import annotations

from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from stacks.base import Group, TrncostStack, path_below, unique_id

pytestmark = pytest.mark.infra


def _logical_ids(app: cdk.App) -> dict[str, str]:
    """Construct path -> logical id, for every CloudFormation element of `app`."""
    found = {}
    for construct in app.node.find_all():
        if isinstance(construct, cdk.CfnElement):
            stack = cdk.Stack.of(construct)
            found[construct.node.path] = stack.resolve(construct.logical_id)
    return found


class _Holder(Construct):
    """A plain construct: its id is part of the logical ids below it."""


def _build(tmp_path: Path, name: str, *, grouped: bool) -> dict[str, str]:
    app = cdk.App(outdir=str(tmp_path / name), context={"aws:cdk:bundling-stacks": []})
    stack = TrncostStack(app, "Stack", description="logical ids")
    outer = Group(stack, "Outer") if grouped else stack
    inner = Group(outer, "Inner") if grouped else outer
    sqs.Queue(inner, "Top")
    holder = _Holder(inner, "Holder")
    sqs.Queue(Group(holder, "Deep") if grouped else holder, "Queue")
    cdk.CfnOutput(inner, "QueueCount", value="2")
    ids = _logical_ids(app)
    return {path.replace("/Outer", "").replace("/Inner", "").replace("/Deep", ""): logical
            for path, logical in ids.items()}  # fmt: skip


def test_a_group_leaves_logical_ids_as_cdk_gives_them_without_it(tmp_path: Path) -> None:
    # Given the same resources directly in the stack (CDK's own naming), and inside Groups
    direct = _build(tmp_path, "direct", grouped=False)
    grouped = _build(tmp_path, "grouped", grouped=True)
    # Then every element has the logical id it has without the Groups
    assert grouped == direct
    assert direct["Stack/Holder/Queue/Resource"].startswith("HolderQueue")


def test_every_logical_id_of_the_app_is_its_path_less_the_groups(synthesized) -> None:
    # unique_id restates CDK's naming: it agrees with CDK on every element of the real app
    # (those outside Groups were named by CDK itself), and Groups are left out of the path
    synthesized.require()
    checked = grouped = 0
    for construct in synthesized.app.node.find_all():
        if not isinstance(construct, cdk.CfnElement):
            continue
        stack = cdk.Stack.of(construct)
        below = path_below(stack, construct)
        components = [s.node.id for s in below if not isinstance(s, Group)]
        logical, expected = stack.resolve(construct.logical_id), unique_id(components)
        if isinstance(construct, apigw.CfnDeployment | lambda_.CfnVersion):
            # a REST API deployment, and a function's current version, append a hash of what
            # they hold (a change redeploys, or publishes a new version)
            logical = logical[: len(expected)]
        assert logical == expected, construct.node.path
        checked += 1
        grouped += any(isinstance(s, Group) for s in below)
    assert checked > 100 and grouped > 20


@pytest.mark.parametrize(
    ("components", "expected"),
    [
        (["Bucket"], "Bucket"),  # a top-level element: its id, no hash
        (["Default", "Bucket"], "Bucket"),  # "Default" is left out entirely
        (["a-b_c"], "abc"),
    ],
)
def test_unique_id_special_cases(components: list[str], expected: str) -> None:
    assert unique_id(components) == expected

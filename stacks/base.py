"""What every trncost stack shares: typed stack options, the stage name, grouping constructs that
leave CloudFormation logical ids alone, and the house log group.

Logical ids. CloudFormation knows a resource by its logical id, which CDK derives from the
construct path below the stack; change the path and the next deploy replaces the resource (for
a named one, an alarm, a dashboard, a topic, the replacement is created under the same name and
then the old one deleted: the name is gone). A `Group` lets a stack be written as several
constructs without that: its own id is left out of the logical ids of everything under it
(`TrncostStack._allocate_logical_id`). The construct path (`aws:cdk:path` metadata, cdk-nag
acknowledgements) does show it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import TypedDict, Unpack, cast

import aws_cdk as cdk
from aws_cdk import aws_logs as logs
from constructs import Construct, IConstruct

from stacks.keys import LogKey

DEFAULT_STAGE_NAME = "default"  # a stack built outside any cdk.Stage (tests, one-off apps)


class StackOptions(TypedDict, total=False):
    """The `cdk.Stack` keyword arguments a trncost stack passes through (cdk.StackProps)."""

    analytics_reporting: bool
    cross_region_references: bool
    env: cdk.Environment
    notification_arns: Sequence[str]
    permissions_boundary: cdk.PermissionsBoundary
    stack_name: str
    suppress_template_indentation: bool
    synthesizer: cdk.IStackSynthesizer
    tags: Mapping[str, str]
    termination_protection: bool


class Group(Construct):
    """A construct that organizes code, not CloudFormation: its id is not part of the logical
    ids of the resources under it (inside a `TrncostStack`), so moving resources into a Group
    (or out of one) leaves them as they are deployed. Give what it holds the ids it would have
    directly in the stack."""


# CDK's own naming (aws-cdk-lib core/lib/private/uniqueid.ts, used by Stack.allocateLogicalId),
# restated so a path can be named with the Group ids taken out. tests/infra pins it to CDK's.
_HIDDEN_ID = "Default"  # left out entirely
_HIDDEN_FROM_HUMAN_ID = "Resource"  # left out of the readable part, kept in the hash
_HASH_LEN = 8
_MAX_HUMAN_LEN = 240
_MAX_ID_LEN = 255


def unique_id(components: Sequence[str]) -> str:
    """The logical id CDK gives the construct path `components` (ids below the stack)."""
    path = [c for c in components if c != _HIDDEN_ID]
    if not path:
        raise ValueError("no path components to name")
    if len(path) == 1:
        candidate = _alphanumeric(path[0])
        if len(candidate) <= _MAX_ID_LEN:
            return candidate
    digest = hashlib.md5("/".join(path).encode(), usedforsecurity=False).hexdigest()
    human = "".join(_alphanumeric(c) for c in _without_repeats(path) if c != _HIDDEN_FROM_HUMAN_ID)
    return human[:_MAX_HUMAN_LEN] + digest[:_HASH_LEN].upper()


def _alphanumeric(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", text)


def _without_repeats(path: Sequence[str]) -> list[str]:
    kept: list[str] = []
    for component in path:
        if not kept or not kept[-1].endswith(component):
            kept.append(component)
    return kept


def path_below(scope: IConstruct, construct: IConstruct) -> list[IConstruct]:
    """The scopes of `construct` below `scope` (one of its ancestors), `construct` included."""
    scopes = construct.node.scopes
    at = next(i for i, s in enumerate(scopes) if s is scope)
    return list(scopes[at + 1 :])


class TrncostStack(cdk.Stack):
    """A trncost stack: its stage's name at hand, and `Group`s left out of logical ids."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        description: str,
        **options: Unpack[StackOptions],
    ) -> None:
        super().__init__(scope, construct_id, description=description, **options)

    @property
    def stage_name(self) -> str:
        """The trncost stage (dev, prod, ...) this stack belongs to."""
        stage = cdk.Stage.of(self)
        return stage.stage_name if stage is not None and stage.stage_name else DEFAULT_STAGE_NAME

    def _allocate_logical_id(self, cfn_element: cdk.CfnElement) -> str:
        below = path_below(self, cfn_element)
        if not any(isinstance(s, Group) for s in below):
            return super()._allocate_logical_id(cfn_element)
        return unique_id([s.node.id for s in below if not isinstance(s, Group)])


def retained_log_group(
    scope: Construct,
    construct_id: str,
    *,
    retention_days: int,
    log_group_name: str | None = None,
) -> logs.LogGroup:
    """A log group kept when its stack is deleted, with the stage's retention (a day count
    StageConfig validated; RetentionDays' Python values are names, not days), encrypted with
    the stage's log key (stacks/keys.py)."""
    log_group = logs.LogGroup(
        scope,
        construct_id,
        log_group_name=log_group_name,
        removal_policy=cdk.RemovalPolicy.RETAIN,
        encryption_key=LogKey.of(scope),
    )
    resource = cast(logs.CfnLogGroup, log_group.node.default_child)
    resource.retention_in_days = retention_days
    return log_group

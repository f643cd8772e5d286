"""What the stage has to watch: every Lambda function and SQS queue of its stacks, found, not
listed. The queues are sorted into work queues and dead-letter queues (a queue's redrive target,
a function's async-invoke DLQ, a schedule's DLQ); each gets a label that names its alarms,
dashboard lines and outputs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import IConstruct

from stacks.base import Group
from stacks.lambda_factory import ScheduledInvocation, TrncostFunction
from stacks.pricing import DecisionNotices


@dataclass(frozen=True)
class MonitoredFunction:
    """A Lambda function of the stage; `label` names its alarms and dashboard lines."""

    label: str
    function: lambda_.IFunction


@dataclass(frozen=True)
class MonitoredQueue:
    """An SQS queue of the stage. For a dead-letter queue, `feeds_from` says what fails into it."""

    label: str
    queue: sqs.IQueue
    feeds_from: str = ""


@dataclass(frozen=True)
class MonitoredResources:
    functions: tuple[MonitoredFunction, ...]
    queues: tuple[MonitoredQueue, ...]  # work queues
    dead_letter_queues: tuple[MonitoredQueue, ...]


def _kebab(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()


def camel(label: str) -> str:
    """trial-ingest, trial_steps -> TrialIngest, TrialSteps (construct and output ids)."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_]", label) if part)


# Construct ids that say what a construct is, not which one: left out of path-based labels.
_GENERIC_IDS = frozenset({"Queue", "DeadLetterQueue", "Function", "Resource", "Default"})


def _path_label(construct: IConstruct) -> str:
    """A label from the construct path below the stack: .../TrialIngest/Queue/Queue ->
    trial-ingest. Groups (stacks.base) are left out, as they are of logical ids."""
    scopes = construct.node.scopes
    stack_at = next(i for i, s in enumerate(scopes) if isinstance(s, cdk.Stack))
    parts = [
        s.node.id
        for s in scopes[stack_at + 1 :]
        if s.node.id not in _GENERIC_IDS and not isinstance(s, Group)
    ]
    return "-".join(_kebab(p) for p in parts) or _kebab(scopes[stack_at].node.id)


def _functions(constructs: Sequence[IConstruct]) -> list[MonitoredFunction]:
    """Every Lambda function; a house function is labelled by its Powertools service."""
    house = {c.function.node.path: c for c in constructs if isinstance(c, TrncostFunction)}
    functions: list[MonitoredFunction] = []
    for construct in constructs:
        if isinstance(construct, lambda_.Function):
            wrapper = house.get(construct.node.path)
            label = wrapper.service_name if wrapper is not None else _path_label(construct)
            functions.append(MonitoredFunction(label, construct))
    return functions


def _dead_letter_queue(construct: IConstruct, labels: Mapping[str, str]) -> MonitoredQueue | None:
    """The dead-letter queue `construct` fails into, if it has one (`labels`: function labels
    by function path)."""
    if isinstance(construct, lambda_.Function) and construct.dead_letter_queue is not None:
        label = labels[construct.node.path]
        return MonitoredQueue(
            f"{label}-async", construct.dead_letter_queue, f"failed async invokes of {label}"
        )
    if isinstance(construct, ScheduledInvocation):
        label = labels.get(construct.function.node.path, _path_label(construct))
        return MonitoredQueue(
            f"{label}-schedule",
            construct.dead_letter_queue,
            f"scheduled invokes of {label} that failed",
        )
    if isinstance(construct, DecisionNotices):
        return MonitoredQueue(
            "decision-notices",
            construct.dead_letter_queue,
            "'Estimate Decision Changed' events the rule could not deliver to its topic",
        )
    if isinstance(construct, sqs.Queue) and construct.dead_letter_queue is not None:
        label = _path_label(construct)
        return MonitoredQueue(
            label,
            construct.dead_letter_queue.queue,
            f"messages of the {label} queue its consumer keeps failing",
        )
    return None


def _refuse_shared_labels(kind: str, labels: Iterable[str]) -> None:
    seen = list(labels)
    clashes = sorted({label for label in seen if seen.count(label) > 1})
    if clashes:
        raise ValueError(f"two of the stage's {kind}s would share the label(s) {clashes}")


def monitored_resources(stacks: Iterable[cdk.Stack]) -> MonitoredResources:
    """Every Lambda function and SQS queue in `stacks`, the queues split into work queues and
    dead-letter queues. A dead-letter queue is: the redrive target of a queue, the async-invoke
    DLQ of a function, the DLQ of a ScheduledInvocation, or the DLQ of the rule that sends
    decision notices to their topic (the other EventBridge rule targets in this project park
    events in their queue's redrive target, already covered)."""
    constructs = [c for stack in stacks for c in stack.node.find_all()]
    functions = _functions(constructs)
    labels = {f.function.node.path: f.label for f in functions}
    dead: dict[str, MonitoredQueue] = {}
    for construct in constructs:
        found = _dead_letter_queue(construct, labels)
        if found is not None:
            dead.setdefault(found.queue.node.path, found)
    queues = [
        MonitoredQueue(_path_label(c), c)
        for c in constructs
        if isinstance(c, sqs.Queue) and c.node.path not in dead
    ]
    _refuse_shared_labels("function", (f.label for f in functions))
    _refuse_shared_labels("queue", (q.label for q in queues))
    _refuse_shared_labels("DLQ", (q.label for q in dead.values()))
    return MonitoredResources(tuple(functions), tuple(queues), tuple(dead.values()))


def add_dead_letter_queue_outputs(dead_letter_queues: Iterable[MonitoredQueue]) -> None:
    """A `<Label>DeadLetterQueueName` output, in the queue's own stack (an output of an imported
    value is refused by cfn-lint, W6001), for each DLQ its stack does not output yet."""
    for monitored in dead_letter_queues:
        queue = monitored.queue
        stack = cdk.Stack.of(queue)
        name = stack.resolve(queue.queue_name)
        if any(
            isinstance(c, cdk.CfnOutput) and stack.resolve(c.value) == name
            for c in stack.node.find_all()
        ):
            continue
        cdk.CfnOutput(
            stack,
            f"{camel(monitored.label)}DeadLetterQueueName",
            value=queue.queue_name,
            description=f"dead-letter queue: {monitored.feeds_from}",
        )

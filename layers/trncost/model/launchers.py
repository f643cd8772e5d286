"""Which launcher can run which instance type. Pure: no boto3, so the plan model and the API
can refuse an impossible plan at submission (a 4xx), before anything is launched.

- `sagemaker` (CreateTrainingJob) takes SageMaker training instance types, `ml.<family>.<size>`.
  Families SageMaker training does not offer are listed in `SAGEMAKER_UNAVAILABLE_FAMILIES`
  (Trn3 is offered as EC2 instances / UltraServers, not as `ml.trn3.*` training instances):
  the one place to change when that changes.
- `ec2` (RunInstances) and `batch` (SubmitJob onto EC2 compute environments) take EC2 types,
  without the `ml.` prefix.
- `local` (a process on the machine of the local runtime, `make run`) takes EC2 types too: the
  type is the label the run is recorded and priced under, and one instance is all a local run
  can measure (`LOCAL_INSTANCE_COUNT`).
"""

from __future__ import annotations

import re
from enum import StrEnum


class LauncherKind(StrEnum):
    sagemaker = "sagemaker"
    ec2 = "ec2"
    batch = "batch"
    local = "local"


LOCAL_INSTANCE_COUNT = 1  # a local run is one process on one machine


SAGEMAKER_UNAVAILABLE_FAMILIES = frozenset({"trn3"})
_TYPE = re.compile(r"^(ml\.)?([a-z][a-z0-9-]*)\.([a-z0-9-]+)$")


def family(instance_type: str) -> str:
    match = _TYPE.match(instance_type)
    if not match:
        raise ValueError(f"{instance_type!r} is not an instance type (family.size)")
    return match.group(2)


def unsupported_reason(launcher: LauncherKind, instance_type: str) -> str | None:
    """Why `launcher` cannot run `instance_type`, or None when it can."""
    match = _TYPE.match(instance_type)
    if not match:
        return f"{instance_type!r} is not an instance type (family.size)"
    is_ml, fam = bool(match.group(1)), match.group(2)
    if launcher == LauncherKind.sagemaker:
        if not is_ml:
            return (
                f"SageMaker training takes ml.* instance types, not {instance_type}: "
                f"use ml.{instance_type}, or the ec2 or batch launcher"
            )
        if fam in SAGEMAKER_UNAVAILABLE_FAMILIES:
            return (
                f"SageMaker training does not offer {fam} ({instance_type}): "
                "use the ec2 launcher with the EC2 instance type"
            )
        return None
    if is_ml:
        return (
            f"the {launcher} launcher takes EC2 instance types, not {instance_type}: "
            f"use {instance_type.removeprefix('ml.')}"
        )
    return None

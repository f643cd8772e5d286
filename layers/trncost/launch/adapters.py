"""The launcher for a plan's launcher kind (one instance per kind and process: lazy clients)."""

from __future__ import annotations

from functools import cache

from trncost.launch.base import Launcher
from trncost.launch.support import LauncherKind


@cache
def launcher_for(kind: LauncherKind) -> Launcher:
    if kind == LauncherKind.sagemaker:
        from trncost.launch.sagemaker import SageMakerLauncher

        return SageMakerLauncher()
    if kind == LauncherKind.ec2:
        from trncost.launch.ec2 import Ec2Launcher

        return Ec2Launcher()
    from trncost.launch.batch import BatchLauncher

    return BatchLauncher()

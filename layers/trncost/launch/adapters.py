"""The launcher for a plan's launcher kind (one instance per kind and process, serving every
region: each keeps one lazily made client per region, `base.RegionalClients`)."""

from __future__ import annotations

from trncost.launch.base import Launcher
from trncost.model.launchers import LauncherKind
from trncost.settings import LocalRuns


class Launchers:
    """`launchers(kind)` → that kind's launcher, made on first use and kept. `local_runs` is
    the local runtime's (None anywhere else: the local launcher then refuses every launch)."""

    def __init__(self, local_runs: LocalRuns | None = None) -> None:
        self.local_runs = local_runs
        self._made: dict[LauncherKind, Launcher] = {}

    def __call__(self, kind: LauncherKind) -> Launcher:
        if kind not in self._made:
            self._made[kind] = self._make(LauncherKind(kind))
        return self._made[kind]

    def _make(self, kind: LauncherKind) -> Launcher:
        if kind == LauncherKind.sagemaker:
            from trncost.launch.sagemaker import SageMakerLauncher

            return SageMakerLauncher()
        if kind == LauncherKind.ec2:
            from trncost.launch.ec2 import Ec2Launcher

            return Ec2Launcher()
        if kind == LauncherKind.local:
            from trncost.launch.local import LocalLauncher

            return LocalLauncher(self.local_runs)
        from trncost.launch.batch import BatchLauncher

        return BatchLauncher()

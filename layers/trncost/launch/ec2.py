"""EC2 `RunInstances` launcher: instance types SageMaker does not offer (Trn3 included).

The AMI must have Python 3 and the trncost agent installed. User data exports the trial's tags
and identity, runs the entry command under the agent
(`python3 -m trncost_client.agent --send-event -- CMD …`, under `timeout` at the plan's max
run time), and powers the instance off at the end
(`shutdown -h now`, also on any exit via a trap); `InstanceInitiatedShutdownBehavior=terminate`
makes that a termination, so nothing is left billing. The agent sends the "Trial Run Completed"
event (node rank 0 only) that becomes the trial record. `ClientToken` is derived from the trial
id, so a retried launch returns the same instances instead of starting new ones.

Multi-instance runs start `instance_count` instances with the same user data; each reads its
node rank from the instance metadata (`ami-launch-index`). Wiring a distributed job across them
(addresses, EFA) is the entry command's business.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from trncost.errors import LaunchRejected
from trncost.launch.base import (
    LaunchedJob,
    LaunchRequest,
    RegionalClients,
    classify,
    job_name,
)

IMDS = "http://169.254.169.254/latest"


def user_data(r: LaunchRequest) -> str:
    env = {
        **r.environment(),
        "TRNCOST_SEND_EVENT": "1",
        "TRNCOST_INSTANCE_TYPE": r.instance_type,
        "TRNCOST_INSTANCE_COUNT": str(r.instance_count),
        "AWS_DEFAULT_REGION": r.region,
    }
    if r.settings.get("agent_bus"):
        env["TRNCOST_BUS"] = str(r.settings["agent_bus"])
    exports = "\n".join(f"export {k}={shlex.quote(v)}" for k, v in sorted(env.items()))
    command = " ".join(shlex.quote(a) for a in r.entry_command)
    return f"""#!/bin/bash
# trncost trial {r.trial_id}: run under the trial agent, then power off (= terminate).
set -uo pipefail
trap 'shutdown -h now' EXIT
{exports}
TOKEN=$(curl -s -X PUT {IMDS}/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 300')
export NODE_RANK=$(curl -s -H "X-aws-ec2-metadata-token: $TOKEN" {IMDS}/meta-data/ami-launch-index)
timeout {r.max_run_seconds}s python3 -m trncost_client.agent --send-event -- {command}
echo "trncost: training exited with $?"
shutdown -h now
"""


class Ec2Launcher:
    """One instance serves every region: each call goes to the client of the run's region
    (`RegionalClients`; `clients`: injected ones, each for its own region)."""

    def __init__(self, *clients: Any, factory: Callable[[str], Any] | None = None) -> None:
        self.clients = RegionalClients("ec2", clients, factory)

    def client(self, region: str) -> Any:
        return self.clients(region)

    @staticmethod
    def run_kwargs(r: LaunchRequest) -> dict[str, Any]:
        if not r.ami:
            raise LaunchRejected(f"{r.trial_id}: EC2 needs an AMI")
        s = r.settings
        if not s.get("instance_profile_arn"):
            raise LaunchRejected(f"{r.trial_id}: EC2 needs an instance profile (the training role)")
        tags = [{"Key": k, "Value": v} for k, v in r.tags().items()]
        tags.append({"Key": "Name", "Value": f"trncost {r.trial_id}"[:255]})
        kwargs: dict[str, Any] = {
            "ImageId": r.ami,
            "InstanceType": r.instance_type,
            "MinCount": r.instance_count,
            "MaxCount": r.instance_count,
            "ClientToken": job_name(r.trial_id, 64),
            "IamInstanceProfile": {"Arn": s["instance_profile_arn"]},
            "InstanceInitiatedShutdownBehavior": "terminate",
            "UserData": user_data(r),
            "MetadataOptions": {"HttpTokens": "required", "HttpEndpoint": "enabled"},
            "TagSpecifications": [
                {"ResourceType": "instance", "Tags": tags},
                {"ResourceType": "volume", "Tags": tags},
            ],
        }
        if s.get("subnet_id"):
            kwargs["SubnetId"] = s["subnet_id"]
        if s.get("security_group_ids"):
            kwargs["SecurityGroupIds"] = list(s["security_group_ids"])
        return kwargs

    def launch(self, request: LaunchRequest) -> LaunchedJob:
        from botocore.exceptions import ClientError

        kwargs = self.run_kwargs(request)
        try:
            reservation = self.client(request.region).run_instances(**kwargs)
        except ClientError as exc:
            raise classify(exc, f"RunInstances {request.trial_id}") from None
        ids = sorted(i["InstanceId"] for i in reservation.get("Instances", []))
        return LaunchedJob(",".join(ids), None)

    def stop(self, job_id: str, region: str) -> None:
        from botocore.exceptions import ClientError

        ids = [i for i in job_id.split(",") if i]
        if not ids:
            return
        try:
            self.client(region).terminate_instances(InstanceIds=ids)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "InvalidInstanceID.NotFound":
                return
            raise classify(exc, f"TerminateInstances {job_id}") from None

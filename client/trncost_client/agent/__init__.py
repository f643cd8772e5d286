"""The trncost trial agent, run inside training jobs (not shipped in the Lambda layer).

    python -m trncost_client.agent [options] -- CMD ...     wrap a training command
    with TrialAgent(AgentConfig.from_env()) as agent: agent.step(tokens=..., loss=...)

See `protocol` (the TRNCOST line protocol), `core` (what is measured and published),
`monitors` (neuron-monitor and nvidia-smi fields), `publish` (CloudWatch, EventBridge, buffer).
"""

from trncost_client.agent.core import AgentConfig, TrialAgent

__all__ = ["AgentConfig", "TrialAgent"]

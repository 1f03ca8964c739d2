"""The agents that ship a training node's GPU metrics and logs: the CloudWatch agent on AWS
(T3, T6), the Ops Agent on GCP; each config as the node installs it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aistack.config import parse
from aistack.errors import ConfigError
from aistack.node.config import DEFAULT_GCP_LOG_NAME, NodeBootstrapConfig
from aistack.node.files import script

__all__ = ["GPU_METRICS", "cloudwatch_agent_config", "ops_agent_config"]

#: The GPU metrics the agent publishes, by CloudWatch metric name (for alarms, e.g. T3).
GPU_METRICS: tuple[str, ...] = (
    "nvidia_smi_utilization_gpu",
    "nvidia_smi_utilization_memory",
    "nvidia_smi_memory_used",
    "nvidia_smi_memory_total",
    "nvidia_smi_temperature_gpu",
    "nvidia_smi_power_draw",
)

_LOG_DIR = "/var/log/aistack"


def cloudwatch_agent_config(
    config: NodeBootstrapConfig | Mapping[str, Any], *, log_dir: str = _LOG_DIR
) -> dict[str, Any]:
    """The CloudWatch agent config bootstrap.sh writes for `config`, as a dict.

    Both fill in the same template, `scripts/cloudwatch-agent.json`: GPU metrics from
    nvidia-smi with InstanceId and AutoScalingGroupName dimensions (T3), and the aistack
    and cloud-init logs shipped to `config.log_group` (T6).
    """
    config = parse(NodeBootstrapConfig, config)
    if config.cloud != "aws" or config.log_group is None:
        raise ConfigError(
            "the CloudWatch agent runs on AWS nodes.",
            field="cloud",
            fix="use ops_agent_config for GCP.",
        )
    text = script("cloudwatch-agent.json")
    for key, value in {
        "AISTACK_LOG_GROUP": config.log_group,
        "AISTACK_METRICS_NAMESPACE": config.metrics_namespace,
        "AISTACK_LOG_DIR": log_dir,
        "AISTACK_CACHE_DIR": config.cache_dir,
    }.items():
        text = text.replace(f"@{key}@", value)
    return json.loads(text)


def ops_agent_config(
    config: NodeBootstrapConfig | Mapping[str, Any], *, log_dir: str = _LOG_DIR
) -> dict[str, Any]:
    """The Ops Agent config (config.yaml, as a dict) a GCP node installs for `config`.

    The agent merges it with its built-in config, which already collects the host metrics
    and, on a VM with NVIDIA GPUs, the GPU metrics it reads through NVML
    (agent.googleapis.com/gpu/utilization and the like: the "default GPU metrics" of
    cloud.google.com/monitoring/agent/ops-agent/third-party-nvidia). So 'nvml' adds no
    metrics receiver; 'dcgm' adds the dcgm receiver, version 2 (Ops Agent 2.51.0 or later
    and DCGM 3.1 to 3.3.9 on the image, same page). The aistack logs go to Cloud Logging
    under the log name `config.log_group` (T6); the startup script's own output is in the
    journal, which the agent's default syslog receiver ships.
    """
    config = parse(NodeBootstrapConfig, config)
    if config.cloud != "gcp":
        raise ConfigError(
            "the Ops Agent runs on GCP nodes.",
            field="cloud",
            fix="use cloudwatch_agent_config for AWS, or set cloud 'gcp'.",
        )
    receiver = config.log_group or DEFAULT_GCP_LOG_NAME
    agent: dict[str, Any] = {
        "logging": {
            "receivers": {
                receiver: {
                    "type": "files",
                    "include_paths": [f"{log_dir}/*.log", f"{log_dir}/*.stderr"],
                }
            },
            "service": {"pipelines": {receiver: {"receivers": [receiver]}}},
        }
    }
    if config.gpu_metrics == "dcgm":
        agent["metrics"] = {
            "receivers": {"dcgm": {"type": "dcgm", "receiver_version": 2}},
            "service": {"pipelines": {"dcgm": {"receivers": ["dcgm"]}}},
        }
    return agent

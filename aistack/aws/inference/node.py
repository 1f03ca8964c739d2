"""Serving-node user data for `aws.InferenceTier`: the shared serving node
(`aistack.node.serving`) as EC2 user data, with the CloudWatch agent's config.

What is AWS's own: the CloudWatch agent ships GPU metrics per Auto Scaling group and the
node's and gateway's logs; the launch lifecycle hook holds a node out of its target group
until it serves; user data stops at 16 KB.
"""

from __future__ import annotations

import json
from typing import Any

from aistack import node
from aistack.errors import ConfigError
from aistack.gateway.serving import serving_nginx_conf
from aistack.node.serving import (
    CACHE_DIR,
    ENV_FILE,
    INSTALL_DIR,
    LIFECYCLE_HOOK,
    RUNTIME_HEALTH_PATHS,
    RUNTIME_PORT,
    ServingNode,
    boot_script,
    check_runtime_args,
    environment,
    model_dir,
    runtime_docker_args,
    serving_files,
    serving_script,
    strip_comments,
)
from aistack.node.serving import unpack_files as unpack_user_data

__all__ = [
    "CACHE_DIR",
    "ENV_FILE",
    "INSTALL_DIR",
    "LIFECYCLE_HOOK",
    "RUNTIME_HEALTH_PATHS",
    "RUNTIME_PORT",
    "ServingNode",
    "cloudwatch_agent_config",
    "environment",
    "model_dir",
    "render_serving_user_data",
    "runtime_docker_args",
    "serving_nginx_conf",
    "serving_script",
    "strip_comments",
    "unpack_user_data",
]

USER_DATA_LIMIT_BYTES = node.USER_DATA_LIMIT_BYTES
#: Logs the CloudWatch agent ships besides the model server's (which docker sends itself).
GATEWAY_LOGS = ("access.log", "error.log")


def cloudwatch_agent_config(spec: ServingNode) -> dict[str, Any]:
    """The CloudWatch agent config: GPU metrics per group, and the node's and gateway's logs."""
    files = [
        {
            "file_path": "/var/log/aistack/*.log",
            "log_group_name": spec.log_group,
            "log_stream_name": "{instance_id}/serving",
        },
        {
            "file_path": "/var/log/cloud-init-output.log",
            "log_group_name": spec.log_group,
            "log_stream_name": "{instance_id}/cloud-init-output",
        },
    ]
    log_dir = spec.gateway.log_dir
    if log_dir:
        for log in GATEWAY_LOGS:
            if log == "access.log" and spec.request_logging == "none":
                continue
            files.append(
                {
                    "file_path": f"{log_dir}/{log}",
                    "log_group_name": spec.log_group,
                    "log_stream_name": f"{{instance_id}}/gateway-{log.removesuffix('.log')}",
                }
            )
    return {
        "agent": {"metrics_collection_interval": 60, "run_as_user": "root"},
        "metrics": {
            "namespace": spec.metrics_namespace,
            "append_dimensions": {
                "AutoScalingGroupName": "${aws:AutoScalingGroupName}",
                "InstanceId": "${aws:InstanceId}",
            },
            "aggregation_dimensions": [["AutoScalingGroupName"]],
            "metrics_collected": {
                "nvidia_gpu": {
                    "measurement": ["utilization_gpu", "utilization_memory", "memory_used"],
                    "metrics_collection_interval": 60,
                },
                "disk": {"measurement": ["used_percent"], "resources": ["/", CACHE_DIR]},
                "mem": {"measurement": ["mem_used_percent"]},
            },
        },
        "logs": {"logs_collected": {"files": {"collect_list": files}}},
    }


def render_serving_user_data(spec: ServingNode) -> str:
    """Cloud-init user data: write the settings, unpack the files, run `serve.sh boot`."""
    args = runtime_docker_args(spec)
    check_runtime_args(args)
    files = {
        **serving_files(spec, args, "aws"),
        "cloudwatch-agent.json": json.dumps(cloudwatch_agent_config(spec)) + "\n",
    }
    text = boot_script(
        "#!/bin/bash\n"
        f"# aistack serving node: {spec.model_name} {spec.model_version} on {spec.runtime},\n"
        "# behind the nginx gateway. Rendered by aistack.aws.InferenceTier; documented in\n"
        "# aistack/aws/serving/serve.sh.\n"
        "set -euo pipefail\n"
        "umask 022\n",
        environment(spec),
        files,
    )
    size = len(text.encode("utf-8"))
    if size > USER_DATA_LIMIT_BYTES:
        raise ConfigError(
            f"the serving node's user data is {size} bytes; EC2 accepts at most "
            f"{USER_DATA_LIMIT_BYTES}.",
            field="runtimeArgs",
            fix="shorten runtimeArgs, or move long settings into the image.",
        )
    return text

"""The GCE startup script of a `gcp.InferenceTier` serving VM: one model version behind the
nginx gateway, the same serve.sh, node scripts and nginx.conf as an AWS serving node.

Reused, not copied: `aistack.node.serving` renders the settings, the model server's
`docker run` arguments and the archive; the scripts run with `AISTACK_CLOUD=gcp`, so their
`# [gcp]` blocks (kept here, dropped from AWS user data) use the metadata server, `gcloud
storage`, Artifact Registry's token login and the Ops Agent. The gateway is
`aistack.gateway.serving.serving_nginx_conf`, trusting X-Forwarded-For only from the
network's proxy-only subnet (where Envoy connects from).

What differs from AWS: no lifecycle hook (a VM whose gateway does not answer fails the load
balancer's health check, which is the gateway's health path, and gets no traffic), and the
watch stops the gateway when the model server dies, so the group's autohealing (the same
health check) recreates the VM.
"""

from __future__ import annotations

import json
from typing import Any

from aistack import node
from aistack.errors import ConfigError
from aistack.node import serving as shared
from aistack.node.serving import (
    INSTALL_DIR,
    ServingNode,
    boot_script,
    check_runtime_args,
    runtime_docker_args,
    serving_files,
    unpack_files,
)

__all__ = ["INSTALL_DIR", "ServingNode", "ops_agent_config", "render_serving_startup_script"]

LOG_DIR = "/var/log/aistack"


def ops_agent_config(spec: ServingNode) -> dict[str, Any]:
    """The Ops Agent config: aistack's and the gateway's log files under the tier's log name
    (the GPU metrics are the agent's defaults on a GPU VM, as in aistack.node)."""
    paths = [f"{LOG_DIR}/*.log"]
    log_dir = spec.gateway.log_dir
    if log_dir:
        paths.append(f"{log_dir}/error.log")
        if spec.request_logging != "none":
            paths.append(f"{log_dir}/access.log")
    receiver = spec.log_group
    return {
        "logging": {
            "receivers": {receiver: {"type": "files", "include_paths": paths}},
            "service": {"pipelines": {receiver: {"receivers": [receiver]}}},
        }
    }


def environment(spec: ServingNode, instance_group: str) -> dict[str, str]:
    env = shared.environment(spec)
    env.update(
        AISTACK_CLOUD="gcp",
        AISTACK_SCHEDULER="mig",
        AISTACK_INSTANCE_GROUP=instance_group,
        AISTACK_DATASET_URI=f"gs://{spec.models_bucket}/{spec.model_name}",
        # No lifecycle hook on GCP: the health check keeps a loading VM out.
        AISTACK_LIFECYCLE_HOOK="",
    )
    del env["AISTACK_CLOUDWATCH_CONFIG"]
    return env


def render_serving_startup_script(spec: ServingNode, *, instance_group: str) -> str:
    """A `startup-script` metadata value: settings, files, `serve.sh boot`."""
    args = runtime_docker_args(spec, cloud="gcp")
    check_runtime_args(args)
    files = {
        **serving_files(spec, args, "gcp"),
        "ops-agent.yaml": json.dumps(ops_agent_config(spec), indent=2) + "\n",
    }
    text = boot_script(
        "#!/bin/bash\n"
        f"# aistack serving VM: {spec.model_name} {spec.model_version} on {spec.runtime},\n"
        "# behind the nginx gateway. Rendered by aistack.gcp.InferenceTier; documented in\n"
        "# aistack/aws/serving/serve.sh (its # [gcp] blocks).\n"
        "set -euo pipefail\n"
        "umask 022\n"
        # Compute Engine runs the startup script at every boot; serve.sh boot is idempotent
        # (units are rewritten, a synced model version is a cache hit).
        "",
        environment(spec, instance_group),
        files,
    )
    size = len(text.encode("utf-8"))
    if size > node.STARTUP_SCRIPT_LIMIT_BYTES:
        raise ConfigError(
            f"the serving VM's startup script is {size} bytes; Compute Engine accepts at "
            f"most {node.STARTUP_SCRIPT_LIMIT_BYTES} in a metadata value.",
            field="runtimeArgs",
            fix="shorten runtimeArgs.",
        )
    return text


def unpack_startup_script(text: str) -> dict[str, str]:
    """The files inside a rendered startup script, by name (tests, reading a VM)."""
    return unpack_files(text)

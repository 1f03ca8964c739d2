"""GPU node bootstrap: bash scripts shipped as package data, rendered into cloud-init user data
(AWS) or a GCE startup script (GCP).

A training node (EC2 in an auto scaling group, an AWS Batch compute environment, or a GCE VM
in a managed instance group) runs `scripts/bootstrap.sh` at first boot. It starts three
guards that end the node on their own, so a node whose later steps fail still stops
billing: a hard wall-clock limit (T5), an idle watchdog (C5) and a spot-notice watcher that
signals the trainers that asked for it and flushes the last checkpoint (T1). It then hands
the CloudWatch agent (the Ops Agent on GCP) a config for GPU metrics and log shipping (T3,
T6), mounts the instance-store NVMe disks (local SSDs) as a cache and syncs the pinned
dataset version into it (D3).

Design rules:
- The scripts are the implementation; Python only validates settings and renders them.
  Each script documents its environment variables at the top and reads nothing else.
- Settings reach the node as one env file (`/etc/aistack/node.env`), every value quoted
  with `shlex.quote`, and are validated here first so a bad value fails at `pulumi up`,
  not on a node at 3 a.m.
- EC2 user data is limited to 16 KB, so the scripts travel as a deterministic gzip'd tar
  with their comments removed (the documented originals are `script(name)`); the same
  settings always give the same user data, so a preview shows no spurious change.
- One set of scripts serves both clouds (`AISTACK_CLOUD`). The GCP code sits between
  `# [gcp]` and `# [/gcp]` lines, which `render_user_data` drops: an AWS node gets exactly
  the scripts it got before GCP support. `render_startup_script` keeps them.

`config` holds the settings, `files` the packaged scripts and their archive, `agents` the
CloudWatch agent's and the Ops Agent's configs, `render` the boot scripts of both clouds;
`serving` is the serving node both clouds' inference tiers render.
"""

from aistack.node.agents import GPU_METRICS, cloudwatch_agent_config, ops_agent_config
from aistack.node.config import (
    CHECKPOINT_SIGNAL_ENV,
    CHECKPOINT_SIGNAL_LABEL,
    DEFAULT_GCP_LOG_NAME,
    DEFAULT_METRICS_NAMESPACE,
    ECS_AL2023_HOST_PACKAGES,
    REQUEUE_EXIT_CODE,
    NodeBootstrapConfig,
)
from aistack.node.files import FILES, SCRIPTS, script
from aistack.node.render import (
    STARTUP_SCRIPT_LIMIT_BYTES,
    USER_DATA_LIMIT_BYTES,
    render_startup_script,
    render_user_data,
)

__all__ = [
    "CHECKPOINT_SIGNAL_ENV",
    "CHECKPOINT_SIGNAL_LABEL",
    "DEFAULT_GCP_LOG_NAME",
    "DEFAULT_METRICS_NAMESPACE",
    "ECS_AL2023_HOST_PACKAGES",
    "FILES",
    "GPU_METRICS",
    "NodeBootstrapConfig",
    "REQUEUE_EXIT_CODE",
    "SCRIPTS",
    "STARTUP_SCRIPT_LIMIT_BYTES",
    "USER_DATA_LIMIT_BYTES",
    "cloudwatch_agent_config",
    "ops_agent_config",
    "render_startup_script",
    "render_user_data",
    "script",
]

"""Serving-node user data for `aws.InferenceTier`: one model version behind the nginx gateway.

A serving node runs `aistack/aws/serving/serve.sh` at first boot (documented there). This
module renders everything it reads, so a bad value fails at `pulumi up` rather than on a
node: the settings as one env file, the model server's `docker run` arguments (runtime.args:
image by digest, model read-only, bound to loopback), the gateway's nginx.conf (rendered by
`aistack.gateway` and adapted to sit behind the load balancer) and the CloudWatch agent
config. The node scripts of `aistack.node` that do the same work for training nodes are
reused as they are: `nvme-cache.sh` mounts the instance-store disks and `dataset-sync.sh`
copies the pinned model version onto them, keyed by version (D3).

Like the training bootstrap, the files travel as a deterministic gzip'd tar (EC2 user data
stops at 16 KB), and identical settings give identical user data.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import re
import shlex
import tarfile
from dataclasses import dataclass
from importlib import resources
from typing import Any

from aistack import node
from aistack.errors import AistackError, ConfigError
from aistack.gateway import GatewayConfig, required_directories
from aistack.gateway.serving import serving_nginx_conf

__all__ = [
    "CACHE_DIR",
    "LIFECYCLE_HOOK",
    "RUNTIME_HEALTH_PATHS",
    "RUNTIME_PORT",
    "ServingNode",
    "cloudwatch_agent_config",
    "model_dir",
    "render_serving_user_data",
    "runtime_docker_args",
    "serving_nginx_conf",
    "serving_script",
]

#: Loopback port every runtime listens on; only the gateway reaches it.
RUNTIME_PORT = 8000
#: Health path of each runtime's HTTP server.
RUNTIME_HEALTH_PATHS = {
    "vllm": "/health",
    "triton": "/v2/health/ready",
    "tensorrt-llm": "/health",
}
#: Launch lifecycle hook that holds a node out of its target group until it serves.
LIFECYCLE_HOOK = "aistack-model-ready"
#: Where the instance-store NVMe disks are mounted (a directory on the root volume without).
CACHE_DIR = "/mnt/nvme"
INSTALL_DIR = "/opt/aistack-serving"
ENV_FILE = "/etc/aistack/serving.env"
#: Files of aistack.node reused on serving nodes (lib.sh is sourced by all of them).
NODE_FILES = ("lib.sh", "nvme-cache.sh", "dataset-sync.sh")
SERVING_FILES = ("serve.sh",)
USER_DATA_LIMIT_BYTES = node.USER_DATA_LIMIT_BYTES
#: Logs the CloudWatch agent ships besides the model server's (which docker sends itself).
GATEWAY_LOGS = ("access.log", "error.log")

_ONE_LINE = re.compile(r"[\x20-\x7e]+")


@dataclass(frozen=True)
class ServingNode:
    """Everything one serving node of one model version needs, resolved to plain values."""

    tier: str
    region: str
    model_name: str
    model_version: str
    models_bucket: str
    runtime: str
    image: str
    runtime_args: tuple[str, ...]
    gpu_count: int
    log_group: str
    metrics_namespace: str
    quality_metric: str
    gateway: GatewayConfig
    gateway_image: str | None
    request_logging: str
    trusted_proxies: tuple[str, ...]
    model_load_timeout_seconds: int


def serving_script(name: str, cloud: str = "aws") -> str:
    """The text of a packaged serving script (one of SERVING_FILES), with its comments, as
    `cloud`'s nodes get it: for "aws" without the `# [gcp]` blocks (as aistack.node does),
    so AWS user data stays what it was before gcp.InferenceTier."""
    if name not in SERVING_FILES:
        raise AistackError(
            f"no serving script named {name!r}; the packaged ones are {SERVING_FILES}"
        )
    text = resources.files("aistack.aws").joinpath("serving", name).read_text(encoding="utf-8")
    return node._without_gcp(text) if cloud == "aws" else text


def model_dir(model_name: str, version: str) -> str:
    """Where dataset-sync.sh puts the model on the node: <cache>/datasets/<name>/<version>."""
    return f"{CACHE_DIR}/datasets/{model_name}/{version}"


def runtime_docker_args(spec: ServingNode, cloud: str = "aws") -> list[str]:
    """`docker run` arguments of the model server: options, image, then the runtime's own.

    The server listens inside its container on every address, and docker publishes that
    port on the node's loopback only: the gateway is the one way in (S3, S4). The model is
    mounted read-only; the environment tells the serving code what to publish for G4.
    """
    container_model = f"/models/{spec.model_name}"
    options = [
        "--gpus=all",
        # NCCL between tensor-parallel workers needs more shared memory than docker's 64 MB.
        "--ipc=host",
        f"--publish=127.0.0.1:{RUNTIME_PORT}:{RUNTIME_PORT}",
        f"--volume={model_dir(spec.model_name, spec.model_version)}:{container_model}:ro",
        f"--env=AISTACK_MODEL_NAME={spec.model_name}",
        f"--env=AISTACK_MODEL_VERSION={spec.model_version}",
        f"--env=AISTACK_METRICS_NAMESPACE={spec.metrics_namespace}",
        f"--env=AISTACK_QUALITY_METRIC={spec.quality_metric}",
        f"--env=AWS_REGION={spec.region}",
        f"--env=AWS_DEFAULT_REGION={spec.region}",
        "--log-driver=awslogs",
        f"--log-opt=awslogs-group={spec.log_group}",
        f"--log-opt=awslogs-region={spec.region}",
        "--stop-timeout=30",
    ]
    if cloud == "gcp":
        # docker's gcplogs driver writes to Cloud Logging under the VM's project and
        # instance, read from the metadata server (docker docs, "Google Cloud Logging
        # driver").
        options[-6:] = [
            f"--env=AISTACK_REGION={spec.region}",
            "--log-driver=gcplogs",
            "--stop-timeout=30",
        ]
    tp = str(spec.gpu_count)
    command = {
        "vllm": [
            "--model", container_model, "--served-model-name", spec.model_name,
            "--host", "0.0.0.0", "--port", str(RUNTIME_PORT), "--tensor-parallel-size", tp,
        ],
        "triton": [
            "tritonserver", f"--model-repository={container_model}",
            f"--http-port={RUNTIME_PORT}", "--grpc-port=8001", "--metrics-port=8002",
        ],
        "tensorrt-llm": [
            "trtllm-serve", container_model, "--host", "0.0.0.0",
            "--port", str(RUNTIME_PORT), "--tp_size", tp,
        ],
    }[spec.runtime]  # fmt: skip
    return [*options, spec.image, *command, *spec.runtime_args]


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


def environment(spec: ServingNode) -> dict[str, str]:
    """The settings serve.sh and the reused node scripts read, as written to the env file."""
    gateway = spec.gateway
    cache_mb = (gateway.cache_max_size_mb + gateway.cache_max_size_mb // 10 + 16) * int(
        gateway.cache_enabled
    )
    return {
        "AISTACK_REGION": spec.region,
        "AISTACK_SCHEDULER": "asg",
        "AISTACK_CACHE_DIR": CACHE_DIR,
        "AISTACK_DATASET_URI": f"s3://{spec.models_bucket}/{spec.model_name}",
        "AISTACK_DATASET_VERSION": spec.model_version,
        "AISTACK_DATASET_NAME": spec.model_name,
        "AISTACK_RUNTIME_IMAGE": spec.image,
        "AISTACK_RUNTIME_PORT": str(RUNTIME_PORT),
        "AISTACK_RUNTIME_HEALTH_PATH": RUNTIME_HEALTH_PATHS[spec.runtime],
        "AISTACK_GATEWAY_IMAGE": spec.gateway_image or "",
        "AISTACK_GATEWAY_CONF": f"{INSTALL_DIR}/nginx.conf",
        "AISTACK_GATEWAY_PORT": str(gateway.listen_port),
        "AISTACK_GATEWAY_HEALTH_PATH": gateway.health_path,
        "AISTACK_GATEWAY_DIRS": " ".join(
            # serve.sh makes the cache directory itself (a tmpfs), so its parent needs
            # neither creating nor mounting into a gateway container.
            d
            for d in required_directories(gateway)
            if d != gateway.cache_dir.rsplit("/", 1)[0]
        ),
        "AISTACK_GATEWAY_CACHE_DIR": gateway.cache_dir,
        "AISTACK_GATEWAY_CACHE_MB": str(cache_mb),
        "AISTACK_LOG_GROUP": spec.log_group,
        "AISTACK_CLOUDWATCH_CONFIG": f"{INSTALL_DIR}/cloudwatch-agent.json",
        "AISTACK_LIFECYCLE_HOOK": LIFECYCLE_HOOK,
        "AISTACK_MODEL_LOAD_TIMEOUT_SECONDS": str(spec.model_load_timeout_seconds),
    }


def render_serving_user_data(spec: ServingNode) -> str:
    """Cloud-init user data: write the settings, unpack the files, run `serve.sh boot`."""
    args = runtime_docker_args(spec)
    for arg in args:
        if not _ONE_LINE.fullmatch(arg):
            raise ConfigError(
                f"{arg!r} is not one line of printable ASCII.",
                field="runtimeArgs",
                fix="pass each argument as its own list item, without line breaks.",
            )
    files = {
        **{name: _strip_comments(node.script(name)) for name in NODE_FILES},
        **{name: _strip_comments(serving_script(name)) for name in SERVING_FILES},
        # Comments are for people reading `render_nginx_conf`; user data has 16 KB.
        "nginx.conf": _strip_comments(
            serving_nginx_conf(
                spec.gateway,
                request_logging=spec.request_logging,
                trusted_proxies=spec.trusted_proxies,
            )
        ),
        "runtime.args": "".join(f"{arg}\n" for arg in args),
        "cloudwatch-agent.json": json.dumps(cloudwatch_agent_config(spec)) + "\n",
    }
    env_lines = "".join(f"{k}={shlex.quote(v)}\n" for k, v in environment(spec).items())
    archive = base64.encodebytes(_archive(files)).decode("ascii")
    text = (
        "#!/bin/bash\n"
        f"# aistack serving node: {spec.model_name} {spec.model_version} on {spec.runtime},\n"
        "# behind the nginx gateway. Rendered by aistack.aws.InferenceTier; documented in\n"
        "# aistack/aws/serving/serve.sh.\n"
        "set -euo pipefail\n"
        "umask 022\n"
        f"mkdir -p {INSTALL_DIR} {ENV_FILE.rsplit('/', 1)[0]}\n"
        f"cat >{ENV_FILE} <<'AISTACK_ENV'\n"
        f"{env_lines}"
        "AISTACK_ENV\n"
        f"base64 -d <<'AISTACK_FILES' | tar -xzf - -C {INSTALL_DIR}\n"
        f"{archive}"
        "AISTACK_FILES\n"
        f"export AISTACK_ENV_FILE={ENV_FILE}\n"
        f"exec bash {INSTALL_DIR}/serve.sh boot\n"
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


def unpack_user_data(text: str) -> dict[str, str]:
    """The files inside rendered user data, by name: for tests and for reading a node."""
    encoded = text.split("<<'AISTACK_FILES'", 1)[1].split("\n", 1)[1].split("AISTACK_FILES\n")[0]
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(encoded)), mode="r:gz") as tar:
        return {
            member.name: tar.extractfile(member).read().decode("utf-8")  # type: ignore[union-attr]
            for member in tar.getmembers()
        }


def _strip_comments(text: str) -> str:
    """`text` (shell or nginx.conf) without comment-only and blank lines; a shebang stays.

    Safe for these files: no heredoc or multi-line string in them has lines that start with
    '#', and the only blank lines inside one (serve.sh's unit file) may go.
    """
    lines = text.splitlines()
    kept = [lines[0]] if lines and lines[0].startswith("#!") else []
    kept += [
        line for line in lines[len(kept) :] if line.strip() and not line.lstrip().startswith("#")
    ]
    return "\n".join(kept) + "\n"


def _archive(files: dict[str, str]) -> bytes:
    """`files` as a gzip'd tar, byte-identical for identical contents."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, text in files.items():
            data = text.encode("ascii")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755 if name.endswith(".sh") and name != "lib.sh" else 0o644
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), compresslevel=9, mtime=0)

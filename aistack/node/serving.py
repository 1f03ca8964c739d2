"""A serving node of either cloud: one model version behind the nginx gateway.

`aws.InferenceTier` (EC2 user data) and `gcp.InferenceTier` (a GCE startup script) render
the same node: `serve.sh` at first boot (documented there), the settings as one env file,
the model server's `docker run` arguments (runtime.args: image by digest, model read-only,
bound to loopback), the gateway's nginx.conf (`aistack.gateway.serving`) and the node
scripts of `aistack.node` that training nodes run too (`nvme-cache.sh` mounts the local
disks and `dataset-sync.sh` copies the pinned model version onto them, keyed by version:
D3). Everything is rendered before any node exists, so a bad value fails at `pulumi up`.

The files travel as a deterministic gzip'd tar (EC2 user data stops at 16 KB), so identical
settings give an identical boot script. What each cloud adds (its agent's config, its boot
script's limit, its metadata) lives in `aistack.aws.inference.node` and
`aistack.gcp._inference_node`.
"""

from __future__ import annotations

import base64
import gzip
import io
import re
import shlex
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Literal

from aistack.errors import AistackError, ConfigError
from aistack.gateway import GatewayConfig, required_directories
from aistack.gateway.serving import serving_nginx_conf
from aistack.node.files import _without_gcp, script

__all__ = [
    "CACHE_DIR",
    "ENV_FILE",
    "INSTALL_DIR",
    "LIFECYCLE_HOOK",
    "NODE_FILES",
    "RUNTIME_HEALTH_PATHS",
    "RUNTIME_PORT",
    "SERVING_FILES",
    "ServingNode",
    "archive",
    "boot_script",
    "check_runtime_args",
    "environment",
    "model_dir",
    "runtime_docker_args",
    "serving_files",
    "serving_script",
    "strip_comments",
    "unpack_files",
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
    # serve.sh stays in aistack/aws/serving/ for now: every rendered boot script names that
    # path in its header, so moving it changes every serving node's user data.
    text = resources.files("aistack.aws").joinpath("serving", name).read_text(encoding="utf-8")
    return _without_gcp(text) if cloud == "aws" else text


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
        "AISTACK_GATEWAY_TLS_CERT": gateway.tls_certificate or "",
        "AISTACK_GATEWAY_TLS_KEY": gateway.tls_certificate_key or "",
        "AISTACK_GATEWAY_CACHE_MB": str(cache_mb),
        "AISTACK_LOG_GROUP": spec.log_group,
        "AISTACK_CLOUDWATCH_CONFIG": f"{INSTALL_DIR}/cloudwatch-agent.json",
        "AISTACK_LIFECYCLE_HOOK": LIFECYCLE_HOOK,
        "AISTACK_MODEL_LOAD_TIMEOUT_SECONDS": str(spec.model_load_timeout_seconds),
    }


def check_runtime_args(args: Sequence[str]) -> None:
    """Each `docker run` argument is one line of printable ASCII: runtime.args holds one a
    line, and the boot script is a heredoc."""
    for arg in args:
        if not _ONE_LINE.fullmatch(arg):
            raise ConfigError(
                f"{arg!r} is not one line of printable ASCII.",
                field="runtimeArgs",
                fix="pass each argument as its own list item, without line breaks.",
            )


def serving_files(
    spec: ServingNode, args: Sequence[str], cloud: Literal["aws", "gcp"]
) -> dict[str, str]:
    """The files every serving node unpacks, as `cloud`'s nodes get them (without comments:
    they are for people reading the sources, and user data has 16 KB)."""
    return {
        **{name: strip_comments(script(name, cloud)) for name in NODE_FILES},
        **{name: strip_comments(serving_script(name, cloud=cloud)) for name in SERVING_FILES},
        "nginx.conf": strip_comments(
            serving_nginx_conf(
                spec.gateway,
                request_logging=spec.request_logging,
                trusted_proxies=spec.trusted_proxies,
            )
        ),
        "runtime.args": "".join(f"{arg}\n" for arg in args),
    }


def boot_script(prelude: str, env: dict[str, str], files: dict[str, str]) -> str:
    """The boot script after its `prelude` (shebang, header, shell options): write the
    settings, unpack the files, run `serve.sh boot`."""
    env_lines = "".join(f"{k}={shlex.quote(v)}\n" for k, v in env.items())
    packed = base64.encodebytes(archive(files)).decode("ascii")
    return (
        prelude + f"mkdir -p {INSTALL_DIR} {ENV_FILE.rsplit('/', 1)[0]}\n"
        f"cat >{ENV_FILE} <<'AISTACK_ENV'\n"
        f"{env_lines}"
        "AISTACK_ENV\n"
        f"base64 -d <<'AISTACK_FILES' | tar -xzf - -C {INSTALL_DIR}\n"
        f"{packed}"
        "AISTACK_FILES\n"
        f"export AISTACK_ENV_FILE={ENV_FILE}\n"
        f"exec bash {INSTALL_DIR}/serve.sh boot\n"
    )


def unpack_files(text: str) -> dict[str, str]:
    """The files inside a rendered boot script (user data or startup script), by name: for
    tests and for reading a node."""
    encoded = text.split("<<'AISTACK_FILES'", 1)[1].split("\n", 1)[1].split("AISTACK_FILES\n")[0]
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(encoded)), mode="r:gz") as tar:
        return {
            member.name: tar.extractfile(member).read().decode("utf-8")  # type: ignore[union-attr]
            for member in tar.getmembers()
        }


def strip_comments(text: str) -> str:
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


def archive(files: dict[str, str]) -> bytes:
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

"""The boot scripts of a training node: cloud-init user data on AWS (`render_user_data`),
a GCE startup script on GCP (`render_startup_script`).

Both write the settings to one env file (`/etc/aistack/node.env`), every value quoted with
`shlex.quote`, unpack the node files and exec `bootstrap.sh`; each refuses a result its
cloud would not accept.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
from collections.abc import Mapping
from typing import Any

from aistack.config import parse
from aistack.errors import ConfigError
from aistack.node.agents import ops_agent_config
from aistack.node.config import _MIME_BOUNDARY, _PATH, NodeBootstrapConfig
from aistack.node.files import _scripts_archive

__all__ = [
    "STARTUP_SCRIPT_LIMIT_BYTES",
    "USER_DATA_LIMIT_BYTES",
    "render_startup_script",
    "render_user_data",
]

#: EC2 refuses user data larger than this, counted before base64 encoding.
USER_DATA_LIMIT_BYTES = 16 * 1024
#: Compute Engine refuses a metadata value (the startup-script) larger than this: "their
#: size must be less than or equal to 262144 bytes (256 KiB)" (compute/docs/reference/rest/
#: v1/Metadata, items[].value); all keys and values together stay under 512 KB.
STARTUP_SCRIPT_LIMIT_BYTES = 262144


def render_startup_script(
    config: NodeBootstrapConfig | Mapping[str, Any],
    *,
    install_dir: str = "/opt/aistack",
    env_file: str = "/etc/aistack/node.env",
) -> str:
    """A GCE `startup-script` metadata value that installs the node scripts and runs
    bootstrap.sh on a GCP node (`config.cloud` 'gcp').

    Like `render_user_data`: it writes `config` to `env_file`, unpacks the scripts (with
    their GCP blocks) and the Ops Agent config (`ops_agent_config`, as JSON, which YAML
    1.2 reads as is) into `install_dir` and runs `bootstrap.sh`. Compute Engine runs a
    startup script at every boot, not only the first; bootstrap.sh is idempotent (running
    guards are kept, a mounted cache is left alone, a synced dataset version is a cache
    hit). Raises ConfigError for invalid settings, or past the metadata value limit
    (`STARTUP_SCRIPT_LIMIT_BYTES`).
    """
    config = parse(NodeBootstrapConfig, config)
    if config.cloud != "gcp":
        raise ConfigError(
            "a startup script is for GCP nodes.",
            field="cloud",
            fix="use render_user_data for AWS, or set cloud 'gcp'.",
        )
    extra = {"ops-agent.yaml": json.dumps(ops_agent_config(config), indent=2) + "\n"}
    text = _bootstrap_script(
        config,
        install_dir=install_dir,
        env_file=env_file,
        archive=_scripts_archive("gcp", extra),
        renderer="render_startup_script",
    )
    size = len(text.encode("utf-8"))
    if size > STARTUP_SCRIPT_LIMIT_BYTES:
        raise ConfigError(
            f"the rendered startup script is {size} bytes; Compute Engine accepts at most "
            f"{STARTUP_SCRIPT_LIMIT_BYTES} in a metadata value.",
            field="startup_script",
            fix="shorten the longest settings.",
        )
    return text


def render_user_data(
    config: NodeBootstrapConfig | Mapping[str, Any],
    *,
    multipart: bool = False,
    install_dir: str = "/opt/aistack",
    env_file: str = "/etc/aistack/node.env",
    ecs_config: Mapping[str, str] | None = None,
) -> str:
    """Cloud-init user data that installs the node scripts and runs bootstrap.sh.

    The result is a shell script: it writes `config` to `env_file`, unpacks the scripts
    into `install_dir` and runs `bootstrap.sh`. With `multipart=True` the script is wrapped
    in the MIME multi-part document that AWS Batch launch templates require. `ecs_config`
    lines are appended to /etc/ecs/ecs.config first, before the ECS agent starts (Batch
    hosts: Spot draining, the container stop timeout). Raises
    ConfigError naming the field for invalid settings, or when the result would exceed
    EC2's 16 KB user-data limit.
    """
    config = parse(NodeBootstrapConfig, config)
    if config.cloud != "aws":
        raise ConfigError(
            "user data is for AWS nodes.",
            field="cloud",
            fix="use render_startup_script for a GCP node.",
        )
    for key, value in (ecs_config or {}).items():
        if not re.fullmatch(r"ECS_[A-Z0-9_]+", key) or not re.fullmatch(r"[\w.:/-]+", value):
            raise ConfigError(
                f"{key}={value!r} is not an ECS agent setting.",
                field="ecs_config",
                fix="use ECS_* names and plain values.",
            )
    ecs_lines = "".join(
        f"echo {shlex.quote(f'{key}={value}')} >>/etc/ecs/ecs.config\n"
        for key, value in (ecs_config or {}).items()
    )
    if ecs_lines:
        ecs_lines = "mkdir -p /etc/ecs\n" + ecs_lines
    text = _bootstrap_script(
        config,
        install_dir=install_dir,
        env_file=env_file,
        archive=_scripts_archive("aws"),
        renderer="render_user_data",
        preamble=ecs_lines,
    )
    if multipart:
        text = (
            "MIME-Version: 1.0\n"
            f'Content-Type: multipart/mixed; boundary="{_MIME_BOUNDARY}"\n'
            "\n"
            f"--{_MIME_BOUNDARY}\n"
            'Content-Type: text/x-shellscript; charset="us-ascii"\n'
            "MIME-Version: 1.0\n"
            "Content-Transfer-Encoding: 7bit\n"
            "\n"
            f"{text}\n"  # the line break before a boundary belongs to the boundary
            f"--{_MIME_BOUNDARY}--\n"
        )
    size = len(text.encode("utf-8"))
    if size > USER_DATA_LIMIT_BYTES:
        raise ConfigError(
            f"the rendered user data is {size} bytes; EC2 accepts at most {USER_DATA_LIMIT_BYTES}.",
            field="user_data",
            fix="shorten the longest settings, e.g. move a long flush command into a script.",
        )
    return text


def _bootstrap_script(
    config: NodeBootstrapConfig,
    *,
    install_dir: str,
    env_file: str,
    archive: bytes,
    renderer: str,
    preamble: str = "",
) -> str:
    """The shell script both clouds boot with: env file, scripts, exec bootstrap.sh."""
    for field, path in (("install_dir", install_dir), ("env_file", env_file)):
        if not _PATH.fullmatch(path) or ".." in path.split("/"):
            raise ConfigError(
                f"{path!r} is not an absolute path.",
                field=field,
                fix="use letters, digits, '.', '_', '-' and '/'.",
            )
    env_lines = "".join(
        f"{key}={shlex.quote(value)}\n" for key, value in config.environment().items()
    )
    env_dir = env_file.rsplit("/", 1)[0] or "/"
    encoded = base64.encodebytes(archive).decode("ascii")
    return (
        "#!/bin/bash\n"
        f"# aistack node bootstrap, rendered by aistack.node.{renderer}: NVMe cache and\n"
        "# dataset sync (D3), idle shutdown (C5), checkpoint on interruption (T1), GPU metrics\n"
        "# and log shipping (T3, T6), wall-clock limit (T5). Documented scripts: the aistack\n"
        "# package, aistack/node/scripts/.\n"
        "set -euo pipefail\n"
        "umask 022\n"
        f"{preamble}"
        f"mkdir -p {shlex.quote(install_dir)} {shlex.quote(env_dir)}\n"
        f"cat >{shlex.quote(env_file)} <<'AISTACK_ENV'\n"
        f"{env_lines}"
        "AISTACK_ENV\n"
        f"base64 -d <<'AISTACK_SCRIPTS' | tar -xzf - -C {shlex.quote(install_dir)}\n"
        f"{encoded}"
        "AISTACK_SCRIPTS\n"
        f"export AISTACK_ENV_FILE={shlex.quote(env_file)}\n"
        f"exec bash {shlex.quote(install_dir + '/bootstrap.sh')}\n"
    )

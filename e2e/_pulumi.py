"""An example stack's program run by the real Pulumi CLI, against a real cluster.

The Automation API runs the stack's `__main__.py` as an inline program: the CLI connects to
the language runtime the Automation API serves in this process, so no Python language host
plugin is needed (github.com/pulumi/pulumi serves it from no module path). Everything else
is what `pulumi up` does: the file backend (`pulumi login --local` into a temporary
directory), a passphrase secrets provider, and the Kubernetes provider built from source,
found on PATH.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from pathlib import Path
from typing import Any

import yaml
from pulumi import automation as auto

from e2e._cluster import Cluster

REPO = Path(__file__).resolve().parents[1]
PASSPHRASE = "aistack-e2e"  # noqa: S105 - a throwaway state's passphrase


def _config(stack_dir: Path, stack: str) -> dict[str, auto.ConfigValue]:
    """The stack file's config as `pulumi config set` would store it: structured values
    as JSON, which `Config.require_object` reads."""
    values: dict[str, Any] = yaml.safe_load((stack_dir / f"Pulumi.{stack}.yaml").read_text())[
        "config"
    ]
    return {
        key: auto.ConfigValue(value=value if isinstance(value, str) else json.dumps(value))
        for key, value in values.items()
    }


def _program(stack_dir: Path) -> auto.PulumiFn:
    def run() -> None:
        sys.path.insert(0, str(stack_dir))
        try:
            runpy.run_path(str(stack_dir / "__main__.py"), run_name="__main__")
        finally:
            sys.path.remove(str(stack_dir))

    return run


def open_stack(stack_dir: Path, cluster: Cluster, state: Path, *, stack: str = "dev") -> auto.Stack:
    """STACK_DIR's program as stack STACK, its config from Pulumi.STACK.yaml, its cluster
    CLUSTER (the stack's kubeconfig and context replaced, nothing else)."""
    project = yaml.safe_load((stack_dir / "Pulumi.yaml").read_text())
    state.mkdir(parents=True, exist_ok=True)
    options = auto.LocalWorkspaceOptions(
        work_dir=str(state),
        pulumi_home=str(state / ".pulumi-home"),
        pulumi_command=auto.PulumiCommand(root=str(cluster.parts.pulumi)),
        env_vars={
            "PATH": cluster.parts.path,
            "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DIY_BACKEND_NO_LEGACY_WARNING": "true",
            # No plugin may be fetched: what the engine lacks must fail, not download.
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "HOME": os.environ.get("HOME", str(state)),
        },
        project_settings=auto.ProjectSettings(
            name=project["name"],
            runtime="python",
            backend=auto.ProjectBackend(url=f"file://{state / 'backend'}"),
        ),
        secrets_provider="passphrase",
    )
    (state / "backend").mkdir(exist_ok=True)
    workspace_stack = auto.create_or_select_stack(
        stack, project["name"], _program(stack_dir), opts=options
    )
    config = _config(stack_dir, stack)
    config["kubernetes:kubeconfig"] = auto.ConfigValue(value=cluster.kubeconfig())
    config["kubernetes:context"] = auto.ConfigValue(value="e2e")
    workspace_stack.set_all_config(config)
    return workspace_stack

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
import subprocess
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


def _cli_env(cluster: Cluster, state: Path, plugins: Path | None) -> dict[str, str]:
    path = cluster.parts.path if plugins is None else f"{plugins}{os.pathsep}{cluster.parts.path}"
    return {
        "PATH": path,
        "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DIY_BACKEND_NO_LEGACY_WARNING": "true",
        # No plugin may be fetched: what the engine lacks must fail, not download.
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "HOME": os.environ.get("HOME", str(state)),
    }


def _options(
    cluster: Cluster, state: Path, work_dir: Path, project: auto.ProjectSettings | None = None,
    plugins: Path | None = None,
) -> auto.LocalWorkspaceOptions:  # fmt: skip
    state.mkdir(parents=True, exist_ok=True)
    (state / "backend").mkdir(exist_ok=True)
    env = _cli_env(cluster, state, plugins)
    env["PULUMI_BACKEND_URL"] = f"file://{state / 'backend'}"
    return auto.LocalWorkspaceOptions(
        work_dir=str(work_dir),
        pulumi_home=str(state / ".pulumi-home"),
        pulumi_command=auto.PulumiCommand(root=str(cluster.parts.pulumi)),
        env_vars=env,
        project_settings=project,
        secrets_provider="passphrase",
    )


def _point_at(workspace_stack: auto.Stack, cluster: Cluster) -> None:
    workspace_stack.set_all_config(
        {
            "kubernetes:kubeconfig": auto.ConfigValue(value=cluster.kubeconfig()),
            "kubernetes:context": auto.ConfigValue(value="e2e"),
        }
    )


def open_stack(stack_dir: Path, cluster: Cluster, state: Path, *, stack: str = "dev") -> auto.Stack:
    """STACK_DIR's program as stack STACK, its config from Pulumi.STACK.yaml, its cluster
    CLUSTER (the stack's kubeconfig and context replaced, nothing else)."""
    project = yaml.safe_load((stack_dir / "Pulumi.yaml").read_text())
    settings = auto.ProjectSettings(
        name=project["name"],
        runtime="python",
        backend=auto.ProjectBackend(url=f"file://{state / 'backend'}"),
    )
    workspace_stack = auto.create_or_select_stack(
        stack, project["name"], _program(stack_dir), opts=_options(cluster, state, state, settings)
    )
    workspace_stack.set_all_config(_config(stack_dir, stack))
    _point_at(workspace_stack, cluster)
    return workspace_stack


def open_project(
    project_dir: Path, cluster: Cluster, state: Path, plugins: Path, *, stack: str = "dev"
) -> auto.Stack:
    """The Pulumi project in PROJECT_DIR (a YAML program: the real YAML language host runs
    it), with the plugins in PLUGINS on PATH, against CLUSTER."""
    workspace_stack = auto.create_or_select_stack(
        stack,
        work_dir=str(project_dir),
        opts=_options(cluster, state, project_dir, plugins=plugins),
    )
    _point_at(workspace_stack, cluster)
    return workspace_stack


def cli(cluster: Cluster, state: Path, *args: str) -> str:
    """The Pulumi CLI outside a stack (`pulumi package get-schema ...`); its stdout."""
    done = subprocess.run(  # noqa: S603 - our own built CLI
        [str(cluster.parts.pulumi / "bin" / "pulumi"), *args],
        env={**_cli_env(cluster, state, None), "PULUMI_HOME": str(state / ".pulumi-home")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode:
        raise AssertionError(f"pulumi {' '.join(args)}: {done.stderr}")
    return done.stdout

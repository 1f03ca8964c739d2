"""Run a Pulumi program in-process against the simulated cloud and record what it does.

Each run is isolated: a fresh event loop, freshly reset Pulumi settings, its own config
and its own monitor, so one run never sees another's resources or config.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import runpy
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import empty_pb2
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc, settings
from pulumi.runtime.config import set_all_config
from pulumi.runtime.stack import run_in_stack
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from aistack.engine.cloud import SimulatedCloud
from aistack.engine.graph import Resource, StackGraph
from aistack.errors import ConfigError

__all__ = ["run", "run_project", "load_stack_config", "read_project"]

Program = Callable[[], Any]


def normalise(value: Any) -> Any:
    """Plain data, as a provider would see it: protobuf carries every number as a float
    (whole numbers back to ints), and assets become a description of what they hold."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, pulumi.asset.AssetArchive):
        return {"archive": {name: normalise(item) for name, item in value.assets.items()}}
    if isinstance(value, pulumi.asset.FileAsset | pulumi.asset.FileArchive):
        return {"path": str(value.path)}
    if isinstance(value, pulumi.asset.StringAsset):
        return {"text": value.text}
    if isinstance(value, pulumi.asset.RemoteAsset | pulumi.asset.RemoteArchive):
        return {"uri": value.uri}
    if isinstance(value, dict):
        return {key: normalise(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [normalise(item) for item in value]
    return value


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """The mocks monitor, plus a record of every registration's tree and DAG edges."""

    def __init__(self, cloud: SimulatedCloud) -> None:
        super().__init__(cloud)
        self.cloud = cloud
        self.records: list[Resource] = []
        self.outputs_by_urn: dict[str, dict[str, Any]] = {}
        self.root_urn = ""

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        _ensure_event_loop()
        inputs = normalise(rpc.deserialize_properties(request.object))
        response = super().RegisterResource(request)
        if request.type.startswith("pulumi:providers:"):
            # Resources refer to their provider as "urn::id"; remembering its inputs lets
            # invokes and ARNs use the provider's region and project.
            self.cloud.providers[f"{response.urn}::{response.id}"] = inputs
        if request.type == "pulumi:pulumi:Stack":
            self.root_urn = response.urn
            return response
        registration = self.resources[response.urn]
        self.records.append(
            Resource(
                type=request.type,
                name=request.name,
                urn=response.urn,
                parent=request.parent or None,
                dependencies=tuple(dict.fromkeys(request.dependencies)),
                inputs=inputs,
                outputs=normalise(dict(registration.state)),
                custom=bool(request.custom),
                id=registration.id or "",
                provider=request.provider,
                protect=bool(request.protect),
                retain_on_delete=bool(request.retainOnDelete),
                property_dependencies={
                    key: tuple(deps.urns) for key, deps in request.propertyDependencies.items()
                },
            )
        )
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        _ensure_event_loop()
        outputs = rpc.deserialize_properties(request.outputs)
        self.outputs_by_urn[request.urn] = normalise(dict(outputs))
        return empty_pb2.Empty()


def _config_map(project: str, config: Mapping[str, Any] | None) -> dict[str, str]:
    """Pulumi's flat config map: namespaced keys, structured values as JSON strings."""
    flat: dict[str, str] = {}
    for key, value in (config or {}).items():
        full_key = key if ":" in key else f"{project}:{key}"
        flat[full_key] = value if isinstance(value, str) else json.dumps(value)
    return flat


def run(
    program: Program,
    *,
    config: Mapping[str, Any] | None = None,
    project: str = "aistack",
    stack: str = "dev",
) -> StackGraph:
    """Run `program` (a function that declares resources) and return what it registered.

    `config` keys without a namespace belong to `project`; structured values (dicts,
    lists) are passed the way the Pulumi CLI passes them, as JSON.
    """
    flat_config = _config_map(project, config)
    cloud = SimulatedCloud(flat_config)
    monitor = RecordingMonitor(cloud)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        settings.reset_options(project=project, stack=stack, preview=False)
        set_all_config(flat_config, [])
        # What pulumi.runtime.set_mocks does, minus the empty root stack it registers for
        # unit tests: the program runs in its own stack, so exports reach the monitor
        # exactly once, as under the CLI.
        settings.configure(
            pulumi_mocks.MockSettings(
                monitor=monitor,
                monitor_features=set(monitor.GetDeploymentInfo(None).supportedFeatures),
                engine=pulumi_mocks.MockEngine(_quiet_logger()),
                project=project,
                stack=stack,
                dry_run=False,
                organization=None,
                callbacks=None,
            )
        )
        _sync_await(run_in_stack(program))
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        asyncio.set_event_loop(None)
        settings.reset_options()
        set_all_config({}, [])
    return StackGraph(
        project=project,
        stack=stack,
        resources=list(monitor.records),
        stack_outputs=monitor.outputs_by_urn.get(monitor.root_urn, {}),
        config=flat_config,
        root_urn=monitor.root_urn,
        registered_outputs={
            urn: outputs
            for urn, outputs in monitor.outputs_by_urn.items()
            if urn != monitor.root_urn
        },
    )


def _quiet_logger() -> logging.Logger:
    logger = logging.getLogger("aistack.engine.pulumi")
    logger.setLevel(logging.WARNING)
    return logger


def read_project(path: str | Path) -> tuple[Path, dict[str, Any]]:
    """The project directory and its parsed `Pulumi.yaml`."""
    import yaml

    directory = Path(path).resolve()
    if directory.is_file():
        directory = directory.parent
    project_file = directory / "Pulumi.yaml"
    if not project_file.exists():
        raise ConfigError(
            f"no Pulumi.yaml in {directory}",
            field="path",
            fix="point at a Pulumi project directory (one holding Pulumi.yaml).",
        )
    return directory, yaml.safe_load(project_file.read_text()) or {}


def load_stack_config(directory: Path, project: str, stack: str) -> dict[str, Any]:
    """The `config:` block of `Pulumi.<stack>.yaml`, values kept structured."""
    import yaml

    stack_file = directory / f"Pulumi.{stack}.yaml"
    if not stack_file.exists():
        return {}
    document = yaml.safe_load(stack_file.read_text()) or {}
    config = document.get("config") or {}
    return {key if ":" in key else f"{project}:{key}": value for key, value in config.items()}


def run_project(path: str | Path, stack: str = "dev") -> StackGraph:
    """Run the Pulumi project at `path` (honouring `main:`) with `Pulumi.<stack>.yaml`."""
    directory, project_doc = read_project(path)
    project = str(project_doc.get("name") or directory.name)
    main = directory / str(project_doc.get("main") or ".")
    entry = main / "__main__.py" if main.is_dir() else main
    if not entry.exists():
        raise ConfigError(
            f"the project's program {entry} does not exist",
            field="Pulumi.yaml main",
            fix="set `main:` to the directory holding __main__.py.",
        )
    config = load_stack_config(directory, project, stack)
    with _on_sys_path(entry.parent):
        return run(
            lambda: runpy.run_path(str(entry), run_name="__main__"),
            config=config,
            project=project,
            stack=stack,
        )


@contextlib.contextmanager
def _on_sys_path(directory: Path) -> Iterator[None]:
    sys.path.insert(0, str(directory))
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(directory))

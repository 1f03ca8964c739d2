"""The component package (components/) through the real Pulumi CLI: the provider process
the engine starts serves the schema we commit, and a Pulumi YAML program, run by the real
YAML language host, builds through it the resources the package builds offline, then
deploys them to the API server and destroys them.

The engine starts the provider as a plugin on PATH (pulumi-resource-aistack, running
components/__main__.py): a team's `pulumi package add` runs the same directory through
the Python language host instead, which the module proxy does not serve (docs/e2e.md).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi import automation as auto

from aistack import engine
from e2e._cluster import Cluster
from e2e._pulumi import cli, open_project
from tests.components import yaml_program

# The package's modules importable as its provider process has them (components/ first).
from tests.components.conftest import COMPONENTS_DIR as COMPONENTS

EXAMPLE = COMPONENTS / "examples" / "yaml-kubernetes" / "Pulumi.yaml"


@pytest.fixture(scope="module")
def plugins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with the package's provider as the engine looks for it on PATH."""
    directory = tmp_path_factory.mktemp("plugins")
    plugin = directory / "pulumi-resource-aistack"
    plugin.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{COMPONENTS / "__main__.py"}" "$@"\n')
    plugin.chmod(0o755)
    return directory


def test_the_provider_serves_the_committed_schema(
    cluster: Cluster, plugins: Path, tmp_path: Path
) -> None:
    """What the running provider answers GetSchema with, and schema.json (which the SDKs
    are generated from), read by the same CLI: equal."""

    def schema(source: Path) -> dict[str, Any]:
        return dict(json.loads(cli(cluster, tmp_path, "package", "get-schema", str(source))))

    served = schema(plugins / "pulumi-resource-aistack")
    assert served == schema(COMPONENTS / "schema.json")
    expected = {"aistack:index:K8sTeamNamespace", "aistack:index:AwsTrainingPool"}
    assert expected <= set(served["resources"])


@pytest.fixture(scope="module")
def yaml_stack(
    cluster: Cluster, plugins: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[auto.Stack]:
    """The example as a project of its own: without its `packages:` block (that is how a
    team installs the package, through the Python host), so the engine takes the plugin."""
    project = tmp_path_factory.mktemp("yaml-kubernetes")
    program = yaml_program.load(EXAMPLE)
    program.pop("packages")
    (project / "Pulumi.yaml").write_text(yaml.safe_dump(program, sort_keys=False))
    stack = open_project(project, cluster, tmp_path_factory.mktemp("yaml-state"), plugins)
    yield stack
    stack.destroy(color="never")


def _offline() -> set[tuple[str, str]]:
    """The same program built through the package on the offline engine."""
    from aistack_components.adapters import COMPONENTS as ADAPTERS
    from aistack_components.adapters import PACKAGE, VERSION
    from pulumi.provider.experimental.component import ComponentProvider

    provider = ComponentProvider(ADAPTERS, PACKAGE, version=VERSION)
    graph = engine.run(lambda: yaml_program.build(provider, yaml_program.load(EXAMPLE)))
    return {(r.type, r.name) for r in graph.resources}


def _steps(events: list[auto.EngineEvent]) -> set[tuple[str, str]]:
    found = set()
    for event in events:
        step: Any = event.resource_pre_event
        if step is None:
            continue
        urn = step.metadata.urn
        kind = urn.split("::")[2].split("$")[-1]
        if kind != "pulumi:pulumi:Stack" and not kind.startswith("pulumi:providers:"):
            found.add((kind, urn.split("::")[3]))
    return found


def test_the_yaml_program_previews_what_the_package_builds_offline(yaml_stack: auto.Stack) -> None:
    events: list[auto.EngineEvent] = []
    preview = yaml_stack.preview(on_event=events.append, color="never")
    offline = _offline()
    assert _steps(events) == offline
    # Each of them, and the stack itself.
    assert preview.change_summary == {"create": len(offline) + 1}


def test_the_yaml_program_deploys_to_the_api_server(
    yaml_stack: auto.Stack, cluster: Cluster
) -> None:
    up = yaml_stack.up(color="never")
    assert up.outputs["namespace"].value == "nlp-train"
    assert up.outputs["localQueues"].value == {"nlp-train": "nlp-gpu"}
    queue = cluster.get_json("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/nlp-gpu")
    selector = queue["spec"]["namespaceSelector"]["matchExpressions"][0]
    assert selector["values"] == ["nlp-train"]
    assert cluster.exists("/apis/kueue.x-k8s.io/v1beta2/namespaces/nlp-train/localqueues/nlp-gpu")
    again = yaml_stack.up(color="never")
    assert set(again.summary.resource_changes or {}) == {"same"}

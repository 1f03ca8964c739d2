"""The real engine's tests (`make e2e`): one cluster of real programs per session."""

from __future__ import annotations

import json
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from aistack.gcp.gpu_node_pool import GpuNodePoolArgs
from e2e._cluster import Cluster
from e2e._controllers import start_jobset, start_kueue
from e2e._nodes import pool_nodes
from e2e._parts import Parts

REPO = Path(__file__).resolve().parents[1]


def _interrupted(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure() -> None:
    # A CI timeout's SIGTERM ends the run as Ctrl-C does: the fixtures' teardown stops
    # every server the session started.
    signal.signal(signal.SIGTERM, _interrupted)


def _crds(parts: Parts) -> list[Path]:
    """The CRDs the Kubernetes stacks write objects of, from the modules that define them
    (tools/e2e/build.sh gathers them): Kueue, JobSet, the Gateway API (standard channel),
    Google Cloud Managed Service for Prometheus and the GKE Gateway policies."""
    found: list[Path] = []
    for part in (
        parts.kueue,
        parts.jobset,
        parts.gateway_api,
        parts.prometheus_engine,
        parts.gke_gateway_api,
    ):
        found += sorted(
            path
            for path in (part / "manifests").glob("*.yaml")
            if any(
                (doc or {}).get("kind") == "CustomResourceDefinition"
                for doc in yaml.safe_load_all(path.read_text())
            )
        )
    return found


def _gke_pools(stack_file: Path) -> list[dict[str, object]]:
    """stacks/kubernetes's two GKE node pools at their largest, as gcp.GpuNodePool makes
    them: the Spot training pool its queue is capped at and the on-demand serving pool."""
    config = yaml.safe_load(stack_file.read_text())["config"]
    governance = {
        "owner": config["k8s-training:owner"],
        "costCenter": f"{config['k8s-training:team']}-research",
        "allowedRegions": [config["k8s-training:region"]],
    }
    region = config["k8s-training:region"]
    training = GpuNodePoolArgs.model_validate(
        {
            "governance": governance,
            "machineType": "g2-standard-48",
            "market": "spot",
            "maxNodes": int(config["k8s-training:poolMaxGpus"]) // 4,
        }
    )
    serving = GpuNodePoolArgs.model_validate(
        {
            "governance": governance,
            "machineType": config["k8s-training:servingMachineType"],
            "market": "on-demand",
            "maxNodes": int(config["k8s-training:servingGpus"]),
            "workload": "serving",
        }
    )
    return [
        *pool_nodes(config["k8s-training:gpuNodePool"], training, region),
        *pool_nodes(config["k8s-training:servingNodePool"], serving, region),
    ]


@pytest.fixture(scope="session")
def parts() -> Parts:
    return Parts.built()


@pytest.fixture(scope="session")
def cluster(parts: Parts) -> Iterator[Cluster]:
    with tempfile.TemporaryDirectory(prefix="aistack-e2e-") as root:
        running = Cluster(parts, Path(root))
        running.start()
        try:
            running.apply(_crds(parts))
            start_kueue(running)
            start_jobset(running)
            nodes = _gke_pools(REPO / "stacks" / "kubernetes" / "Pulumi.dev.yaml")
            running.kubectl(
                "apply",
                "-f",
                "-",
                stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}),
            )
            running.wait_for(
                "every fake GPU node Ready",
                lambda: all(_ready(running, node["metadata"]["name"]) for node in nodes),  # type: ignore[index]
            )
            yield running
        finally:
            running.stop()


def _ready(cluster: Cluster, node: str) -> bool:
    status = cluster.get_json(f"/api/v1/nodes/{node}").get("status", {})
    return any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions", []))

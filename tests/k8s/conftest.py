"""Fixtures for Kubernetes component tests: a governance block and a one-call stack runner."""

from __future__ import annotations

import pytest

from aistack import engine

GOVERNANCE = {
    "owner": "ml-platform@example.com",
    "costCenter": "research-1234",
    "environment": "dev",
    "allowedRegions": ["europe-west4", "us-central1"],
    "dataClassification": "confidential",
}

GSA = "trainer@team-ml-prod.iam.gserviceaccount.com"
ROLE_ARN = "arn:aws:iam::123456789012:role/aistack/ml-trainer"


@pytest.fixture(autouse=True, scope="session")
def _kubernetes_schemas_read_once():
    """The tests here call kubernetes-validate directly, as well as through `aistack scan`:
    each schema file parsed once per process, as `aistack scan` reads them
    (aistack.scan.kubernetes.read_schemas_once; tests/scan/test_kubernetes_scan.py shows the
    verdicts are the library's own)."""
    from aistack.scan.kubernetes import read_schemas_once

    read_schemas_once()


@pytest.fixture
def governance() -> dict:
    return dict(GOVERNANCE)


@pytest.fixture
def team_args(governance) -> dict:
    """A training namespace with 8 GPUs and a Workload Identity trainer."""
    return {
        "team": "ml",
        "gpus": 8,
        "governance": governance,
        "serviceAccounts": [
            {"name": "trainer", "identity": "gke-workload-identity", "gcpServiceAccount": GSA}
        ],
    }


@pytest.fixture
def run():
    def _run(program, **config):
        return engine.run(program, config=config)

    return _run


def spot_flavor(gpus: int = 16) -> dict:
    """A Kueue flavor for a GKE Spot GPU node pool "gpu" of `gpus` GPUs, as
    gcp.GpuNodePool.kueue_flavors() gives it."""
    return {
        "name": "gpu-spot",
        "capacity": "spot",
        "gpus": gpus,
        "nodeLabels": {"aistack.dev/pool": "gpu", "cloud.google.com/gke-spot": "true"},
        "tolerations": [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            {
                "key": "cloud.google.com/gke-spot",
                "operator": "Equal",
                "value": "true",
                "effect": "NoSchedule",
            },
        ],
    }

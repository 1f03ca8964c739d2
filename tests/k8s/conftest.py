"""Fixtures for Kubernetes component tests: a governance block and a one-call stack runner."""

from __future__ import annotations

import functools

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


@functools.cache
def _schema_contents_once():
    """kubernetes-validate's schema_contents, memoised: built once per process."""
    from kubernetes_validate import utils

    return functools.cache(utils.schema_contents)


@pytest.fixture(autouse=True)
def _kubernetes_schemas_read_once(monkeypatch):
    """kubernetes-validate reads and parses the kind's schema file and its version's 1.3 MB
    `_definitions.json` again on every `validate()` call (utils.schema_contents): 10-30 ms a
    document, most of a module's validation time. The files are read-only package data, so
    each is parsed once per process here and the parsed schema reused; the validation itself
    (its Draft 2020-12 validator over the same schema and definitions) is kubernetes-validate's
    own, unchanged. A missing file still raises every time (exceptions are not cached)."""
    from kubernetes_validate import utils

    monkeypatch.setattr(utils, "schema_contents", _schema_contents_once())


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

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

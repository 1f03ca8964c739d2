"""Fixtures for GCP component tests: a governance block and a one-call stack runner."""

from __future__ import annotations

import pytest

from aistack import engine

GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "research-1234",
    "environment": "dev",
    "allowedRegions": ["europe-west4", "us-central1"],
    "dataClassification": "confidential",
}

PROJECT = "team-ml-prod"


@pytest.fixture
def governance() -> dict:
    return dict(GOVERNANCE)


def run_stack(program, **config):
    """Run a program on the simulated cloud, project `team-ml-prod` in europe-west4: what the
    `run` fixture does, callable from a module-scoped fixture that builds a shared graph."""
    return engine.run(
        program, config={"gcp:project": PROJECT, "gcp:region": "europe-west4", **config}
    )


@pytest.fixture
def run():
    """Run a program on the simulated cloud, project `team-ml-prod` in europe-west4."""
    return run_stack

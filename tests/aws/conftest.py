"""Fixtures for AWS component tests: a governance block and a one-call stack runner."""

from __future__ import annotations

import pytest

from aistack import engine

GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "research-1234",
    "environment": "dev",
    "allowedRegions": ["us-east-1", "us-west-2"],
    "dataClassification": "confidential",
    "thirdPartyServices": [
        {"name": "wandb", "purpose": "experiment tracking", "dataShared": "run metrics"}
    ],
}


@pytest.fixture
def governance() -> dict:
    return dict(GOVERNANCE)


def run_in_us_east_1(program, **config):
    """Run a program on the simulated cloud in us-east-1: what the `run` fixture gives, for
    the module-scoped builds, which cannot take a per-test fixture."""
    return engine.run(program, config={"aws:region": "us-east-1", **config})


@pytest.fixture
def run():
    """Run a program on the simulated cloud in us-east-1."""
    return run_in_us_east_1


@pytest.fixture
def china_partition(monkeypatch):
    # What GetPartition answers in the China regions (AWS General Reference, "Amazon
    # Resource Names": partition aws-cn; service endpoints end in amazonaws.com.cn).
    from aistack.engine.cloud import SimulatedCloud

    def answer(self, args, provider):
        return {
            "partition": "aws-cn",
            "dnsSuffix": "amazonaws.com.cn",
            "reverseDnsPrefix": "cn.com.amazonaws",
            "id": "aws-cn",
        }

    monkeypatch.setattr(SimulatedCloud, "_aws_partition", answer)

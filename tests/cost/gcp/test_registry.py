"""Artifact Registry line items: what cleanup policies that delete save against a registry
that keeps every image."""

import pulumi_gcp
import pytest

from aistack import engine
from aistack.cost import WorkloadProfile, estimate
from aistack.cost.prices import gcp as prices
from tests.gcp.conftest import PROJECT

PROFILE = WorkloadProfile(dataset_storage_gb=1000, checkpoint_storage_gb=400, noncurrent_churn=1)


def run(program):
    return engine.run(program, config={"gcp:project": PROJECT, "gcp:region": "europe-west4"})


def _item(report, name):
    return next(item for item in report.items if item.resource == name)


def _repository_cost(**overrides):
    def program():
        pulumi_gcp.artifactregistry.Repository(
            "repo",
            location="europe-west4",
            repository_id="images",
            format="DOCKER",
            **overrides,
        )

    return _item(estimate(run(program), PROFILE), "repo")


def test_registry_with_deleting_cleanup_keeps_a_fifth_of_what_a_registry_without_keeps():
    deleting = pulumi_gcp.artifactregistry.RepositoryCleanupPolicyArgs(
        id="untagged",
        action="DELETE",
        condition=pulumi_gcp.artifactregistry.RepositoryCleanupPolicyConditionArgs(
            tag_state="UNTAGGED", older_than="604800s"
        ),
    )
    cleaned = _repository_cost(cleanup_policies=[deleting], cleanup_policy_dry_run=False)
    assert cleaned.monthly_usd == pytest.approx(20 * prices.ARTIFACT_REGISTRY_GB_MONTH)
    assert cleaned.naive_monthly_usd == pytest.approx(5 * cleaned.monthly_usd)
    # The same policy as a dry run deletes nothing: priced as no policy at all.
    dry = _repository_cost(cleanup_policies=[deleting], cleanup_policy_dry_run=True)
    assert dry.monthly_usd == dry.naive_monthly_usd == cleaned.naive_monthly_usd

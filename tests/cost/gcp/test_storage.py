"""Cloud Storage line items: what the lifecycle rules and soft delete of `gcp.DatasetBucket`
and its rotated keys cost against a naive setup without them."""

import pulumi_gcp
import pytest

from aistack import engine, gcp
from aistack.cost import WorkloadProfile, estimate
from aistack.cost.prices import gcp as prices
from tests.gcp.conftest import GOVERNANCE, PROJECT
from tests.gcp.test_dataset_bucket import DATASET

PROFILE = WorkloadProfile(dataset_storage_gb=1000, checkpoint_storage_gb=400, noncurrent_churn=1)
STANDARD = prices.GCS_GB_MONTH["STANDARD"]


def run(program):
    return engine.run(program, config={"gcp:project": PROJECT, "gcp:region": "europe-west4"})


def _graph(**bucket):
    def program():
        services = gcp.ProjectServices("apis", {"project": PROJECT})
        gcp.DatasetBucket(
            "data",
            {
                "kind": "dataset",
                "region": "europe-west4",
                "governance": GOVERNANCE,
                "dataset": DATASET,
                **bucket,
            },
            services=services,
        )

    return run(program)


def _item(report, name):
    return next(item for item in report.items if item.resource == name)


def test_dataset_bucket_keeps_old_versions_for_its_days_plus_soft_delete():
    graph = _graph(noncurrentDays=30, keepNoncurrentVersions=0, softDeleteDays=7)
    item = _item(estimate(graph, PROFILE), "data-bucket")
    # 1000 GB live + 1000 GB overwritten a month kept 30 days, then 7 days soft-deleted.
    assert item.monthly_usd == pytest.approx(1000 * STANDARD * (1 + 1 + 7 / 30), abs=0.01)
    # Naive: six months of versions on average, plus the default 7-day soft delete.
    assert item.naive_monthly_usd == pytest.approx(1000 * STANDARD * (1 + 6 + 7 / 30), abs=0.01)
    assert "30 d" in item.basis


def test_longer_noncurrent_retention_costs_more():
    short = _item(estimate(_graph(noncurrentDays=14), PROFILE), "data-bucket")
    long = _item(estimate(_graph(noncurrentDays=90), PROFILE), "data-bucket")
    assert long.monthly_usd > short.monthly_usd
    assert long.naive_monthly_usd == short.naive_monthly_usd


def test_a_bucket_without_lifecycle_rules_costs_the_naive_price():
    def program():
        pulumi_gcp.storage.Bucket(
            "raw",
            location="europe-west4",
            versioning={"enabled": True},
            labels={"aistack-workload": "data-dataset"},
        )

    item = _item(estimate(run(program), PROFILE), "raw")
    assert item.monthly_usd == item.naive_monthly_usd
    assert "accumulate" in item.basis


def test_a_bucket_of_no_known_kind_has_no_line():
    def program():
        pulumi_gcp.storage.Bucket("scratch", location="europe-west4")

    assert [i for i in estimate(run(program), PROFILE).items if i.resource == "scratch"] == []


def test_rotated_key_bills_its_enabled_versions_and_naive_encryption_is_free():
    item = _item(estimate(_graph(), PROFILE), "data-key")
    # 90-day rotation: about four versions added in a year, 1 + 4/2 billed on average.
    assert item.monthly_usd == pytest.approx(prices.KMS_KEY_VERSION_MONTH * 3.03, abs=0.01)
    assert item.naive_monthly_usd == 0.0

"""Google Cloud line items: what the lifecycle rules and soft delete of
`gcp.DatasetBucket`, its rotated keys and the registry's cleanup policies cost against a
naive setup without them."""

import pulumi_gcp
import pytest

from aistack import engine, gcp
from aistack.cost import WorkloadProfile, estimate, gcp_prices
from tests.gcp.conftest import GOVERNANCE, PROJECT
from tests.gcp.test_dataset_bucket import DATASET

PROFILE = WorkloadProfile(dataset_storage_gb=1000, checkpoint_storage_gb=400, noncurrent_churn=1)
STANDARD = gcp_prices.GCS_GB_MONTH["STANDARD"]


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
    assert item.monthly_usd == pytest.approx(gcp_prices.KMS_KEY_VERSION_MONTH * 3.03, abs=0.01)
    assert item.naive_monthly_usd == 0.0


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
    assert cleaned.monthly_usd == pytest.approx(20 * gcp_prices.ARTIFACT_REGISTRY_GB_MONTH)
    assert cleaned.naive_monthly_usd == pytest.approx(5 * cleaned.monthly_usd)
    # The same policy as a dry run deletes nothing: priced as no policy at all.
    dry = _repository_cost(cleanup_policies=[deleting], cleanup_policy_dry_run=True)
    assert dry.monthly_usd == dry.naive_monthly_usd == cleaned.naive_monthly_usd


def _network(**overrides):
    def program():
        services = gcp.ProjectServices("apis", {"project": PROJECT})
        gcp.Network(
            "net",
            {
                "governance": GOVERNANCE,
                "region": "europe-west4",
                "trainingMachineTypes": ["a3-highgpu-8g"],
                **overrides,
            },
            services=services,
            service_accounts={"training": f"trainer@{PROJECT}.iam.gserviceaccount.com"},
        )

    return run(program)


def test_cloud_nat_bills_vm_hours_address_hours_and_processed_gib():
    from aistack.cost.estimators.gcp_network import nat_month

    # Cloud NAT pricing page's example: 14 VMs and 100 GiB over 720 h bill $18.61 (the
    # address-hour is listed separately); the cost model's month is 730 h: $0.20 more.
    assert nat_month(14, 100, addresses=0) == pytest.approx(18.61 + 14 * 0.0014 * 10, abs=0.01)
    # From 33 VMs the gateway-hour is capped at $0.044.
    assert nat_month(100, 0, addresses=0) == pytest.approx(0.044 * 730)
    item = _item(estimate(_network(nat=True), PROFILE), "net-nat")
    assert item.monthly_usd == pytest.approx(
        730 * (4 * 0.0014 + 0.005) + 50 * gcp_prices.NAT_PER_GIB, abs=0.01
    )


def test_without_nat_the_network_costs_nothing_and_the_naive_nat_bills_the_dataset():
    report = estimate(_network(), PROFILE)
    assert not [i for i in report.items if i.resource == "net-nat"]
    vpc = _item(report, "net-vpc")
    assert vpc.monthly_usd == 0
    # 1000 GB read 4x a month through a NAT at $0.045/GiB dominates the naive line.
    assert vpc.naive_monthly_usd > 4000 * gcp_prices.NAT_PER_GIB

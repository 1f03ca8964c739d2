"""GKE line items: a Spot GPU pool that scales to zero against on-demand nodes left on."""

import pulumi_gcp
import pytest

from aistack import catalog, engine, gcp
from aistack.cost import HOURS_PER_MONTH, WorkloadProfile, estimate
from aistack.cost.estimators.gcp.gke import CLUSTER_FEE_PER_HOUR
from tests.gcp.conftest import GOVERNANCE, PROJECT
from tests.gcp.test_gke_cluster import cluster_args


def approx(value):
    # The report rounds to cents.
    return pytest.approx(value, abs=0.01)


PROFILE = WorkloadProfile(training_gpu_hours_per_month=400)
L4 = catalog.get("g2-standard-8", cloud="gcp")


def _report(**pool):
    def program():
        services = gcp.ProjectServices("apis", {"project": PROJECT})
        cluster = gcp.GkeCluster("train", cluster_args(GOVERNANCE), services=services)
        args = {"governance": GOVERNANCE, "machineType": "g2-standard-8", "maxNodes": 4}
        gcp.GpuNodePool("l4", {**args, **pool}, cluster=cluster)

    graph = engine.run(program, config={"gcp:project": PROJECT, "gcp:region": "europe-west4"})
    return {item.resource: item for item in estimate(graph, PROFILE).items}


def test_a_spot_pool_bills_only_the_work_at_the_spot_price():
    item = _report()["l4-pool"]
    assert item.monthly_usd == approx(400 * L4.spot_price("europe-west4"))
    assert item.naive_monthly_usd == approx(HOURS_PER_MONTH * L4.price("europe-west4"))
    assert "Spot" in item.basis and "scale to zero" in item.basis


def test_an_on_demand_pool_bills_the_work_at_the_on_demand_price():
    item = _report(market="on-demand")["l4-pool"]
    assert item.monthly_usd == approx(400 * L4.price("europe-west4"))


def test_the_system_pool_is_not_priced_as_gpus_and_the_cluster_pays_its_fee():
    items = _report()
    assert "train-system" not in items
    assert items["train-cluster"].monthly_usd == approx(CLUSTER_FEE_PER_HOUR * HOURS_PER_MONTH)


def test_a_gpu_pool_that_never_scales_to_zero_bills_all_month():
    def program():
        pulumi_gcp.container.NodePool(
            "fixed",
            cluster=f"projects/{PROJECT}/locations/europe-west4/clusters/c",
            location="europe-west4",
            node_count=1,
            node_config={"machine_type": "g2-standard-8", "spot": True},
        )

    graph = engine.run(program, config={"gcp:project": PROJECT})
    item = next(i for i in estimate(graph, PROFILE).items if i.resource == "fixed")
    assert item.monthly_usd == approx(HOURS_PER_MONTH * L4.spot_price("europe-west4"))

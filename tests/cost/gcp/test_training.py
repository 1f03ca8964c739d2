"""Compute Engine GPU groups: a Spot mig pool from 0 VMs against on-demand VMs left on."""

import pulumi_gcp
import pytest

from aistack import catalog, engine
from aistack.cost import HOURS_PER_MONTH, WorkloadProfile, estimate
from tests.gcp.conftest import GOVERNANCE, PROJECT
from tests.gcp.test_training_pool import stack

PROFILE = WorkloadProfile(training_gpu_hours_per_month=400)
L4 = catalog.get("g2-standard-8", cloud="gcp")
CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}


def approx(value):
    return pytest.approx(value, abs=0.01)


def _items(program):
    return {
        item.resource: item for item in estimate(engine.run(program, config=CONFIG), PROFILE).items
    }


def test_a_spot_pool_from_zero_bills_only_the_work_at_the_spot_price():
    item = _items(stack(dict(GOVERNANCE)))["train-mig"]
    assert item.monthly_usd == approx(400 * L4.spot_price("europe-west4"))
    assert item.naive_monthly_usd == approx(HOURS_PER_MONTH * L4.price("europe-west4"))
    assert "Spot" in item.basis and "from 0 VMs" in item.basis


def test_an_on_demand_pool_bills_the_work_at_the_on_demand_price():
    item = _items(stack(dict(GOVERNANCE), market="on-demand"))["train-mig"]
    assert item.monthly_usd == approx(400 * L4.price("europe-west4"))


def test_a_group_created_with_vms_bills_them_all_month():
    def program():
        template = pulumi_gcp.compute.RegionInstanceTemplate(
            "tpl",
            region="europe-west4",
            machine_type="g2-standard-8",
            disks=[{"boot": True, "source_image": "projects/p/global/images/x"}],
            scheduling={"provisioning_model": "SPOT", "preemptible": True},
        )
        pulumi_gcp.compute.RegionInstanceGroupManager(
            "fixed",
            region="europe-west4",
            base_instance_name="fixed",
            versions=[{"instance_template": template.self_link}],
            target_size=2,
        )

    item = _items(program)["fixed"]
    assert item.monthly_usd == approx(2 * HOURS_PER_MONTH * L4.spot_price("europe-west4"))
    assert "2 VM(s) always on" in item.basis

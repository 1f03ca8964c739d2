"""Workbench line items: the hours worked plus one idle timeout per session, against the
same instance left on all month; the disks bill in both columns."""

import pulumi_gcp
import pytest

from aistack import catalog, engine
from aistack.cost import HOURS_PER_MONTH, WorkloadProfile, estimate
from aistack.cost.baseline import SESSION_HOURS
from aistack.cost.prices import gcp as prices
from tests.gcp.conftest import GOVERNANCE, PROJECT
from tests.gcp.test_notebook import stack

CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}
PROFILE = WorkloadProfile(notebook_hours_per_month=160)
L4 = catalog.get("g2-standard-8", cloud="gcp")
#: The component's disks: boot 150 GB + data 100 GB, balanced PD.
DISKS = 250 * prices.PD_BALANCED_GB_MONTH


def approx(value):
    return pytest.approx(value, abs=0.01)


def _item(program):
    graph = engine.run(program, config=CONFIG)
    return {item.resource: item for item in estimate(graph, PROFILE).items}


def test_a_gpu_notebook_bills_the_work_and_an_hour_idle_per_session():
    item = _item(stack(dict(GOVERNANCE), {"machineType": "g2-standard-8"}))["nb-instance"]
    hours = 160 + (160 / SESSION_HOURS) * 1.0
    assert item.monthly_usd == approx(hours * L4.price("europe-west4") + DISKS)
    assert item.naive_monthly_usd == approx(HOURS_PER_MONTH * L4.price("europe-west4") + DISKS)
    assert item.monthly_usd < item.naive_monthly_usd / 3


def test_a_cpu_notebook_takes_the_compute_engine_list_price():
    item = _item(stack(dict(GOVERNANCE)))["nb-instance"]
    hourly = prices.CPU_MACHINE_HOUR["e2-standard-4"]
    assert item.monthly_usd == approx((160 + 20) * hourly + DISKS)
    assert "e2-standard-4" in item.basis


def test_a_longer_idle_timeout_costs_more_and_an_unset_one_is_workbenchs_180_minutes():
    short = _item(stack(dict(GOVERNANCE), {"idleMinutes": 30}))["nb-instance"]
    long = _item(stack(dict(GOVERNANCE), {"idleMinutes": 240}))["nb-instance"]
    assert short.monthly_usd < long.monthly_usd

    def plain():
        pulumi_gcp.workbench.Instance(
            "plain", name="plain", location="europe-west4-a",
            gce_setup={"machine_type": "e2-standard-4"},
        )  # fmt: skip

    item = _item(plain)["plain"]
    hourly = prices.CPU_MACHINE_HOUR["e2-standard-4"]
    assert item.monthly_usd == approx((160 + 20 * 3) * hourly + DISKS)

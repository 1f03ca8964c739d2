"""gcp.Network line items: Cloud NAT, and the naive NAT without Private Google Access that
carries the dataset."""

import pytest

from aistack import engine, gcp
from aistack.cost import WorkloadProfile, estimate
from aistack.cost.prices import gcp as prices
from tests.gcp.conftest import GOVERNANCE, PROJECT

PROFILE = WorkloadProfile(dataset_storage_gb=1000, checkpoint_storage_gb=400, noncurrent_churn=1)


def run(program):
    return engine.run(program, config={"gcp:project": PROJECT, "gcp:region": "europe-west4"})


def _item(report, name):
    return next(item for item in report.items if item.resource == name)


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
    from aistack.cost.estimators.gcp.network import nat_month

    # Cloud NAT pricing page's example: 14 VMs and 100 GiB over 720 h bill $18.61 (the
    # address-hour is listed separately); the cost model's month is 730 h: $0.20 more.
    assert nat_month(14, 100, addresses=0) == pytest.approx(18.61 + 14 * 0.0014 * 10, abs=0.01)
    # From 33 VMs the gateway-hour is capped at $0.044.
    assert nat_month(100, 0, addresses=0) == pytest.approx(0.044 * 730)
    item = _item(estimate(_network(nat=True), PROFILE), "net-nat")
    assert item.monthly_usd == pytest.approx(
        730 * (4 * 0.0014 + 0.005) + 50 * prices.NAT_PER_GIB, abs=0.01
    )


def test_without_nat_the_network_costs_nothing_and_the_naive_nat_bills_the_dataset():
    report = estimate(_network(), PROFILE)
    assert not [i for i in report.items if i.resource == "net-nat"]
    vpc = _item(report, "net-vpc")
    assert vpc.monthly_usd == 0
    # 1000 GB read 4x a month through a NAT at $0.045/GiB dominates the naive line.
    assert vpc.naive_monthly_usd > 4000 * prices.NAT_PER_GIB

"""GCP network rules: no SSH/RDP from anywhere (S1-07), private subnets (S1-08), firewall by
service account with serving kept off training (S1-09), GPUs only in zones offering them
(C2-02)."""

import pulumi_gcp as gcp
import pytest

from aistack import gcp as aistack_gcp

CONFIG = {"gcp:project": "team-ml-prod", "gcp:region": "europe-west4"}
GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
TRAINER = "trainer@team-ml-prod.iam.gserviceaccount.com"
SERVER = "server@team-ml-prod.iam.gserviceaccount.com"


def _network(**overrides):
    def program():
        apis = aistack_gcp.ProjectServices("apis", {"project": "team-ml-prod"})
        aistack_gcp.Network(
            "net",
            {
                "governance": GOVERNANCE,
                "region": "europe-west4",
                "trainingMachineTypes": ["a3-highgpu-8g"],
                "inferenceMachineTypes": ["g2-standard-8"],
                **overrides,
            },
            services=apis,
            service_accounts={"training": TRAINER, "inference": SERVER},
        )

    return program


def _firewall(**rule):
    def program():
        vpc = gcp.compute.Network("vpc", auto_create_subnetworks=False)
        gcp.compute.Firewall("fw", network=vpc.id, **rule)

    return program


@pytest.mark.parametrize("rule_id", ["AIS-S1-07", "AIS-S1-08", "AIS-S1-09"])
def test_the_network_component_passes(verdicts, rule_id):
    found = verdicts(rule_id, _network(allowIapSsh=True, nat=True, proxyOnlySubnet=True), **CONFIG)
    assert found and set(found.values()) == {"compliant"}


@pytest.mark.parametrize(
    "allows",
    [
        [{"protocol": "tcp", "ports": ["22"]}],
        [{"protocol": "tcp", "ports": ["3000-3400"]}],  # covers RDP
        [{"protocol": "all"}],  # checkov's CKV_GCP_2 reads ports only and misses this
        [{"protocol": "tcp"}],
    ],
)
def test_s1_ssh_or_rdp_from_anywhere_fails(verdicts, allows):
    program = _firewall(allows=allows, source_ranges=["0.0.0.0/0"])
    assert verdicts("AIS-S1-07", program, **CONFIG) == {"fw": "non-compliant"}


@pytest.mark.parametrize(
    "rule",
    [
        {"allows": [{"protocol": "tcp", "ports": ["22"]}], "source_ranges": ["35.235.240.0/20"]},
        {"allows": [{"protocol": "tcp", "ports": ["443"]}], "source_ranges": ["0.0.0.0/0"]},
    ],
)
def test_s1_ssh_from_iap_or_https_from_anywhere_passes(verdicts, rule):
    assert verdicts("AIS-S1-07", _firewall(**rule), **CONFIG) == {"fw": "compliant"}


def test_s1_a_subnet_without_google_access_or_flow_logs_fails(verdicts):
    def program():
        vpc = gcp.compute.Network("vpc", auto_create_subnetworks=False)
        gcp.compute.Subnetwork(
            "bare", network=vpc.id, ip_cidr_range="10.0.0.0/20", region="europe-west4"
        )
        gcp.compute.Subnetwork(
            "private",
            network=vpc.id,
            ip_cidr_range="10.1.0.0/20",
            region="europe-west4",
            private_ip_google_access=True,
            log_config={"aggregation_interval": "INTERVAL_5_SEC"},
        )
        gcp.compute.Subnetwork(
            "proxy",
            network=vpc.id,
            ip_cidr_range="10.2.0.0/23",
            region="europe-west4",
            purpose="REGIONAL_MANAGED_PROXY",
            role="ACTIVE",
        )

    assert verdicts("AIS-S1-08", program, **CONFIG) == {
        "bare": "non-compliant",
        "private": "compliant",
    }


@pytest.mark.parametrize(
    ("targets", "expected"),
    [
        ({"target_tags": ["gpu"]}, "non-compliant"),
        ({}, "non-compliant"),
        ({"target_service_accounts": [TRAINER]}, "compliant"),
    ],
)
def test_s1_allow_rules_must_target_service_accounts(verdicts, targets, expected):
    program = _firewall(
        allows=[{"protocol": "tcp", "ports": ["8080"]}], source_ranges=["10.0.0.0/8"], **targets
    )
    assert verdicts("AIS-S1-09", program, **CONFIG) == {"fw": expected}


def test_s1_a_rule_admitting_serving_to_training_fails(verdicts):
    def program():
        _network()()
        net_vpc = "projects/team-ml-prod/global/networks/net-vpc"
        gcp.compute.Firewall(
            "serve-to-train",
            network=net_vpc,
            allows=[{"protocol": "all"}],
            source_service_accounts=[SERVER],
            target_service_accounts=[TRAINER],
        )

    found = verdicts("AIS-S1-09", program, **CONFIG)
    assert found.pop("serve-to-train") == "non-compliant"
    assert set(found.values()) == {"compliant"}


def test_s1_one_account_for_training_and_inference_fails(verdicts):
    def program():
        vpc = gcp.compute.Network("vpc", auto_create_subnetworks=False)
        for tier in ("training", "inference"):
            gcp.compute.Firewall(
                f"{tier}-in",
                network=vpc.id,
                description=f"aistack-network-tier={tier}: hand-written",
                allows=[{"protocol": "tcp", "ports": ["8080"]}],
                source_ranges=["10.0.0.0/8"],
                target_service_accounts=[TRAINER],
            )

    assert verdicts("AIS-S1-09", program, **CONFIG) == {
        "training-in": "non-compliant",
        "inference-in": "non-compliant",
    }


def _pool(zones, machine="a3-highgpu-8g"):
    def program():
        gcp.container.NodePool(
            "gpu",
            cluster="projects/team-ml-prod/locations/europe-west4/clusters/c",
            location="europe-west4",
            node_locations=zones,
            node_config={"machine_type": machine},
        )

    return program


def test_c2_a_node_pool_in_zones_offering_its_machine_type_passes(verdicts):
    from aistack import catalog

    zones = list(catalog.get("a3-highgpu-8g").zones("europe-west4"))
    assert verdicts("AIS-C2-02", _pool(zones), **CONFIG) == {"gpu": "compliant"}


def test_c2_a_node_pool_in_a_zone_without_its_machine_type_fails(verdicts):
    from aistack import catalog

    offered = set(catalog.get("a3-highgpu-8g").zones("europe-west4"))
    missing = next(
        z for z in ("europe-west4-a", "europe-west4-b", "europe-west4-c") if z not in offered
    )
    assert verdicts("AIS-C2-02", _pool([*sorted(offered), missing]), **CONFIG) == {
        "gpu": "non-compliant"
    }


def test_c2_an_instance_in_a_zone_without_its_machine_type_fails(verdicts):
    def program():
        gcp.compute.Instance(
            "vm",
            zone="us-east1-b",  # the catalog has no A3 in us-east1
            machine_type="a3-highgpu-8g",
            boot_disk={"initialize_params": {"image": "debian-12"}},
            network_interfaces=[{"network": "default"}],
        )

    assert verdicts("AIS-C2-02", program, **CONFIG) == {"vm": "non-compliant"}

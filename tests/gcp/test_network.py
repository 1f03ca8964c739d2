"""gcp.Network: private tier subnets, default-deny firewall by service account, zones that
offer the GPUs (C2), refusals GCP would give."""

import ipaddress

import pytest

from aistack import gcp
from aistack.engine.gcp_cloud import SimulatedGcpError, missing_api_dependencies
from aistack.errors import ConfigError
from tests._harness.shared_graphs import shared
from tests.gcp.conftest import GOVERNANCE, run_stack

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("gcp-network")

PROJECT = "team-ml-prod"
FIREWALL = "gcp:compute/firewall:Firewall"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
TRAINER = "trainer@team-ml-prod.iam.gserviceaccount.com"
SERVER = "server@team-ml-prod.iam.gserviceaccount.com"
NOTEBOOK = "notebook@team-ml-prod.iam.gserviceaccount.com"
ACCOUNTS = {"training": TRAINER, "inference": SERVER, "notebook": NOTEBOOK}


def _args(governance, **overrides):
    return {
        "governance": governance,
        "region": "europe-west4",
        "trainingMachineTypes": ["a3-highgpu-8g"],
        "inferenceMachineTypes": ["g2-standard-8"],
        **overrides,
    }


def _stack(governance, seen=None, accounts=ACCOUNTS, **overrides):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        net = gcp.Network(
            "net", _args(governance, **overrides), services=apis, service_accounts=accounts
        )
        if seen is not None:
            seen["net"] = net
            net.offered_zones.apply(lambda v: seen.setdefault("offered", v))
            net.subnet_self_links["training"].apply(lambda v: seen.setdefault("training", v))
            net.network_self_link.apply(lambda v: seen.setdefault("network", v))

    return program


@pytest.fixture(scope="module")
def default_build():
    """The default network and what its component answers (`seen`), built once for the
    module's tests that read it."""
    seen: dict = {}
    with shared(run_stack(_stack(dict(GOVERNANCE), seen=seen))) as graph:
        yield graph, seen


@pytest.fixture
def default_graph(default_build):
    return default_build[0]


@pytest.fixture(scope="module")
def nat_graph():
    """The network with Cloud NAT and a proxy-only subnet, built once for two tests."""
    with shared(run_stack(_stack(dict(GOVERNANCE), nat=True, proxyOnlySubnet=True))) as graph:
        yield graph


def _rules(graph):
    return {r.name.removeprefix("net-"): r.inputs for r in graph.of_type(FIREWALL)}


def test_the_vpc_is_custom_mode_regional_without_a_default_internet_route(default_graph):
    vpc = default_graph.named("net-vpc")
    assert vpc.inputs["autoCreateSubnetworks"] is False
    assert vpc.inputs["routingMode"] == "REGIONAL"
    assert vpc.inputs["deleteDefaultRoutesOnCreate"] is True


def test_every_tier_subnet_is_private_with_google_access_and_flow_logs(run, governance):
    graph = run(_stack(governance, notebook=True))
    subnets = {s.name: s.inputs for s in graph.of_type(SUBNET)}
    assert set(subnets) == {"net-training", "net-inference", "net-notebook"}
    for inputs in subnets.values():
        assert inputs["privateIpGoogleAccess"] is True
        assert inputs["logConfig"] == {
            "aggregationInterval": "INTERVAL_5_SEC",
            "flowSampling": 0.5,
            "metadata": "INCLUDE_ALL_METADATA",
        }
        assert inputs["region"] == "europe-west4"
    blocks = [ipaddress.IPv4Network(s["ipCidrRange"]) for s in subnets.values()]
    assert all(not a.overlaps(b) for i, a in enumerate(blocks) for b in blocks[i + 1 :])


def test_the_training_subnet_carries_the_gke_ranges_the_cluster_names(default_build):
    graph, seen = default_build
    ranges = graph.named("net-training").inputs["secondaryIpRanges"]
    assert {r["rangeName"]: r["ipCidrRange"] for r in ranges} == {
        "training-pods": "10.64.0.0/14",
        "training-services": "10.68.0.0/20",
    }
    net = seen["net"]
    assert (net.pods_range_name, net.services_range_name) == ("training-pods", "training-services")
    assert seen["training"].startswith(
        "https://www.googleapis.com/compute/v1/projects/team-ml-prod/regions/europe-west4/"
        "subnetworks/net-training-"
    )
    assert seen["network"].startswith(
        "https://www.googleapis.com/compute/v1/projects/team-ml-prod/global/networks/net-vpc-"
    )
    assert "secondaryIpRanges" not in graph.named("net-inference").inputs


def test_without_gke_ranges_there_are_no_range_names(run, governance):
    seen = {}
    graph = run(_stack(governance, seen=seen, gkeSecondaryRanges=False))
    assert not graph.named("net-training").inputs.get("secondaryIpRanges")
    assert seen["net"].pods_range_name is None


def test_default_deny_is_explicit_logged_and_just_above_the_implied_rules(default_graph):
    rules = _rules(default_graph)
    # Implied rules sit at 65535 and cannot log; egress is implied ALLOW (VPC firewall docs).
    assert rules["deny-all-ingress"]["priority"] == 65534
    assert rules["deny-all-ingress"]["denies"] == [{"protocol": "all"}]
    assert rules["deny-all-egress"]["direction"] == "EGRESS"
    assert rules["deny-all-egress"]["destinationRanges"] == ["0.0.0.0/0"]
    for inputs in rules.values():
        assert inputs["logConfig"] == {"metadata": "INCLUDE_ALL_METADATA"}
        if inputs.get("allows"):
            assert inputs["priority"] < 65534
            assert inputs["targetServiceAccounts"], "every allow names its targets"
            assert not inputs.get("targetTags") and not inputs.get("sourceTags")


def test_training_accepts_only_training_on_every_port(default_graph):
    rules = _rules(default_graph)
    ingress = rules["training-ingress"]
    assert ingress["allows"] == [{"protocol": "all"}]
    assert ingress["sourceServiceAccounts"] == [TRAINER]
    assert ingress["targetServiceAccounts"] == [TRAINER]
    assert rules["training-egress"]["destinationRanges"] == [
        "10.40.0.0/18",
        "10.64.0.0/14",
        "10.68.0.0/20",
    ]
    # Nothing admits the serving account to training.
    for inputs in rules.values():
        if TRAINER in (inputs.get("targetServiceAccounts") or []) and inputs.get("allows"):
            assert SERVER not in (inputs.get("sourceServiceAccounts") or [])


def test_inference_accepts_google_health_checkers_on_the_gateway_port_only(run, governance):
    rules = _rules(run(_stack(governance, gatewayPort=9000)))
    checks = rules["health-checks"]
    # Cloud Load Balancing docs, "Health checks overview": probe ranges.
    assert checks["sourceRanges"] == ["35.191.0.0/16", "130.211.0.0/22"]
    assert checks["allows"] == [{"protocol": "tcp", "ports": ["9000"]}]
    assert checks["targetServiceAccounts"] == [SERVER]
    assert "proxies-to-inference" not in rules


def test_a_training_mig_health_check_port_is_the_only_one_checkers_reach(
    run, governance, default_graph
):
    assert "training-health-checks" not in _rules(default_graph)
    rule = _rules(run(_stack(governance, trainingHealthCheckPort=8081)))["training-health-checks"]
    assert rule["sourceRanges"] == ["35.191.0.0/16", "130.211.0.0/22"]
    assert rule["allows"] == [{"protocol": "tcp", "ports": ["8081"]}]
    assert rule["targetServiceAccounts"] == [TRAINER]


def test_the_proxy_only_subnet_is_active_and_its_proxies_reach_inference(run, governance):
    graph = run(_stack(governance, proxyOnlySubnet=True))
    proxy = graph.named("net-proxy").inputs
    assert (proxy["purpose"], proxy["role"]) == ("REGIONAL_MANAGED_PROXY", "ACTIVE")
    assert proxy["ipCidrRange"] == "10.40.192.0/23"
    assert "logConfig" not in proxy  # flow logs do not apply to proxy-only subnets
    assert _rules(graph)["proxies-to-inference"]["sourceRanges"] == ["10.40.192.0/23"]


def test_egress_reaches_google_apis_privately_and_dns_answers_them(default_graph):
    graph = default_graph
    rules = _rules(graph)
    apis = rules["google-apis-egress"]
    assert apis["destinationRanges"] == ["199.36.153.8/30"]
    assert apis["allows"] == [{"protocol": "tcp", "ports": ["443"]}]
    assert sorted(apis["targetServiceAccounts"]) == sorted([TRAINER, SERVER])
    route = graph.named("net-google-apis").inputs
    assert (route["destRange"], route["nextHopGateway"]) == (
        "199.36.153.8/30",
        "default-internet-gateway",
    )
    zone = graph.named("net-googleapis-com").inputs
    assert zone["dnsName"] == "googleapis.com." and zone["visibility"] == "private"
    wildcard = graph.named("net-googleapis-com-wildcard").inputs
    assert (wildcard["name"], wildcard["rrdatas"]) == (
        "*.googleapis.com.",
        ["private.googleapis.com."],
    )
    assert graph.named("net-pkg-dev-a").inputs["rrdatas"] == [
        "199.36.153.8",
        "199.36.153.9",
        "199.36.153.10",
        "199.36.153.11",
    ]


def test_without_nat_there_is_no_router_no_internet_route_and_no_internet_egress(default_graph):
    graph = default_graph
    assert not graph.of_type("gcp:compute/routerNat:RouterNat")
    assert not graph.of_type("gcp:compute/router:Router")
    assert [r.inputs["destRange"] for r in graph.of_type("gcp:compute/route:Route")] == [
        "199.36.153.8/30"
    ]
    assert "internet-egress" not in _rules(graph)


def test_nat_is_auto_only_logs_errors_and_covers_the_tier_subnets(nat_graph):
    graph = nat_graph
    nat = graph.named("net-nat").inputs
    assert nat["natIpAllocateOption"] == "AUTO_ONLY"
    assert nat["logConfig"] == {"enable": True, "filter": "ERRORS_ONLY"}
    assert nat["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS"
    covered = {s["name"] for s in nat["subnetworks"]}
    assert covered == {graph.named("net-training").id, graph.named("net-inference").id}
    assert graph.named("net-internet").inputs["destRange"] == "0.0.0.0/0"
    egress = _rules(graph)["internet-egress"]
    assert egress["allows"] == [{"protocol": "tcp", "ports": ["443"]}]


def test_no_ssh_from_anywhere_unless_iap_is_asked_for(run, governance, default_graph):
    def ssh_rules(graph):
        return [
            r
            for r in _rules(graph).values()
            if r.get("direction") == "INGRESS"
            and any("22" in (a.get("ports") or []) for a in r.get("allows") or [])
        ]

    assert ssh_rules(default_graph) == []
    (iap,) = ssh_rules(run(_stack(governance, allowIapSsh=True)))
    assert iap["sourceRanges"] == ["35.235.240.0/20"]


def test_zones_are_those_offering_every_machine_type_of_the_tier(run, governance):
    seen = {}
    run(_stack(governance, seen=seen, inferenceMachineTypes=["g2-standard-8", "a2-highgpu-1g"]))
    net = seen["net"]
    from aistack import catalog

    a3 = set(catalog.get("a3-highgpu-8g").zones("europe-west4"))
    assert net.zones("training") == sorted(a3)
    both = set(catalog.get("g2-standard-8").zones("europe-west4")) & set(
        catalog.get("a2-highgpu-1g").zones("europe-west4")
    )
    assert net.zones("inference") == sorted(both)
    # getZones (deploy time) answers UP zones; the planned ones are exported.
    assert seen["offered"]["training"] == sorted(a3)


def test_a_region_without_the_accelerator_names_region_and_accelerator(run, governance):
    from aistack import catalog

    region = "us-east1"  # The catalog offers L4 (G2) there, not H100 (A3).
    assert region not in catalog.get("a3-highgpu-8g").regions
    governance["allowedRegions"] = [region]
    with pytest.raises(ConfigError) as error:
        run(_stack(governance, region=region))
    text = str(error.value)
    assert "net.trainingMachineTypes.0" in text
    assert region in text and "H100" in text


def test_an_asked_for_tier_the_network_lacks_is_a_config_error(default_build):
    _, seen = default_build
    with pytest.raises(ConfigError, match="no 'notebook' tier"):
        seen["net"].zones("notebook")


def test_every_problem_is_reported_before_anything_is_registered(run, governance):
    with pytest.raises(ConfigError) as error:
        run(
            _stack(
                governance,
                accounts={"training": TRAINER},
                region="europe-west1",
                cidrBlock="8.8.0.0/16",
            )
        )
    text = str(error.value)
    assert "net.cidrBlock" in text
    assert "net.region" in text
    assert "net.serviceAccounts.inference" in text


def test_overlapping_ranges_are_refused_before_deploy(run, governance):
    with pytest.raises(ConfigError, match="overlaps"):
        run(_stack(governance, podsCidr="10.40.0.0/14"))


def test_the_same_account_for_training_and_inference_is_refused(run, governance):
    with pytest.raises(ConfigError, match="same service account"):
        run(_stack(governance, accounts={"training": TRAINER, "inference": TRAINER}))


def test_the_network_must_be_in_the_dataset_buckets_region(run, governance):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        data = gcp.DatasetBucket(
            "ckpt", {"kind": "checkpoints", "region": "us-central1", "governance": governance},
            services=apis,
        )  # fmt: skip
        gcp.Network(
            "net", _args(governance), services=apis, service_accounts=ACCOUNTS, dataset=data
        )

    with pytest.raises(ConfigError, match="D2"):
        run(program)


def test_a_workload_identity_supplies_the_firewall_accounts(run, governance):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        ids = gcp.WorkloadIdentity("ids", {"governance": governance}, services=apis)
        gcp.Network("net", _args(governance), services=apis, identity=ids)

    rules = _rules(run(program))
    assert rules["training-ingress"]["sourceServiceAccounts"] == [
        "ids-training-13d1dc@team-ml-prod.iam.gserviceaccount.com"
    ]
    assert rules["health-checks"]["targetServiceAccounts"] == [
        "ids-inference-13d1dc@team-ml-prod.iam.gserviceaccount.com"
    ]


def test_every_resource_waits_for_compute_and_dns_apis(nat_graph):
    graph = nat_graph
    assert missing_api_dependencies(graph) == []
    services = {s.inputs["service"] for s in graph.of_type("gcp:projects/service:Service")}
    assert {"compute.googleapis.com", "dns.googleapis.com"} <= services


# ---- the simulated GCP refuses what GCP refuses --------------------------------------------


def _raw(**subnet):
    import pulumi_gcp as g

    def program():
        vpc = g.compute.Network("vpc", auto_create_subnetworks=False)
        g.compute.Subnetwork(
            "a", network=vpc.id, ip_cidr_range="10.0.0.0/20", region="europe-west4"
        )
        g.compute.Subnetwork("b", network=vpc.id, region="europe-west4", **subnet)

    return program


def test_gcp_refuses_overlapping_subnet_ranges_in_one_vpc(run):
    with pytest.raises(Exception, match="conflicts with"):
        run(_raw(ip_cidr_range="10.0.8.0/21"))
    with pytest.raises(Exception, match="conflicts with"):
        run(
            _raw(
                ip_cidr_range="10.1.0.0/20",
                secondary_ip_ranges=[{"range_name": "pods", "ip_cidr_range": "10.0.0.0/16"}],
            )
        )
    run(_raw(ip_cidr_range="10.1.0.0/20"))


def test_gcp_refuses_bad_or_repeated_secondary_range_names(run):
    for ranges in (
        [{"range_name": "Pods", "ip_cidr_range": "10.8.0.0/16"}],
        [
            {"range_name": "pods", "ip_cidr_range": "10.8.0.0/16"},
            {"range_name": "pods", "ip_cidr_range": "10.9.0.0/16"},
        ],
    ):
        with pytest.raises(Exception, match="secondary range name"):
            run(_raw(ip_cidr_range="10.1.0.0/20", secondary_ip_ranges=ranges))


def test_gcp_refuses_firewall_rules_mixing_tags_and_service_accounts(run):
    import pulumi_gcp as g

    def program():
        vpc = g.compute.Network("vpc", auto_create_subnetworks=False)
        g.compute.Firewall(
            "mixed",
            network=vpc.id,
            allows=[{"protocol": "tcp", "ports": ["443"]}],
            source_ranges=["10.0.0.0/8"],
            target_tags=["web"],
            target_service_accounts=[SERVER],
        )

    with pytest.raises(Exception, match="target tags and target service accounts"):
        run(program)


def test_gcp_refuses_a_second_active_proxy_only_subnet(run):
    proxy = {"purpose": "REGIONAL_MANAGED_PROXY", "role": "ACTIVE"}
    import pulumi_gcp as g

    def program():
        vpc = g.compute.Network("vpc", auto_create_subnetworks=False)
        for n, cidr in (("p1", "10.2.0.0/23"), ("p2", "10.3.0.0/23")):
            g.compute.Subnetwork(
                n, network=vpc.id, ip_cidr_range=cidr, region="europe-west4", **proxy
            )

    with pytest.raises(Exception, match="already has an ACTIVE proxy-only subnet"):
        run(program)


def test_simulated_error_type_is_the_gcp_one():
    assert issubclass(SimulatedGcpError, Exception)


def test_workbench_domains_get_zones_only_with_a_notebook_tier_and_once(run, governance):
    """A network without a notebook tier (no gcp.Notebook can use it) gets no Workbench
    zones; with one, each Workbench domain is one zone, also when extraPrivateDnsDomains
    repeats it (two private zones of one name on one network would collide)."""

    def dns_names(graph):
        return sorted(
            r.inputs["dnsName"]
            for r in graph.resources
            if r.type == "gcp:dns/managedZone:ManagedZone"
        )

    without = dns_names(run(_stack(governance)))
    assert without == ["gcr.io.", "googleapis.com.", "pkg.dev."]
    with_tier = dns_names(
        run(
            _stack(
                governance, notebook=True, extraPrivateDnsDomains=["kernels.googleusercontent.com"]
            )
        )
    )
    assert with_tier == sorted(
        [
            "gcr.io.",
            "googleapis.com.",
            "pkg.dev.",
            "notebooks.cloud.google.com.",
            "notebooks.googleusercontent.com.",
            "kernels.googleusercontent.com.",
            "notebooks.byoid.googleusercontent.com.",
        ]
    )

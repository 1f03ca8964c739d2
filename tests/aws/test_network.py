"""Network: private GPU subnets only where the GPUs are (C2), tiers kept apart (S1)."""

import fnmatch
import ipaddress
import json
from types import SimpleNamespace

import pulumi
import pytest

from aistack import aws as aistack_aws
from aistack import catalog, cost, policy
from aistack.aws.network import INTERFACE_ENDPOINTS, NETWORK_TIER_TAG
from aistack.aws.network import planning as network_module
from aistack.errors import ConfigError
from tests._harness.shared_graphs import shared

from .conftest import GOVERNANCE, run_in_us_east_1

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("aws-network")

SUBNET = "aws:ec2/subnet:Subnet"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
ASSOCIATION = "aws:ec2/routeTableAssociation:RouteTableAssociation"
ROUTE = "aws:ec2/route:Route"


def _args(governance, **overrides):
    return {
        "governance": governance,
        "region": "us-east-1",
        "trainingInstanceTypes": ["p5.48xlarge"],
        "inferenceInstanceTypes": ["g6e.xlarge"],
        **overrides,
    }


def _network(run, governance, **overrides):
    return run(lambda: aistack_aws.Network("net", _args(governance, **overrides)))


def _shared_network(**overrides):
    # What `_network(run, governance, ...)` builds, for a module-scoped fixture (`run` and
    # `governance` are per test).
    return run_in_us_east_1(
        lambda: aistack_aws.Network("net", _args(dict(GOVERNANCE), **overrides))
    )


@pytest.fixture(scope="module")
def default_network():
    """The default network, built once for the tests that only read it."""
    with shared(_shared_network()) as graph:
        yield graph


@pytest.fixture(scope="module")
def nat_network():
    """The default network with NAT egress, built once for the tests that only read it."""
    with shared(_shared_network(egress="nat")) as graph:
        yield graph


def _subnets(graph, tier):
    return [s for s in graph.of_type(SUBNET) if s.inputs["tags"][NETWORK_TIER_TAG] == tier]


def _zones(graph, tier):
    return sorted(s.inputs["availabilityZone"] for s in _subnets(graph, tier))


def _rules_into(graph, token, group):
    return [r for r in graph.of_type(token) if r.inputs["securityGroupId"] == group.id]


# ---- zones (C2) ---------------------------------------------------------------------------


def test_training_subnets_are_in_exactly_the_catalog_zones_offering_the_type(
    run, governance, default_network
):
    expected = list(catalog.get("p5.48xlarge").zones("us-east-1"))
    assert expected == ["us-east-1a", "us-east-1c", "us-east-1d", "us-east-1f"]
    graph = _network(run, governance, maxZones=4)
    assert _zones(graph, "training") == expected
    capped = default_network
    assert _zones(capped, "training") == expected[:3]


# An older account where one zone name takes no new subnets. EC2 refuses them with
# "InvalidParameterValue: Value (us-east-1c) for parameter availabilityZone is invalid.
# Subnets can currently only be created in the following availability zones: us-east-1d,
# us-east-1a, us-east-1e, us-east-1b." (reported in kz8s/tack#67 and, for the same zone,
# buildkite/elastic-ci-stack-for-aws#156). AZ names map to different physical zones per
# account, so the catalog cannot know; only this account's EC2 can.
RESTRICTED_ACCOUNT_ZONES = ("us-east-1a", "us-east-1b", "us-east-1d", "us-east-1e")


@pytest.fixture
def restricted_account(monkeypatch):
    """The simulated cloud answering as that account: its zone list and offerings lack c."""
    from aistack.engine.cloud import SimulatedCloud

    zones, offerings = SimulatedCloud._aws_zones, SimulatedCloud._aws_offerings

    def account_zones(self, args, provider):
        answer = zones(self, args, provider)
        keep = [i for i, z in enumerate(answer["names"]) if z in RESTRICTED_ACCOUNT_ZONES]
        return {
            **answer,
            "names": [answer["names"][i] for i in keep],
            "zoneIds": [answer["zoneIds"][i] for i in keep],
            "groupNames": [answer["groupNames"][i] for i in keep],
        }

    def account_offerings(self, args, provider):
        answer = offerings(self, args, provider)
        rows = [
            row
            for row in zip(answer["instanceTypes"], answer["locations"], strict=True)
            if args.get("locationType") != "availability-zone" or row[1] in RESTRICTED_ACCOUNT_ZONES
        ]
        return {
            **answer,
            "instanceTypes": [r[0] for r in rows],
            "locations": [r[1] for r in rows],
            "locationTypes": answer["locationTypes"][: len(rows)],
        }

    monkeypatch.setattr(SimulatedCloud, "_aws_zones", account_zones)
    monkeypatch.setattr(SimulatedCloud, "_aws_offerings", account_offerings)


def test_no_subnet_goes_to_a_zone_this_account_does_not_list(run, governance, restricted_account):
    assert "us-east-1c" in catalog.region_zones("aws", "us-east-1")  # the catalog would use it
    graph = _network(run, governance, maxZones=4)
    zones = {s.inputs["availabilityZone"] for s in graph.of_type(SUBNET)}
    assert "us-east-1c" not in zones
    assert zones <= set(RESTRICTED_ACCOUNT_ZONES)
    # p5.48xlarge is in a, c, d and f by the catalog; this account has only a and d of them.
    assert _zones(graph, "training") == ["us-east-1a", "us-east-1d"]
    # Subnets stay named by zone, so a zone the account later gains adds one, renames none.
    assert {s.name for s in _subnets(graph, "training")} == {
        "net-training-us-east-1a",
        "net-training-us-east-1d",
    }


def test_a_type_this_account_offers_nowhere_is_refused_naming_the_field(
    run, governance, restricted_account, monkeypatch
):
    # p4d.24xlarge is in a, b and c by the catalog; this account offers it in none of them.
    from aistack.engine.cloud import SimulatedCloud

    listed = SimulatedCloud._aws_offerings

    def without_p4d(self, args, provider):
        answer = listed(self, args, provider)
        rows = [
            r
            for r in zip(answer["instanceTypes"], answer["locations"], strict=True)
            if r[0] != "p4d.24xlarge"
        ]
        return {**answer, "instanceTypes": [r[0] for r in rows], "locations": [r[1] for r in rows]}

    monkeypatch.setattr(SimulatedCloud, "_aws_offerings", without_p4d)
    with pytest.raises(ConfigError) as error:
        _network(run, governance, trainingInstanceTypes=["p4d.24xlarge"])
    assert "net.trainingInstanceTypes.0" in error.value.fields
    assert "this account offers p4d.24xlarge in none" in str(error.value)


def test_without_an_answer_from_ec2_the_catalog_decides(run, governance, monkeypatch):
    from aistack.engine.cloud import SimulatedCloud

    def no_answer(self, args, provider):
        # How a failed invoke comes back from a provider: a failure, not a result.
        return {}, [("", "no valid credential sources for Pulumi AWS Provider found")]

    monkeypatch.setattr(SimulatedCloud, "_aws_zones", no_answer)
    graph = _network(run, governance, maxZones=4)
    assert _zones(graph, "training") == ["us-east-1a", "us-east-1c", "us-east-1d", "us-east-1f"]


def test_a_second_type_narrows_the_zones_to_those_offering_both(run, governance):
    graph = _network(run, governance, trainingInstanceTypes=["p5.48xlarge", "p4d.24xlarge"])
    # p5.48xlarge: a, c, d, f; p4d.24xlarge: a, b, c.
    assert _zones(graph, "training") == ["us-east-1a", "us-east-1c"]


def test_when_no_zone_offers_every_type_the_zones_offering_any_are_used(governance, monkeypatch):
    zones = {"x.large": ("us-east-1a",), "y.large": ("us-east-1b",)}

    def fake_get(name, cloud=None):
        return SimpleNamespace(
            name=name,
            regions=("us-east-1",),
            offered_in=lambda r: True,
            zones=lambda r: zones[name],
        )

    monkeypatch.setattr(
        network_module,
        "catalog",
        SimpleNamespace(get=fake_get, region_zones=lambda cloud, region: ("us-east-1a",)),
    )
    args = aistack_aws.NetworkArgs.parse(_args(governance, trainingInstanceTypes=list(zones)))
    layout = network_module.plan(args.model_copy(update={"inference_instance_types": ()}))
    assert layout.tiers["training"] == ("us-east-1a", "us-east-1b")
    assert layout.fallback_tiers == ("training",)


def test_availability_zones_override_is_used_when_it_offers_every_type(run, governance):
    graph = _network(
        run, governance, availabilityZones=["us-east-1c"], inferenceInstanceTypes=["g5.xlarge"]
    )
    assert _zones(graph, "training") == ["us-east-1c"]
    assert _zones(graph, "inference") == ["us-east-1c"]


def test_the_load_balancer_spans_two_zones_even_when_inference_has_one(run, governance):
    graph = _network(
        run,
        governance,
        region="us-west-2",
        trainingInstanceTypes=["p4de.24xlarge"],
        inferenceInstanceTypes=["p4de.24xlarge"],
    )
    assert _zones(graph, "inference") == ["us-west-2b"]
    assert _zones(graph, "alb") == ["us-west-2a", "us-west-2b"]


def test_offered_zones_exports_the_deploy_time_offering_lookup(run, governance):
    def program():
        net = aistack_aws.Network("net", _args(governance))
        pulumi.export("offered", net.offered_zones)
        pulumi.export("zones", {"training": net.zones("training")})

    graph = run(program)
    assert graph.stack_outputs["offered"] == {
        "training": ["us-east-1a", "us-east-1c", "us-east-1d", "us-east-1f"],
        "inference": ["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d"],
    }
    assert graph.stack_outputs["zones"] == {"training": ["us-east-1a", "us-east-1c", "us-east-1d"]}


def test_deploy_time_zones_are_the_intersection_else_the_union():
    answer = SimpleNamespace(
        instance_types=["a", "a", "b", "b"], locations=["z1", "z2", "z2", "z3"]
    )
    assert network_module._zones_offering(answer, ["a", "b"]) == ["z2"]
    disjoint = SimpleNamespace(instance_types=["a", "b"], locations=["z1", "z3"])
    assert network_module._zones_offering(disjoint, ["a", "b"]) == ["z1", "z3"]


# ---- addressing ---------------------------------------------------------------------------


def test_no_subnet_assigns_public_ips_and_gpu_subnets_have_no_internet_route(default_network):
    graph = default_network
    subnets = graph.of_type(SUBNET)
    assert subnets and all(s.inputs["mapPublicIpOnLaunch"] is False for s in subnets)
    assert graph.of_type("aws:ec2/internetGateway:InternetGateway") == []
    assert graph.of_type("aws:ec2/natGateway:NatGateway") == []
    assert graph.of_type(ROUTE) == []


def test_tiers_get_distinct_non_overlapping_subnets_inside_the_vpc(default_network):
    graph = default_network
    vpc = ipaddress.ip_network(graph.named("net-vpc").inputs["cidrBlock"])
    blocks = [ipaddress.ip_network(s.inputs["cidrBlock"]) for s in graph.of_type(SUBNET)]
    assert all(b.subnet_of(vpc) for b in blocks)
    assert not any(a.overlaps(b) for i, a in enumerate(blocks) for b in blocks[i + 1 :])
    training = {s.id for s in _subnets(graph, "training")}
    inference = {s.id for s in _subnets(graph, "inference")}
    assert training and inference and not training & inference


def test_a_subnet_keeps_its_cidr_when_zones_or_types_change(run, governance):
    first = _network(run, governance, maxZones=1)
    later = _network(run, governance, maxZones=4, inferenceInstanceTypes=["g5.xlarge"])
    name = "net-training-us-east-1a"
    assert first.named(name).inputs["cidrBlock"] == later.named(name).inputs["cidrBlock"]


def test_vpc_resolves_dns_for_private_endpoints_and_its_default_group_is_emptied(default_network):
    graph = default_network
    vpc = graph.named("net-vpc")
    assert vpc.inputs["enableDnsSupport"] is True and vpc.inputs["enableDnsHostnames"] is True
    default = graph.named("net-default-sg")
    assert default.inputs["ingress"] == [] and default.inputs["egress"] == []


# ---- security groups (S1) -----------------------------------------------------------------


def test_training_group_admits_only_its_own_members(default_network):
    graph = default_network
    training = graph.named("net-training")
    ingress = _rules_into(graph, INGRESS, training)
    assert [r.inputs["referencedSecurityGroupId"] for r in ingress] == [training.id]
    assert ingress[0].inputs["ipProtocol"] == "-1"
    assert not any("cidrIpv4" in r.inputs for r in ingress)


def test_inference_group_admits_only_the_load_balancer_on_the_gateway_port(run, governance):
    graph = _network(run, governance, gatewayPort=9000)
    inference, alb = graph.named("net-inference"), graph.named("net-alb")
    (ingress,) = _rules_into(graph, INGRESS, inference)
    assert ingress.inputs["referencedSecurityGroupId"] == alb.id
    assert (ingress.inputs["ipProtocol"], ingress.inputs["fromPort"], ingress.inputs["toPort"]) == (
        "tcp",
        9000,
        9000,
    )
    (alb_out,) = _rules_into(graph, EGRESS, alb)
    assert alb_out.inputs["referencedSecurityGroupId"] == inference.id


def test_internal_load_balancer_accepts_https_from_the_vpc_only_by_default(default_network):
    graph = default_network
    alb = graph.named("net-alb")
    sources = {
        (r.inputs["fromPort"], r.inputs["cidrIpv4"]) for r in _rules_into(graph, INGRESS, alb)
    }
    assert sources == {(443, "10.40.0.0/16"), (80, "10.40.0.0/16")}
    # Port 80 forwards plain HTTP when the tier has no certificate: its rule says so.
    descriptions = {
        r.inputs["fromPort"]: r.inputs["description"] for r in _rules_into(graph, INGRESS, alb)
    }
    assert descriptions[443] == "HTTPS to the load balancer"
    assert "HTTPS" not in descriptions[80].split("(")[0]


def test_no_rule_lets_inference_or_the_load_balancer_reach_training(default_network):
    graph = default_network
    training = graph.named("net-training")
    serving = {graph.named("net-inference").id, graph.named("net-alb").id}
    sources = {
        r.inputs.get("referencedSecurityGroupId") for r in _rules_into(graph, INGRESS, training)
    }
    assert not sources & serving
    rule = next(r for r in policy.all_rules() if r.id == "AIS-S1-01")
    assert {f.status for f in rule.evaluate(graph)} == {"compliant"}


def test_tiers_have_their_own_security_groups(run, governance):
    def program():
        net = aistack_aws.Network("net", _args(governance, notebook=True))
        pulumi.export(
            "groups", {t: net.security_group_id(t) for t in ("training", "inference", "notebook")}
        )
        pulumi.export("alb", net.alb_security_group_id)

    graph = run(program)
    groups = graph.stack_outputs["groups"]
    assert len({*groups.values(), graph.stack_outputs["alb"]}) == 4
    assert _zones(graph, "notebook") == ["us-east-1a", "us-east-1b", "us-east-1c"]


def test_asking_for_a_tier_the_network_lacks_is_a_config_error(run, governance):
    errors = []

    def program():
        net = aistack_aws.Network("net", _args(governance, inferenceInstanceTypes=[]))
        try:
            net.subnet_ids("inference")
        except ConfigError as error:
            errors.append(error)

    graph = run(program)
    assert errors and "no 'inference' tier" in str(errors[0])
    assert graph.of_type(SECURITY_GROUP) and not any(
        g.name == "net-alb" for g in graph.of_type(SECURITY_GROUP)
    )


# ---- egress -------------------------------------------------------------------------------


def test_s3_gateway_endpoint_is_on_every_private_route_table(run, governance):
    graph = _network(run, governance, egress="nat", publicEndpoint=True)
    private = {s.id for s in graph.of_type(SUBNET) if s.inputs["tags"]["aistack:public"] == "false"}
    tables = {
        a.inputs["routeTableId"]
        for a in graph.of_type(ASSOCIATION)
        if a.inputs["subnetId"] in private
    }
    s3 = graph.named("net-s3")
    assert s3.inputs["vpcEndpointType"] == "Gateway"
    assert s3.inputs["serviceName"] == "com.amazonaws.us-east-1.s3"
    assert tables and set(s3.inputs["routeTableIds"]) == tables
    assert graph.named("net-public").id not in s3.inputs["routeTableIds"]


def test_endpoints_egress_creates_private_dns_interface_endpoints_in_training_subnets(
    default_network,
):
    graph = default_network
    interface = [e for e in graph.of_type(ENDPOINT) if e.inputs["vpcEndpointType"] == "Interface"]
    services = {e.inputs["serviceName"].removeprefix("com.amazonaws.us-east-1.") for e in interface}
    assert services == set(INTERFACE_ENDPOINTS)
    assert {"ecs", "ecs-agent", "ecs-telemetry", "ecr.api", "ecr.dkr", "sts"} <= services
    # The CloudWatch agent publishes nothing until it can call ec2:DescribeTags.
    assert {"ec2", "monitoring"} <= services
    training_subnets = sorted(s.id for s in _subnets(graph, "training"))
    endpoints_group = graph.named("net-endpoints")
    for endpoint in interface:
        assert endpoint.inputs["privateDnsEnabled"] is True
        assert sorted(endpoint.inputs["subnetIds"]) == training_subnets
        assert endpoint.inputs["securityGroupIds"] == [endpoints_group.id]
    allowed = {
        r.inputs["referencedSecurityGroupId"] for r in _rules_into(graph, INGRESS, endpoints_group)
    }
    assert allowed == {graph.named("net-training").id, graph.named("net-inference").id}
    assert {r.inputs["fromPort"] for r in _rules_into(graph, INGRESS, endpoints_group)} == {443}


def test_max_endpoint_zones_puts_endpoints_in_fewer_zones(run, governance):
    graph = _network(run, governance, maxEndpointZones=1)
    ecr = graph.named("net-ecr-api")
    assert ecr.inputs["subnetIds"] == [graph.named("net-training-us-east-1a").id]


def test_nat_egress_uses_one_nat_gateway_in_a_public_subnet_and_no_interface_endpoints(nat_network):
    graph = nat_network
    assert [e.inputs["vpcEndpointType"] for e in graph.of_type(ENDPOINT)] == ["Gateway"]
    (nat,) = graph.of_type("aws:ec2/natGateway:NatGateway")
    public = graph.named("net-public-us-east-1a")
    assert nat.inputs["subnetId"] == public.id
    assert public.inputs["tags"][NETWORK_TIER_TAG] == "public"
    assert public.inputs["mapPublicIpOnLaunch"] is False
    defaults = {r.name: r.inputs for r in graph.of_type(ROUTE)}
    assert defaults.pop("net-public-default")["gatewayId"] == graph.named("net-igw").id
    private_tables = {t.id for t in graph.of_type("aws:ec2/routeTable:RouteTable")} - {
        graph.named("net-public").id
    }
    assert {r["routeTableId"] for r in defaults.values()} == private_tables
    assert {r["natGatewayId"] for r in defaults.values()} == {nat.id}
    # GPU subnets stay private: none is associated with the public route table.
    public_table = graph.named("net-public").id
    gpu = {s.id for t in ("training", "inference") for s in _subnets(graph, t)}
    assert not any(
        a.inputs["subnetId"] in gpu and a.inputs["routeTableId"] == public_table
        for a in graph.of_type(ASSOCIATION)
    )


def test_none_egress_leaves_only_the_s3_gateway(run, governance):
    graph = _network(run, governance, egress="none")
    assert [e.name for e in graph.of_type(ENDPOINT)] == ["net-s3"]
    assert graph.of_type("aws:ec2/natGateway:NatGateway") == []


def test_public_endpoint_adds_public_subnets_for_the_load_balancer_only(run, governance):
    def program():
        net = aistack_aws.Network("net", _args(governance, publicEndpoint=True))
        pulumi.export("alb", net.alb_subnet_ids)
        pulumi.export("public", net.public_subnet_ids)

    graph = run(program)
    public = _subnets(graph, "public")
    assert sorted(s.id for s in public) == sorted(graph.stack_outputs["public"])
    assert graph.stack_outputs["alb"] == graph.stack_outputs["public"]
    assert _zones(graph, "public") == _zones(graph, "inference")
    assert _subnets(graph, "alb") == []
    alb = graph.named("net-alb")
    assert {r.inputs["cidrIpv4"] for r in _rules_into(graph, INGRESS, alb)} == {"0.0.0.0/0"}
    assert graph.named("net-igw")


# ---- flow logs ----------------------------------------------------------------------------


def test_flow_logs_go_to_a_kms_encrypted_retained_log_group(run, governance, default_network):
    graph = default_network
    flow = graph.named("net-flow-log")
    group = graph.named("net-flow-logs")
    key = graph.named("net-flow-log-key")
    assert flow.inputs["trafficType"] == "ALL"
    assert flow.inputs["vpcId"] == graph.named("net-vpc").id
    assert flow.inputs["logDestination"] == group.outputs["arn"]
    assert group.inputs["retentionInDays"] == 90
    assert group.inputs["kmsKeyId"] == key.outputs["arn"]
    assert key.inputs["enableKeyRotation"] is True
    assert group.retain_on_delete and key.retain_on_delete
    key_policy = json.loads(key.inputs["policy"])
    logs = next(
        s for s in key_policy["Statement"] if s["Sid"] == "CloudWatchLogsUseForFlowLogGroup"
    )
    # Kept on destroy, so named from a prefix: a fixed name would make the next `pulumi up`
    # fail with ResourceAlreadyExistsException (CloudWatch Logs CreateLogGroup).
    assert "name" not in group.inputs
    assert group.inputs["namePrefix"] == "/aistack/aistack-dev/net/vpc-flow-logs-"
    assert group.inputs["skipDestroy"] is True
    # The key exists before the group, so its policy names the prefix (ArnLike).
    pattern = logs["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"]
    assert pattern == (
        "arn:aws:logs:us-east-1:123456789012:log-group:/aistack/aistack-dev/net/vpc-flow-logs-*"
    )
    assert fnmatch.fnmatchcase(group.outputs["arn"], pattern)
    assert not fnmatch.fnmatchcase(
        "arn:aws:logs:us-east-1:123456789012:log-group:/aistack/aistack-dev/training", pattern
    )
    custom = _network(run, governance, flowLogRetentionDays=365)
    assert custom.named("net-flow-logs").inputs["retentionInDays"] == 365


def test_flow_log_role_trusts_only_this_accounts_flow_logs_and_writes_one_group(default_network):
    graph = default_network
    role = graph.named("net-flow-logs-role")
    (trust,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert trust["Principal"] == {"Service": "vpc-flow-logs.amazonaws.com"}
    assert trust["Condition"]["StringEquals"] == {"aws:SourceAccount": "123456789012"}
    group_arn = graph.named("net-flow-logs").outputs["arn"]
    policy_doc = json.loads(graph.named("net-flow-logs-delivery").inputs["policy"])
    write = next(s for s in policy_doc["Statement"] if s["Sid"] == "WriteFlowLogGroup")
    assert write["Resource"] == [group_arn, group_arn + ":*"]
    assert "logs:CreateLogGroup" not in write["Action"]
    assert all("*" not in a for s in policy_doc["Statement"] for a in s["Action"])
    assert graph.named("net-flow-log").inputs["iamRoleArn"] == role.outputs["arn"]


def test_every_taggable_resource_carries_the_governance_tags(nat_network):
    graph = nat_network
    untaggable = {ASSOCIATION, ROUTE, "aws:iam/rolePolicy:RolePolicy"}
    for resource in graph.resources:
        if resource.custom and resource.type not in untaggable:
            tags = resource.inputs.get("tags") or {}
            assert tags.get("aistack:owner") == "ml-platform", resource.name


# ---- configuration errors -----------------------------------------------------------------


def _error(governance, **overrides) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        aistack_aws.Network("net", _args(governance, **overrides))
    return caught.value


def test_region_outside_the_allowed_regions_is_refused(governance):
    error = _error(governance, region="eu-west-2")
    assert "net.region" in error.fields and "C4" in str(error)


def test_a_type_not_offered_in_the_region_names_the_regions_that_offer_it(governance):
    error = _error(
        {**governance, "allowedRegions": ["eu-west-1"]},
        region="eu-west-1",
        inferenceInstanceTypes=["g4dn.xlarge"],
    )
    assert error.fields == ["net.trainingInstanceTypes.0"]
    assert "not offered in eu-west-1" in str(error)
    for region in catalog.get("p5.48xlarge").regions:
        assert region in str(error)


def test_an_unknown_instance_type_is_refused_with_a_suggestion(governance):
    error = _error(governance, inferenceInstanceTypes=["g6e.xlarg"])
    assert error.fields == ["net.inferenceInstanceTypes.0"]
    assert "g6e.xlarge" in str(error)


@pytest.mark.parametrize(
    ("cidr", "why"),
    [
        ("10.40.0.1/16", "host bits"),
        ("8.8.0.0/16", "not a private range"),
        ("10.40.0.0/24", "/24"),
        ("10.40.0.0", "/16 (AWS"),
        ("banana", "not a CIDR"),
    ],
)
def test_bad_cidr_blocks_are_refused(governance, cidr, why):
    error = _error(governance, cidrBlock=cidr)
    assert error.fields == ["net.cidrBlock"] and why in str(error)


def test_an_override_zone_that_does_not_offer_the_type_is_refused(governance):
    error = _error(governance, availabilityZones=["us-east-1b", "us-west-2a"])
    assert set(error.fields) == {"net.availabilityZones.0", "net.availabilityZones.1"}
    assert "us-east-1b does not offer ['p5.48xlarge']" in str(error)
    assert "not a zone of us-east-1" in str(error)
    reordered = _error(governance, availabilityZones=["us-east-1c", "us-east-1b"])
    assert reordered.fields == ["net.availabilityZones.1"]


def test_every_problem_is_reported_at_once_and_nothing_is_created(run, governance):
    errors = []

    def program():
        try:
            aistack_aws.Network(
                "net",
                _args(
                    governance,
                    region="eu-west-2",
                    cidrBlock="10.0.0.0/8",
                    flowLogRetentionDays=100,
                    trainingInstanceTypes=["nope"],
                    bogus=True,
                ),
            )
        except ConfigError as error:
            errors.append(error)

    graph = run(program)
    assert graph.resources == []
    assert {"net.cidrBlock", "net.flowLogRetentionDays", "net.bogus"} <= set(errors[0].fields)
    plan_error = _error(governance, region="eu-west-2", trainingInstanceTypes=["nope"])
    assert {"net.region", "net.trainingInstanceTypes.0"} <= set(plan_error.fields)


def test_a_network_without_gpu_types_is_refused(governance):
    error = _error(governance, trainingInstanceTypes=[], inferenceInstanceTypes=[])
    assert error.fields == ["net.trainingInstanceTypes"]


# ---- cost ---------------------------------------------------------------------------------


def test_cost_counts_endpoints_per_zone_against_a_nat_per_zone_naive_baseline(default_network):
    graph = default_network
    items = cost.estimate(graph, cost.WorkloadProfile(dataset_storage_gb=1000)).items
    by_type: dict[str, list] = {}
    for item in items:
        by_type.setdefault(item.resource_type, []).append(item)
    (vpc,) = by_type["aws:ec2/vpc:Vpc"]
    # Subnets span zones a, b, c, d: four naive NAT gateways plus 4 TB through them.
    assert vpc.monthly_usd == 0
    assert vpc.naive_monthly_usd == pytest.approx(4 * 730 * 0.05 + 4000 * 0.045, abs=0.01)
    endpoints = [i for i in by_type[ENDPOINT] if i.monthly_usd > 0]
    assert len(endpoints) == len(INTERFACE_ENDPOINTS)
    assert all(i.monthly_usd == pytest.approx(3 * 730 * 0.01) for i in endpoints)
    assert [i.monthly_usd for i in by_type[ENDPOINT] if i.resource == "net-s3"] == [0]
    (flow,) = by_type["aws:ec2/flowLog:FlowLog"]
    assert 0 < flow.monthly_usd < 5


def test_cost_of_nat_egress_is_one_gateway(nat_network):
    graph = nat_network
    items = [
        i for i in cost.estimate(graph).items if i.resource_type == "aws:ec2/natGateway:NatGateway"
    ]
    assert len(items) == 1
    assert items[0].monthly_usd == pytest.approx(730 * 0.05 + 50 * 0.045, abs=0.01)
    assert items[0].naive_monthly_usd == 0

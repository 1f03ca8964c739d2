"""AIS-S1-01: training and inference do not share subnets or security groups, and nothing
on the inference side (nodes or load balancer) may open a connection to training nodes.

Training nodes hold data, checkpoints and broad S3 access; inference nodes face users. If
an inference node or the load balancer can reach a training node, one compromised request
path reaches the training data. What is training or inference is read from the
`aistack:network-tier` tag (aws.Network), else from `aistack:workload`; Batch compute
environments without a tag count as training. Load balancers count as inference.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from aistack.config import WORKLOAD_TAG
from aistack.contracts.aws import NETWORK_TIER_TAG
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import as_list
from aistack.queries.aws_capacity import (
    AUTO_SCALING_GROUP,
    BATCH_COMPUTE_ENVIRONMENT,
    launch_template,
    subnets_by_id,
)

SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
LEGACY_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
ECS_SERVICE = "aws:ecs/service:Service"
LOAD_BALANCERS = ("aws:lb/loadBalancer:LoadBalancer", "aws:alb/loadBalancer:LoadBalancer")
INFERENCE_SIDE = ("inference", "alb")


def _tags(resource: Resource) -> dict[str, str]:
    raw = resource.inputs.get("tags")
    if isinstance(raw, dict):
        return {str(k): str(v) for k, v in raw.items()}
    # Auto Scaling groups carry tags as a list of {key, value, propagateAtLaunch}.
    return {str(t.get("key")): str(t.get("value")) for t in as_list(raw) if isinstance(t, dict)}


def _tier(resource: Resource) -> str | None:
    tags = _tags(resource)
    return tags.get(NETWORK_TIER_TAG) or tags.get(WORKLOAD_TAG)


@dataclass
class _Capacity:
    resource: Resource
    tier: str | None
    subnets: set[str]
    groups: set[str]


def _template_network(template: Resource | None) -> tuple[set[str], set[str], str | None]:
    if template is None:
        return set(), set(), None
    groups = {str(g) for g in as_list(template.inputs.get("vpcSecurityGroupIds"))}
    subnets: set[str] = set()
    for interface in as_list(template.inputs.get("networkInterfaces")):
        groups |= {str(g) for g in as_list(interface.get("securityGroups"))}
        if interface.get("subnetId"):
            subnets.add(str(interface["subnetId"]))
    tier = _tier(template)
    for spec in as_list(template.inputs.get("tagSpecifications")):
        tags = spec.get("tags") or {}
        tier = tier or tags.get(NETWORK_TIER_TAG) or tags.get(WORKLOAD_TAG)
    return subnets, groups, tier


def _capacity(graph: StackGraph) -> Iterator[_Capacity]:
    for environment in graph.of_type(BATCH_COMPUTE_ENVIRONMENT):
        compute = environment.inputs.get("computeResources") or {}
        template = launch_template(graph, compute.get("launchTemplate"))
        t_subnets, t_groups, t_tier = _template_network(template)
        tier = _tier(environment) or (compute.get("tags") or {}).get(WORKLOAD_TAG) or t_tier
        yield _Capacity(
            environment,
            tier or "training",
            {str(s) for s in as_list(compute.get("subnets"))} | t_subnets,
            {str(g) for g in as_list(compute.get("securityGroupIds"))} | t_groups,
        )
    for group in graph.of_type(AUTO_SCALING_GROUP):
        spec = group.inputs.get("launchTemplate")
        mixed = (group.inputs.get("mixedInstancesPolicy") or {}).get("launchTemplate") or {}
        template = launch_template(graph, spec) or launch_template(
            graph, mixed.get("launchTemplateSpecification")
        )
        t_subnets, t_groups, t_tier = _template_network(template)
        yield _Capacity(
            group,
            _tier(group) or t_tier,
            {str(s) for s in as_list(group.inputs.get("vpcZoneIdentifiers"))} | t_subnets,
            t_groups,
        )
    for service in graph.of_type(ECS_SERVICE):
        network = service.inputs.get("networkConfiguration") or {}
        yield _Capacity(
            service,
            _tier(service),
            {str(s) for s in as_list(network.get("subnets"))},
            {str(g) for g in as_list(network.get("securityGroups"))},
        )


@dataclass(frozen=True)
class _Ingress:
    rule: Resource
    target: str
    source_group: str | None
    cidr: str | None


def _ingress_rules(graph: StackGraph) -> Iterator[_Ingress]:
    for item in graph.of_type(INGRESS_RULE):
        yield _Ingress(
            item,
            str(item.inputs.get("securityGroupId")),
            item.inputs.get("referencedSecurityGroupId"),
            item.inputs.get("cidrIpv4"),
        )
    for item in graph.of_type(LEGACY_RULE):
        if item.inputs.get("type") != "ingress":
            continue
        target = str(item.inputs.get("securityGroupId"))
        source = item.inputs.get("sourceSecurityGroupId") or (
            target if item.inputs.get("self") else None
        )
        yield _Ingress(item, target, source, None)
        for cidr in as_list(item.inputs.get("cidrBlocks")):
            yield _Ingress(item, target, None, str(cidr))
    for group in graph.of_type(SECURITY_GROUP):
        for inline in as_list(group.inputs.get("ingress")):
            sources = [str(g) for g in as_list(inline.get("securityGroups"))]
            if inline.get("self"):
                sources.append(group.id)
            for source in sources:
                yield _Ingress(group, group.id, source, None)
            for cidr in as_list(inline.get("cidrBlocks")):
                yield _Ingress(group, group.id, None, str(cidr))


def _networks(cidrs: Iterable[str]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    found = []
    for cidr in cidrs:
        try:
            found.append(ipaddress.ip_network(cidr, strict=False))
        except ValueError:
            continue
    return found


def _names(graph: StackGraph, ids: Iterable[str], table: dict[str, Resource]) -> str:
    return ", ".join(sorted(table[i].name if i in table else i for i in ids))


@rule(
    id="AIS-S1-01",
    checklist=["S1"],
    info="Training and inference use disjoint subnets and security groups, and no rule lets "
    "inference nodes or the load balancer connect to training nodes.",
    why="Serving faces users; training holds the data. A shared subnet or group, or one "
    "ingress rule from the serving side, turns a compromised endpoint into access to "
    "training nodes, their credentials and their data.",
    fix="Use aws.Network: separate training and inference subnets and groups. Remove "
    "training-group ingress from inference or load-balancer groups and from CIDRs covering "
    "their subnets; give each side its own subnets and security groups.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    subnets = subnets_by_id(graph)
    groups = {g.id: g for g in graph.of_type(SECURITY_GROUP)}
    capacity = list(_capacity(graph))

    training_groups = {g for g, r in groups.items() if _tier(r) == "training"}
    serving_groups = {g for g, r in groups.items() if _tier(r) in INFERENCE_SIDE}
    training_subnets = {s for s, r in subnets.items() if _tier(r) == "training"}
    serving_subnets = {s for s, r in subnets.items() if _tier(r) in INFERENCE_SIDE}
    for item in capacity:
        if item.tier == "training":
            training_groups |= item.groups
            training_subnets |= item.subnets
        elif item.tier == "inference":
            serving_groups |= item.groups
            serving_subnets |= item.subnets
    for balancer in (r for token in LOAD_BALANCERS for r in graph.of_type(token)):
        serving_groups |= {str(g) for g in as_list(balancer.inputs.get("securityGroups"))}
        serving_subnets |= {str(s) for s in as_list(balancer.inputs.get("subnets"))}
        serving_subnets |= {
            str(m["subnetId"])
            for m in as_list(balancer.inputs.get("subnetMappings"))
            if m.get("subnetId")
        }
    if not (serving_groups or serving_subnets) or not (training_groups or training_subnets):
        return  # nothing to keep apart

    serving_cidrs = {
        s: network
        for s in serving_subnets
        if s in subnets
        for network in _networks([subnets[s].inputs.get("cidrBlock", "")])
    }
    rules = [r for r in _ingress_rules(graph) if r.target in training_groups]

    for group_id in sorted(training_groups & set(groups)):
        group = groups[group_id]
        problems = []
        if group_id in serving_groups:
            problems.append("the group is also used on the inference side")
        for ingress in (r for r in rules if r.target == group_id):
            if ingress.source_group and ingress.source_group in serving_groups:
                source = _names(graph, [ingress.source_group], groups)
                problems.append(f"{ingress.rule.name} admits inference-side group {source}")
            if ingress.cidr:
                covered = [
                    subnets[s].name
                    for s, network in serving_cidrs.items()
                    for allowed in _networks([ingress.cidr])
                    if allowed.version == network.version and allowed.overlaps(network)
                ]
                if covered:
                    problems.append(
                        f"{ingress.rule.name} admits {ingress.cidr}, which covers inference "
                        f"subnet(s) {', '.join(sorted(covered))}"
                    )
        if problems:
            yield fail(group, "training security group: " + "; ".join(problems) + ".")
        else:
            yield ok(group, "training security group admits nothing from the inference side.")

    for item in (c for c in capacity if c.tier == "training"):
        shared_subnets = item.subnets & serving_subnets
        shared_groups = item.groups & serving_groups
        problems = []
        if shared_subnets:
            problems.append(
                "shares subnet(s) with inference: " + _names(graph, shared_subnets, subnets)
            )
        if shared_groups:
            problems.append(
                "shares security group(s) with inference: " + _names(graph, shared_groups, groups)
            )
        if problems:
            yield fail(item.resource, "training capacity " + "; ".join(problems) + ".")
        else:
            yield ok(item.resource, "training capacity has its own subnets and security groups.")

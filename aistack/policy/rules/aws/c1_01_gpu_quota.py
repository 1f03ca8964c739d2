"""AIS-C1-01: every GPU capacity resource is covered by a vCPU quota request big enough.

Capacity is what can launch GPU instances: Batch compute environments, Auto Scaling groups
(instance type from the launch template or the mixed-instances overrides), EKS managed
node groups, Karpenter NodePools (their cpu limit, in the region aws.KarpenterGpuPool
records) and single EC2 instances. Each is sized at its maximum in vCPUs, per EC2
quota code (family group x market); capacities sharing a quota in a region are summed,
because they draw on it together. The stack must hold an `aws:servicequotas` ServiceQuota
for that code and region whose value covers the sum.

Only instance types in the aistack GPU catalog are counted; a type outside it (a CPU type,
or a GPU family the catalog does not cover) is not GPU capacity to this rule.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from aistack import catalog
from aistack.contracts.k8s import REGION_ANNOTATION
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import as_list, region_of

SERVICE_QUOTA = "aws:servicequotas/serviceQuota:ServiceQuota"
BATCH = "aws:batch/computeEnvironment:ComputeEnvironment"
ASG = "aws:autoscaling/group:Group"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
INSTANCE = "aws:ec2/instance:Instance"
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
#: Where aws.KarpenterGpuPool records a NodePool's region (no Karpenter field holds it).


@dataclass
class _Capacity:
    resource: Resource
    region: str
    #: quota code -> (vCPUs at the maximum, how that number comes about)
    needs: dict[str, tuple[int, str]] = field(default_factory=dict)

    def add(self, quota: catalog.QuotaCode, vcpus: int, basis: str) -> None:
        current = self.needs.get(quota.quota_code)
        if current is None or vcpus > current[0]:
            self.needs[quota.quota_code] = (vcpus, basis)


def _int(value: Any) -> int | None:  # noqa: ANN401 - any recorded value; int() decides
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _gpu_type(name: object) -> catalog.InstanceType | None:
    if not isinstance(name, str):
        return None
    found = catalog.find("aws", name)
    return found if found is not None and found.quota_group else None


def _family_type(name: str) -> catalog.InstanceType | None:
    """Batch accepts whole families ('g5'): the family's largest type stands for it."""
    members = [t for t in catalog.instance_types("aws") if t.family == name.strip().lower()]
    return max(members, key=lambda t: t.vcpus) if members else None


def _launch_templates(graph: StackGraph) -> dict[str, Resource]:
    index: dict[str, Resource] = {}
    for template in graph.of_type(LAUNCH_TEMPLATE):
        for key in (
            template.id,
            template.outputs.get("id"),
            template.outputs.get("name"),
            template.inputs.get("name"),
        ):
            if key:
                index[str(key)] = template
    return index


def _template(templates: dict[str, Resource], spec: object, *keys: str) -> Resource | None:
    if not isinstance(spec, dict):
        return None
    for key in keys:
        if spec.get(key) and str(spec[key]) in templates:
            return templates[str(spec[key])]
    return None


def _type_of(template: Resource | None) -> object:
    return template.get("instanceType") if template else None


def _template_market(template: Resource | None) -> str:
    market = template.get("instanceMarketOptions", "marketType") if template else None
    return "spot" if str(market or "").lower() == "spot" else "on-demand"


def _batch(resource: Resource, capacity: _Capacity) -> None:
    resources = resource.inputs.get("computeResources") or {}
    kind = str(resources.get("type", "")).upper()
    if kind not in ("EC2", "SPOT"):
        return  # Fargate runs no GPUs.
    market = "spot" if kind == "SPOT" else "on-demand"
    max_vcpus = _int(resources.get("maxVcpus"))
    if not max_vcpus:
        return
    for entry in as_list(resources.get("instanceTypes")):
        t = _gpu_type(entry) or (_family_type(entry) if isinstance(entry, str) else None)
        if t is not None:
            # Batch caps the whole environment at maxVcpus, whichever types it picks.
            capacity.add(
                catalog.vcpu_quota(t.name, cast("catalog.Market", market)),
                max_vcpus,
                f"maxVcpus {max_vcpus}",
            )


def _asg(resource: Resource, capacity: _Capacity, templates: dict[str, Resource]) -> None:
    max_size = _int(resource.inputs.get("maxSize"))
    if not max_size:
        return
    mixed = resource.inputs.get("mixedInstancesPolicy")
    # (instance type, weight) pairs the group may launch, and units per market.
    choices: list[tuple[str, int]] = []
    if isinstance(mixed, dict):
        launch = mixed.get("launchTemplate") or {}
        base = _template(
            templates,
            launch.get("launchTemplateSpecification"),
            "launchTemplateId",
            "launchTemplateName",
        )
        for override in as_list(launch.get("overrides")):
            if not isinstance(override, dict):
                continue
            template = _template(
                templates,
                override.get("launchTemplateSpecification"),
                "launchTemplateId",
                "launchTemplateName",
            )
            instance_type = override.get("instanceType") or _type_of(template or base)
            choices.append((str(instance_type), _int(override.get("weightedCapacity")) or 1))
        if not choices and base is not None:
            choices.append((str(_type_of(base)), 1))
        units = _mixed_units(max_size, mixed.get("instancesDistribution") or {})
    else:
        template = _template(templates, resource.inputs.get("launchTemplate"), "id", "name")
        if template is None:
            return
        choices.append((str(_type_of(template)), 1))
        units = {_template_market(template): max_size}
    for market, count in units.items():
        for instance_type, weight in choices:
            t = _gpu_type(instance_type)
            if t is None or count <= 0:
                continue
            nodes = math.ceil(count / weight)
            capacity.add(
                catalog.vcpu_quota(t.name, market),  # type: ignore[arg-type]
                nodes * t.vcpus,
                f"maxSize {max_size}: up to {nodes} x {t.name} {market}",
            )


def _mixed_units(max_size: int, distribution: dict[str, Any]) -> dict[str, int]:
    """Capacity units each market may reach at maxSize. Rounded so that each market gets
    its own worst case: the split can land either way by one instance."""
    base = _int(distribution.get("onDemandBaseCapacity")) or 0
    percent = distribution.get("onDemandPercentageAboveBaseCapacity")
    percent = 100 if percent is None else _int(percent) or 0
    above = max(0, max_size - base)
    on_demand = min(max_size, base) + math.ceil(above * percent / 100)
    spot = above - math.floor(above * percent / 100)
    return {"on-demand": on_demand, "spot": spot}


def _node_group(resource: Resource, capacity: _Capacity, templates: dict[str, Resource]) -> None:
    max_size = _int(resource.get("scalingConfig", "maxSize"))
    if not max_size:
        return
    market = "spot" if str(resource.inputs.get("capacityType", "")).upper() == "SPOT" else None
    types = as_list(resource.inputs.get("instanceTypes"))
    if not types:
        template = _template(templates, resource.inputs.get("launchTemplate"), "id", "name")
        types = [_type_of(template)]
    for instance_type in types:
        t = _gpu_type(instance_type)
        if t is not None:
            capacity.add(
                catalog.vcpu_quota(t.name, cast("catalog.Market", market or "on-demand")),
                max_size * t.vcpus,
                f"maxSize {max_size} x {t.name}",
            )


def _instance(resource: Resource, capacity: _Capacity, templates: dict[str, Resource]) -> None:
    template = _template(templates, resource.inputs.get("launchTemplate"), "id", "name")
    instance_type = resource.inputs.get("instanceType") or _type_of(template)
    t = _gpu_type(instance_type)
    if t is None:
        return
    options = resource.inputs.get("instanceMarketOptions")
    # An instance's marketType defaults to spot once instanceMarketOptions is set.
    own = (options.get("marketType") or "spot") if isinstance(options, dict) and options else ""
    market = "spot" if str(own).lower() == "spot" else _template_market(template)
    capacity.add(catalog.vcpu_quota(t.name, market), t.vcpus, f"1 x {t.name}")  # type: ignore[arg-type]


def _karpenter(resource: Resource, capacity: _Capacity) -> None:
    """A NodePool launches at most its `limits.cpu` in vCPUs, of the instance types and
    capacity types its requirements allow; without a capacity-type requirement Karpenter
    launches on-demand (karpenter.sh docs, NodePools: "karpenter.sh/capacity-type ... If
    not included, the webhook for the AWS cloud provider will default to on-demand")."""
    from aistack.queries.k8s import parse_quantity

    spec = resource.inputs.get("spec") or {}
    limit = (spec.get("limits") or {}).get("cpu")
    if limit is None:
        return  # AIS-C3-10 fails a NodePool without a cpu limit: it has no maximum.
    vcpus = math.floor(parse_quantity(limit))
    requirements = ((spec.get("template") or {}).get("spec") or {}).get("requirements") or []

    def allowed(key: str) -> list[str]:
        return [
            str(value)
            for requirement in requirements
            if isinstance(requirement, dict)
            and requirement.get("key") == key
            and requirement.get("operator") == "In"
            for value in requirement.get("values") or []
        ]

    markets = allowed("karpenter.sh/capacity-type") or ["on-demand"]
    for market in markets:
        for instance_type in allowed("node.kubernetes.io/instance-type"):
            t = _gpu_type(instance_type)
            if t is not None and market in ("spot", "on-demand"):
                capacity.add(
                    catalog.vcpu_quota(t.name, cast("catalog.Market", market)),
                    vcpus,
                    f"limits.cpu {limit}",
                )


def capacities(graph: StackGraph) -> list[_Capacity]:
    """Every GPU capacity resource in the stack with its vCPU need per quota code."""
    templates = _launch_templates(graph)
    found = []
    for resource in graph.resources:
        capacity = _Capacity(resource, region_of(resource) or "")
        if resource.type == BATCH:
            _batch(resource, capacity)
        elif resource.type == ASG:
            _asg(resource, capacity, templates)
        elif resource.type == NODE_GROUP:
            _node_group(resource, capacity, templates)
        elif resource.type == INSTANCE:
            _instance(resource, capacity, templates)
        elif resource.type == KARPENTER_NODE_POOL:
            annotations = (resource.inputs.get("metadata") or {}).get("annotations") or {}
            capacity.region = str(annotations.get(REGION_ANNOTATION) or "")
            _karpenter(resource, capacity)
        if capacity.needs:
            found.append(capacity)
    return found


def _requested(graph: StackGraph) -> dict[tuple[str, str], float]:
    """(region, quota code) -> the highest value any EC2 ServiceQuota requests."""
    values: dict[tuple[str, str], float] = {}
    for quota in graph.of_type(SERVICE_QUOTA):
        if quota.inputs.get("serviceCode") != "ec2":
            continue
        try:
            value = float(quota.inputs.get("value"))  # type: ignore[arg-type]  # None: TypeError
        except (TypeError, ValueError):
            continue
        key = (region_of(quota) or "", str(quota.inputs.get("quotaCode")))
        values[key] = max(values.get(key, 0.0), value)
    return values


def _quota_name(code: str) -> str:
    for t in catalog.instance_types("aws"):
        for market in ("on-demand", "spot"):
            quota = catalog.vcpu_quota(t.name, market)  # type: ignore[arg-type]
            if quota.quota_code == code:
                return quota.quota_name
    return code


@rule(
    id="AIS-C1-01",
    checklist=["C1"],
    info="Every GPU capacity resource has a vCPU quota request covering its maximum.",
    why="A new account's GPU vCPU quotas are often smaller than one large instance; "
    "without a request filed ahead, the first scale-up fails with "
    "VcpuLimitExceeded or MaxSpotInstanceCountExceeded, and a P-instance increase "
    "can take days to approve.",
    fix="Add aws.GpuQuota sized from the pools (needs or pools=), or an "
    "aws.servicequotas.ServiceQuota (serviceCode 'ec2') for the quota code named, in the "
    "capacity's region, with a value at least the stated total.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    found = capacities(graph)
    totals: dict[tuple[str, str], int] = {}
    sharing: dict[tuple[str, str], list[str]] = {}
    for capacity in found:
        for code, (vcpus, _) in capacity.needs.items():
            key = (capacity.region, code)
            totals[key] = totals.get(key, 0) + vcpus
            sharing.setdefault(key, []).append(capacity.resource.name)
    requested = _requested(graph)
    for capacity in found:
        problems, fine = [], []
        for code, (vcpus, basis) in sorted(capacity.needs.items()):
            key = (capacity.region, code)
            total = totals[key]
            others = [n for n in sharing[key] if n != capacity.resource.name]
            detail = basis + (f"; {total} together with {', '.join(others)}" if others else "")
            where = capacity.region or (
                f"an unknown region (annotate the NodePool {REGION_ANNOTATION})"
            )
            what = f"{code} ({_quota_name(code)}) in {where}"
            need = f"{vcpus} vCPUs of {what} ({detail})"
            have = requested.get(key)
            if have is None:
                problems.append(
                    f"needs {need}, but no ServiceQuota requests it: shortfall {total} vCPUs."
                )
            elif have < total:
                problems.append(
                    f"needs {need}, but the ServiceQuota requests {have:g}: "
                    f"shortfall {math.ceil(total - have)} vCPUs."
                )
            else:
                fine.append(f"{what}: {have:g} vCPUs requested, {total} needed.")
        if problems:
            yield fail(capacity.resource, " ".join(problems))
        else:
            yield ok(capacity.resource, " ".join(fine))

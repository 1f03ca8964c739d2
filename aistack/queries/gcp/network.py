"""VPC networking (S1) and GPU placement (C2): firewall rules, subnets, zones."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aistack.contracts.gcp import TIER_MARK
from aistack.engine.graph import Resource, StackGraph
from aistack.queries.gcp.common import (
    _ZONE,
    GCE_INSTANCE,
    INSTANCE_GROUP_MANAGERS,
    INSTANCE_TEMPLATES,
    NODE_POOL,
    _machine_type,
    _region_of_location,
)

FIREWALL = "gcp:compute/firewall:Firewall"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
#: Subnet purposes that hold no VMs: load balancer proxies (flow logs and Private Google
#: Access do not apply; checkov's CKV_GCP_26/74 skip them too).
PROXY_PURPOSES = ("INTERNAL_HTTPS_LOAD_BALANCER", "REGIONAL_MANAGED_PROXY", "GLOBAL_MANAGED_PROXY")
_WORLD = ("0.0.0.0/0", "::/0")
_TIER_IN_DESCRIPTION = re.compile(re.escape(TIER_MARK) + r"([a-z-]+)")


def network_tier(resource: Resource) -> str | None:
    """The tier gcp.Network wrote into a subnet's or firewall rule's description."""
    match = _TIER_IN_DESCRIPTION.match(str(resource.inputs.get("description") or ""))
    return match.group(1) if match else None


def firewall_allows(resource: Resource) -> list[dict[str, Any]]:
    return [a for a in resource.inputs.get("allows") or [] if isinstance(a, dict)]


def is_ingress(resource: Resource) -> bool:
    return str(resource.inputs.get("direction") or "INGRESS").upper() == "INGRESS"


def open_to_world(resource: Resource) -> bool:
    """An ingress rule admitting any address: 0.0.0.0/0 (or ::/0) among its sources, or no
        source at all (an ingress rule without source ranges, tags or service accounts applies to
    0.0.0.0/0: `gcloud compute firewall-rules create --source-ranges` reference)."""
    ranges = [str(r) for r in resource.inputs.get("sourceRanges") or []]
    if any(r in _WORLD for r in ranges):
        return True
    return not (
        ranges or resource.inputs.get("sourceTags") or resource.inputs.get("sourceServiceAccounts")
    )


def allows_port(allow: dict[str, Any], port: int) -> bool:
    """Whether one `allows` entry admits TCP `port`: protocol all, or tcp with no ports (every
    port), a matching port or a range covering it."""
    protocol = str(allow.get("protocol") or "").lower()
    if protocol not in ("all", "tcp", "6"):
        return False
    ports = [str(p) for p in allow.get("ports") or []]
    if not ports:
        return True
    for spec in ports:
        low, _, high = spec.partition("-")
        try:
            if int(low) <= port <= int(high or low):
                return True
        except ValueError:
            continue
    return False


def machine_type_zones(machine_type: str, region: str) -> set[str] | None:
    """The catalog's zones of `region` offering `machine_type`; None when not catalogued."""
    from aistack import catalog

    entry = catalog.find("gcp", machine_type)
    if entry is None:
        return None
    return set(entry.zones(region)) if entry.offered_in(region) else set()


@dataclass(frozen=True)
class GpuPlacement:
    """Zones a GPU machine type is asked to run in: a node pool's node locations, an
    instance's zone, a managed instance group's zone or distribution zones."""

    resource: Resource
    machine_type: str
    region: str
    zones: tuple[str, ...]


def gpu_placements(graph: StackGraph) -> list[GpuPlacement]:
    """Every placement of a catalogued GCP GPU machine type in explicit zones."""
    from aistack import catalog

    found: list[GpuPlacement] = []

    def add(res: Resource, machine: str | None, zones: list[str]) -> None:
        zones = [z for z in zones if _ZONE.fullmatch(z)]
        if machine and zones and catalog.find("gcp", machine) is not None:
            found.append(GpuPlacement(res, machine, _region_of_location(zones[0]), tuple(zones)))

    for res in graph.of_type(GCE_INSTANCE):
        add(res, _machine_type(res.inputs.get("machineType")), [str(res.inputs.get("zone") or "")])
    for res in graph.of_type(NODE_POOL):
        config = res.inputs.get("nodeConfig") or {}
        zones = [str(z) for z in res.inputs.get("nodeLocations") or []]
        if not zones:
            zones = [str(res.inputs.get("location") or "")]
        add(res, _machine_type(config.get("machineType")), zones)
    templates: dict[str, Resource] = {}
    for res in graph.resources:
        if res.type in INSTANCE_TEMPLATES:
            for key in ("selfLink", "id", "selfLinkUnique", "name"):
                if res.outputs.get(key):
                    templates[str(res.outputs[key])] = res
            templates[res.id] = res
    for res in graph.resources:
        if res.type not in INSTANCE_GROUP_MANAGERS:
            continue
        zones = [str(z) for z in res.inputs.get("distributionPolicyZones") or []]
        if not zones and res.inputs.get("zone"):
            zones = [str(res.inputs["zone"])]
        for version in res.inputs.get("versions") or []:
            template = templates.get(str(version.get("instanceTemplate") or ""))
            if template is not None:
                add(res, _machine_type(template.inputs.get("machineType")), zones)
                break
    return found

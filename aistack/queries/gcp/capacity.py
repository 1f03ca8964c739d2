"""GPU capacity and quota preferences (checklist C1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.queries.gcp.common import (
    _ZONE,
    GCE_INSTANCE,
    INSTANCE_GROUP_MANAGERS,
    INSTANCE_TEMPLATES,
    NODE_POOL,
    _int,
    _machine_type,
    _region_of_location,
)

AUTOSCALERS = ("gcp:compute/autoscaler:Autoscaler", "gcp:compute/regionAutoscaler:RegionAutoscaler")
QUOTA_PREFERENCE = "gcp:cloudquota/sQuotaPreference:SQuotaPreference"


@dataclass(frozen=True)
class GpuCapacity:
    """What can launch GCP GPU machines, at its maximum: `max_nodes` x `machine_type`."""

    resource: Resource
    region: str
    machine_type: str
    market: str
    max_nodes: int
    #: How `max_nodes` comes about, for a finding's message.
    basis: str


def _market(scheduling: Any, *, spot_flag: Any = None, preemptible: Any = None) -> str:
    scheduling = scheduling if isinstance(scheduling, dict) else {}
    spot = (
        bool(spot_flag)
        or bool(preemptible)
        or bool(scheduling.get("preemptible"))
        or str(scheduling.get("provisioningModel") or "").upper() == "SPOT"
    )
    return "spot" if spot else "on-demand"


def gpu_capacities(graph: StackGraph) -> list[GpuCapacity]:
    """Every GCE instance, Workbench instance, GKE node pool and managed instance group whose
    machine type is a catalogued GPU machine type, each sized at its maximum node count."""
    from aistack import catalog

    found: list[GpuCapacity] = []

    def add(
        res: Resource, region: str | None, machine: str | None, market: str, nodes: int, basis: str
    ) -> None:
        if not region or not machine or catalog.find("gcp", machine) is None or nodes <= 0:
            return
        found.append(GpuCapacity(res, region, machine, market, nodes, basis))

    for res in graph.of_type(GCE_INSTANCE):
        zone = str(res.inputs.get("zone") or "")
        add(
            res,
            _region_of_location(zone) if zone else None,
            _machine_type(res.inputs.get("machineType")),
            _market(res.inputs.get("scheduling")),
            1,
            "one instance",
        )

    for res in graph.of_type(NODE_POOL):
        config = res.inputs.get("nodeConfig") or {}
        machine = _machine_type(config.get("machineType"))
        location = str(res.inputs.get("location") or "")
        region = _region_of_location(location) if location else None
        zones = list(res.inputs.get("nodeLocations") or [])
        if not zones and location and _ZONE.fullmatch(location):
            zones = [location]
        if not zones and region and machine and catalog.find("gcp", machine):
            t = catalog.get(machine, cloud="gcp")
            # A regional pool without node locations runs in the cluster's zones; at most
            # every zone of the region that offers the type.
            zones = list(t.zones(region)) if t.offered_in(region) else []
        per_zone_note = f"per zone x {len(zones)} zones" if zones else ""
        scaling = res.inputs.get("autoscaling") or {}
        total = _int(scaling.get("totalMaxNodeCount"))
        per_zone = _int(scaling.get("maxNodeCount"))
        fixed = _int(res.inputs.get("nodeCount"))
        if total:
            nodes, basis = total, f"autoscaling.totalMaxNodeCount {total}"
        elif per_zone:
            nodes = per_zone * max(len(zones), 1)
            basis = f"autoscaling.maxNodeCount {per_zone} {per_zone_note}".strip()
        else:
            count = fixed if fixed is not None else _int(res.inputs.get("initialNodeCount")) or 0
            nodes = count * max(len(zones), 1)
            basis = f"nodeCount {count} {per_zone_note}".strip()
        add(
            res,
            region,
            machine,
            _market(None, spot_flag=config.get("spot"), preemptible=config.get("preemptible")),
            nodes,
            basis,
        )

    # A Workbench instance is one VM of its machine type, on-demand, in its zone's region.
    for res in graph.of_type("gcp:workbench/instance:Instance"):
        setup = res.inputs.get("gceSetup") or {}
        zone = str(res.inputs.get("location") or "")
        add(
            res,
            _region_of_location(zone) if zone else None,
            _machine_type(setup.get("machineType") if isinstance(setup, dict) else None),
            "on-demand",
            1,
            "one Workbench instance",
        )

    templates = {}
    for res in graph.resources:
        if res.type in INSTANCE_TEMPLATES:
            for key in ("selfLink", "id", "selfLinkUnique", "name"):
                if res.outputs.get(key):
                    templates[str(res.outputs[key])] = res
            templates[res.id] = res
    autoscaled: dict[str, int] = {}
    for res in graph.resources:
        if res.type in AUTOSCALERS:
            most = _int((res.inputs.get("autoscalingPolicy") or {}).get("maxReplicas"))
            if most:
                autoscaled[str(res.inputs.get("target") or "")] = most
    for res in graph.resources:
        if res.type not in INSTANCE_GROUP_MANAGERS:
            continue
        location = str(res.inputs.get("region") or res.inputs.get("zone") or "")
        size = _int(res.inputs.get("targetSize")) or 0
        most = next(
            (
                autoscaled[k]
                for k in (res.outputs.get("selfLink"), res.id, res.outputs.get("id"))
                if k and str(k) in autoscaled
            ),
            None,
        )
        nodes = max(size, most or 0)
        basis = f"autoscaler maxReplicas {most}" if most and most >= size else f"targetSize {size}"
        for version in res.inputs.get("versions") or []:
            template = templates.get(str(version.get("instanceTemplate") or ""))
            if template is None:
                continue
            props = template.inputs
            add(
                res,
                _region_of_location(location) if location else None,
                _machine_type(props.get("machineType")),
                _market(props.get("scheduling")),
                nodes,
                basis,
            )
            break
    return found


def quota_preferences(graph: StackGraph) -> list[tuple[Resource, str, dict[str, str], float]]:
    """Every Cloud Quotas preference on a Compute quota: (resource, quota id, dimensions,
    preferred value; -1 unlimited)."""
    found = []
    for res in graph.of_type(QUOTA_PREFERENCE):
        if str(res.inputs.get("service") or "") != "compute.googleapis.com":
            continue
        try:
            value = float((res.inputs.get("quotaConfig") or {}).get("preferredValue", ""))
        except (TypeError, ValueError):
            continue
        dims = {str(k): str(v) for k, v in (res.inputs.get("dimensions") or {}).items()}
        found.append((res, str(res.inputs.get("quotaId") or ""), dims, value))
    return found


#: The component whose mode 'check' leaves a project's quotas to the stack that files them.
GPU_QUOTA_COMPONENT = "aistack:index:GcpGpuQuota"


def checked_quota_needs(graph: StackGraph) -> dict[tuple[str, tuple[tuple[str, str], ...]], int]:
    """What the stack's `gcp.GpuQuota` components in mode 'check' need, by quota key
    (quota id, sorted dimensions): GPUs the project's quota stack files for them."""
    found: dict[tuple[str, tuple[tuple[str, str], ...]], int] = {}
    for res in graph.of_type(GPU_QUOTA_COMPONENT):
        outputs = graph.registered_outputs.get(res.urn) or {}
        if outputs.get("mode") != "check":
            continue
        for request in (outputs.get("requests") or {}).values():
            named = request.get("dimensions") or {}
            dims = tuple(sorted((str(k), str(v)) for k, v in named.items()))
            key = (str(request.get("quota_id") or ""), dims)
            found[key] = found.get(key, 0) + int(request.get("requested_gpus") or 0)
    return found

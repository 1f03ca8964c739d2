"""What every GCP query reads: labels, governance regions, locations, and the resource
types and machine-type helpers the subjects share."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from aistack.config import ALLOWED_REGIONS_TAG, gcp_label
from aistack.engine.graph import Resource, StackGraph

GCS_BUCKET = "gcp:storage/bucket:Bucket"
#: The governance label carrying the allowed regions, as GCP labels spell it.
ALLOWED_REGIONS_LABEL = gcp_label(ALLOWED_REGIONS_TAG, is_key=True)

_LOCATION_IN_ID = re.compile(r"/locations/([^/]+)/")
T = TypeVar("T")


GCE_INSTANCE = "gcp:compute/instance:Instance"
NODE_POOL = "gcp:container/nodePool:NodePool"
INSTANCE_TEMPLATES = (
    "gcp:compute/instanceTemplate:InstanceTemplate",
    "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate",
)
INSTANCE_GROUP_MANAGERS = (
    "gcp:compute/instanceGroupManager:InstanceGroupManager",
    "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager",
)
_ZONE = re.compile(r"([a-z]+-[a-z]+\d+)-[a-z]")


def labels(resource: Resource) -> dict[str, str]:
    """The labels the program set: `labels` (pulumi-gcp 10 also reports `effectiveLabels`
    with the provider's defaults; rules judge what the resource itself declares). GKE
    clusters label with `resourceLabels`, node pools in `nodeConfig.resourceLabels`."""
    own = resource.inputs.get("labels")
    if own is None:
        config = resource.inputs.get("nodeConfig")
        own = resource.inputs.get("resourceLabels") or (
            config.get("resourceLabels") if isinstance(config, dict) else None
        )
    return dict(own or {})


def allowed_regions(resource: Resource) -> list[str] | None:
    """The regions the governance label allows (`europe-west4_us-central1`), or None."""
    own = labels(resource)
    if not own.get(ALLOWED_REGIONS_LABEL):
        return None
    # Governance continues a long list in `-2`, `-3`, ... (a label value holds 63 chars).
    values = [own[ALLOWED_REGIONS_LABEL]]
    index = 2
    while own.get(f"{ALLOWED_REGIONS_LABEL}-{index}"):
        values.append(own[f"{ALLOWED_REGIONS_LABEL}-{index}"])
        index += 1
    return [region for value in values for region in value.split("_")]


def location_of(resource: Resource) -> str | None:
    """A resource's location, lowercased: `location`/`region` in its inputs, else the
    `/locations/<l>/` of the key ring or parent it names. GCS reports bucket locations
    uppercase, so every comparison is case-insensitive."""
    for key in ("location", "region"):
        value = resource.inputs.get(key) or resource.outputs.get(key)
        if value:
            return str(value).lower()
    for key in ("keyRing", "parent"):
        match = _LOCATION_IN_ID.search(str(resource.inputs.get(key) or "") + "/")
        if match:
            return match.group(1).lower()
    return None


def declared_by_component(
    graph: StackGraph, resource: Resource, read: Callable[[Resource], T | None]
) -> T | None:
    """`read(resource)`, or, for a resource that carries no labels at all (GCP gives KMS key
    rings and log buckets none), what its enclosing component declares: itself
    (gcp.AuditLogs carries the governance labels) or one of its other resources."""
    own = read(resource)
    if own is not None or "labels" in resource.inputs or labels(resource):
        return own
    component = graph.component_of(resource)
    if component is None:
        return None
    for declaring in [component, *graph.descendants(component)]:
        found = read(declaring)
        if found is not None:
            return found
    return None


def declared_allowed_regions(graph: StackGraph, resource: Resource) -> list[str] | None:
    """The allowed regions a resource declares, itself or (unlabelled) through its
    component."""
    return declared_by_component(graph, resource, allowed_regions)


def _region_of_location(location: str) -> str:
    match = _ZONE.fullmatch(location)
    return match.group(1) if match else location


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _machine_type(value: Any) -> str | None:
    # A machine type may be given as a self-link or `zones/<z>/machineTypes/<t>`.
    return str(value).rsplit("/", 1)[-1].lower() if value else None

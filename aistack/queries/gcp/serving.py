"""Serving (gcp.InferenceTier): S1, S3, S5-S7, G2-G4, C6."""

from __future__ import annotations

from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.queries.gcp.budget import ALERT_POLICY
from aistack.queries.gcp.compute import gpu_templates, is_serving_template, startup_script

# ---- serving (gcp.InferenceTier): S1, S3, S5-S7, G2-G4, C6 ---------------------------------

#: URL maps, backend services and Cloud Armor policies of application load balancers.
URL_MAPS = ("gcp:compute/regionUrlMap:RegionUrlMap", "gcp:compute/uRLMap:URLMap")
BACKEND_SERVICES = (
    "gcp:compute/regionBackendService:RegionBackendService",
    "gcp:compute/backendService:BackendService",
)
SECURITY_POLICIES = (
    "gcp:compute/regionSecurityPolicy:RegionSecurityPolicy",
    "gcp:compute/securityPolicy:SecurityPolicy",
)
#: Envoy-based application load balancer schemes (weighted routing, Cloud Armor throttles).
MANAGED_SCHEMES = ("EXTERNAL_MANAGED", "INTERNAL_MANAGED")
#: Where gcp.InferenceTier's model-quality metric lives (G4).
QUALITY_METRIC_PREFIX = "custom.googleapis.com/aistack/"


def serving_templates(graph: StackGraph) -> list[Resource]:
    return [t for t in gpu_templates(graph) if is_serving_template(t)]


def resource_by_reference(
    graph: StackGraph, reference: Any, types: tuple[str, ...]
) -> Resource | None:
    """The resource of `types` whose self link, id or name `reference` is."""
    text = str(reference or "")
    if not text:
        return None
    for res in graph.resources:
        if res.type in types and text in {
            str(res.outputs.get(k)) for k in ("selfLink", "id", "name") if res.outputs.get(k)
        }:
            return res
    return None


def alert_filters(graph: StackGraph) -> list[tuple[Resource, str, dict[str, Any]]]:
    """(policy, filter, threshold condition) for every threshold condition of every alert."""
    found = []
    for policy in graph.resources:
        if policy.type != ALERT_POLICY:
            continue
        for condition in policy.inputs.get("conditions") or []:
            threshold = (condition or {}).get("conditionThreshold") or {}
            if threshold:
                found.append((policy, str(threshold.get("filter") or ""), threshold))
    return found


def startup_files(template: Resource) -> dict[str, str]:
    """The files an aistack startup script unpacks (its `AISTACK_FILES` block, as the
    serving nodes of both clouds pack it), by name; {} for any other script."""
    import binascii
    import tarfile

    # The packer's own reader: both clouds' serving nodes are rendered by it.
    from aistack.node.serving import unpack_files

    script = startup_script(template)
    if "<<'AISTACK_FILES'" not in script:
        return {}
    try:
        return unpack_files(script)
    except (binascii.Error, tarfile.TarError, OSError, UnicodeDecodeError, IndexError):
        return {}

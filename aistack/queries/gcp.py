"""Graph queries over Google Cloud resources, shared by rules (and cost estimators)."""

from __future__ import annotations

import re

from aistack.config import ALLOWED_REGIONS_TAG, gcp_label
from aistack.engine.graph import Resource, StackGraph

GCS_BUCKET = "gcp:storage/bucket:Bucket"
#: The governance label carrying the allowed regions, as GCP labels spell it.
ALLOWED_REGIONS_LABEL = gcp_label(ALLOWED_REGIONS_TAG, is_key=True)

_LOCATION_IN_ID = re.compile(r"/locations/([^/]+)/")


def labels(resource: Resource) -> dict[str, str]:
    """The labels the program set: `labels` (pulumi-gcp 10 also reports `effectiveLabels`
    with the provider's defaults; rules judge what the resource itself declares)."""
    return dict(resource.inputs.get("labels") or {})


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


def declared_allowed_regions(graph: StackGraph, resource: Resource) -> list[str] | None:
    """The allowed regions a resource declares, or (for resources GCP cannot label, such
    as KMS key rings) those its enclosing component's other resources declare."""
    own = allowed_regions(resource)
    if own is not None or "labels" in resource.inputs:
        return own
    component = graph.component_of(resource)
    if component is None:
        return None
    for sibling in graph.descendants(component):
        found = allowed_regions(sibling)
        if found is not None:
            return found
    return None


# ---- budgets and the budget guard (C3) --------------------------------------------------

BILLING_BUDGET = "gcp:billing/budget:Budget"
FUNCTION_V2 = "gcp:cloudfunctionsv2/function:Function"
ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
CUSTOM_ROLE = "gcp:projects/iAMCustomRole:IAMCustomRole"
SERVICE_ACCOUNT_KEY = "gcp:serviceaccount/key:Key"
PUBSUB_PUBLISHED = "google.cloud.pubsub.topic.v1.messagePublished"


def is_gcp(graph: StackGraph) -> bool:
    return any(resource.type.startswith("gcp:") for resource in graph.resources)


def functions_on_topic(graph: StackGraph, topic: str) -> list[Resource]:
    """Cloud Functions (2nd gen) triggered by messages published to `topic` (its id)."""
    return [
        function
        for function in graph.of_type(FUNCTION_V2)
        if (function.get("eventTrigger", "pubsubTopic") == topic)
        and function.get("eventTrigger", "eventType") == PUBSUB_PUBLISHED
    ]


def grants_to(graph: StackGraph, member: str) -> list[Resource]:
    """IAM member and binding resources (any scope) that grant a role to `member`."""
    return [
        resource
        for resource in graph.resources
        if resource.type.startswith("gcp:")
        and resource.type.rsplit(":", 1)[-1].lower().endswith(("iammember", "iambinding"))
        and (
            resource.inputs.get("member") == member
            or member in (resource.inputs.get("members") or [])
        )
    ]


def custom_role_permissions(graph: StackGraph, role: str) -> list[str] | None:
    """The permissions of the custom role named `role` (`projects/<p>/roles/<id>`) in the
    graph, or None when it is not a custom role of this stack."""
    for resource in graph.of_type(CUSTOM_ROLE):
        if role in (resource.id, resource.outputs.get("name")):
            return list(resource.inputs.get("permissions") or [])
    return None

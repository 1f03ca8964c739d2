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


# ---- identity (C6) and registries (E1) --------------------------------------------------

SERVICE_ACCOUNT = "gcp:serviceaccount/account:Account"
SERVICE_ACCOUNT_KEY = "gcp:serviceaccount/key:Key"
HMAC_KEY = "gcp:storage/hmacKey:HmacKey"
WIF_POOL_PROVIDER = "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider"
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
ARTIFACT_REPOSITORY = "gcp:artifactregistry/repository:Repository"
PROJECT_SERVICE = "gcp:projects/service:Service"

#: Resources granting a role to a member on a project, folder or organisation.
HIERARCHY_IAM_MEMBERS = (
    "gcp:projects/iAMMember:IAMMember",
    "gcp:projects/iAMBinding:IAMBinding",
    "gcp:folder/iAMMember:IAMMember",
    "gcp:folder/iAMBinding:IAMBinding",
    "gcp:organizations/iAMMember:IAMMember",
    "gcp:organizations/iAMBinding:IAMBinding",
)


def iam_members(resource: Resource) -> list[str]:
    """The members an IAMMember (`member`) or IAMBinding (`members`) grants to."""
    if resource.inputs.get("member"):
        return [str(resource.inputs["member"])]
    return [str(m) for m in resource.inputs.get("members") or []]


def is_workload_member(member: str) -> bool:
    """A service account or a federated principal: something a workload runs as."""
    return member.startswith(("serviceAccount:", "principal://", "principalSet://"))


def enabled_services(graph: StackGraph) -> set[str]:
    """The APIs the stack's `projects.Service` resources enable."""
    return {str(s.inputs.get("service", "")) for s in graph.of_type(PROJECT_SERVICE)}


def docker_repositories(graph: StackGraph) -> list[Resource]:
    """Artifact Registry repositories in Docker format (standard, not remote/virtual)."""
    return [
        r
        for r in graph.of_type(ARTIFACT_REPOSITORY)
        if r.inputs.get("format") == "DOCKER"
        and (r.inputs.get("mode") or "STANDARD_REPOSITORY") == "STANDARD_REPOSITORY"
    ]

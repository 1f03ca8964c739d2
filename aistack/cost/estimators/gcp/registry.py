"""Cost estimator for Artifact Registry Docker repositories, priced as ECR repositories
are (`aws/registry.py`): image storage with and without cleanup policies that delete.

One Artifact Registry repository holds many images (ECR keeps one per repository), but the
steady state of a team's images under keep-last-N and delete-untagged policies is the same
planning number, and so is the growth without them.
"""

from __future__ import annotations

from aistack.cost import WorkloadProfile, estimator
from aistack.cost.baseline import NO_LIFECYCLE_GROWTH, REPOSITORY_GB
from aistack.cost.prices import gcp as prices
from aistack.engine.graph import Resource, StackGraph
from aistack.queries.gcp import ARTIFACT_REPOSITORY


def _cleans_up(repository: Resource) -> bool:
    # A dry run only logs what it would delete (Artifact Registry docs, "Configure cleanup
    # policies"): storage grows as if there were no policy.
    if repository.inputs.get("cleanupPolicyDryRun", True):
        return False
    return any(p.get("action") == "DELETE" for p in repository.inputs.get("cleanupPolicies") or [])


@estimator(ARTIFACT_REPOSITORY)
def _repository(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    if resource.inputs.get("format") != "DOCKER":
        return None
    price = prices.ARTIFACT_REGISTRY_GB_MONTH
    kept = REPOSITORY_GB * price
    forever = REPOSITORY_GB * NO_LIFECYCLE_GROWTH * price
    assumption = (
        f"assumes {REPOSITORY_GB:g} GB of images under cleanup policies (newest releases "
        f"kept, untagged deleted); without them, {NO_LIFECYCLE_GROWTH:g}x that after a year "
        f"of builds kept forever; ${price}/GB-month"
    )
    if _cleans_up(resource):
        return kept, forever, f"Artifact Registry storage: {assumption}"
    return forever, forever, f"Artifact Registry storage, nothing cleaned up: {assumption}"

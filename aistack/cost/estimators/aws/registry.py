"""Cost estimator for ECR repositories: image storage, with and without a lifecycle policy.

ECR bills stored bytes (compressed layers, shared layers once per repository). What a
repository holds depends on how often CI pushes, which no stack setting says, so the
estimate assumes a typical ML image repository (`aistack.cost.baseline`, as Artifact
Registry's does) and states the assumption in its basis.
"""

from __future__ import annotations

from aistack.cost import WorkloadProfile, estimator
from aistack.cost.baseline import NO_LIFECYCLE_GROWTH, REPOSITORY_GB
from aistack.cost.prices import aws as prices
from aistack.engine.graph import Resource, StackGraph

LIFECYCLE_POLICY = "aws:ecr/lifecyclePolicy:LifecyclePolicy"


def _has_lifecycle(graph: StackGraph, repository: Resource) -> bool:
    name = repository.outputs.get("name") or repository.id
    return any(
        policy.inputs.get("repository") == name for policy in graph.of_type(LIFECYCLE_POLICY)
    )


@estimator("aws:ecr/repository:Repository")
def _repository(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    kept = REPOSITORY_GB * prices.ECR_GB_MONTH
    forever = REPOSITORY_GB * NO_LIFECYCLE_GROWTH * prices.ECR_GB_MONTH
    assumption = (
        f"assumes {REPOSITORY_GB:g} GB of images per repository under a lifecycle policy "
        f"(last releases kept, untagged expired); without one, {NO_LIFECYCLE_GROWTH:g}x that "
        f"after a year of builds kept forever; ${prices.ECR_GB_MONTH}/GB-month"
    )
    if _has_lifecycle(graph, resource):
        return kept, forever, f"ECR storage: {assumption}"
    return forever, forever, f"ECR storage with no lifecycle policy: {assumption}"

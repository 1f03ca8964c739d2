"""AIS-E1-04: Artifact Registry Docker repositories have cleanup policies that really run."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import as_list
from aistack.queries.gcp import docker_repositories


@rule(
    id="AIS-E1-04",
    checklist=["E1"],
    info="Artifact Registry Docker repositories have a DELETE cleanup policy and cleanup is "
    "not a dry run.",
    why="Every CI build pushes gigabytes of CUDA and framework layers. Without a delete "
    "policy nothing is ever removed; in dry run (cleanupPolicyDryRun, easy to leave on "
    "after testing) Artifact Registry only logs what it would delete. Keep policies alone "
    "delete nothing.",
    fix="Use gcp.ContainerRegistry, or add cleanupPolicies with a DELETE policy (e.g. "
    "UNTAGGED older than 7 days, guarded by a KEEP mostRecentVersions policy) and set "
    "cleanupPolicyDryRun: false.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for repository in docker_repositories(graph):
        policies = as_list(repository.inputs.get("cleanupPolicies"))
        deletes = [p for p in policies if isinstance(p, dict) and p.get("action") == "DELETE"]
        gaps = []
        if not deletes:
            gaps.append("no DELETE cleanup policy, so images accumulate forever")
        if repository.inputs.get("cleanupPolicyDryRun") is not False:
            gaps.append("cleanup is a dry run (cleanupPolicyDryRun not false): nothing is deleted")
        if gaps:
            yield fail(repository, "; ".join(gaps) + ".")
        else:
            yield ok(repository, f"{len(deletes)} delete policies, applied for real.")

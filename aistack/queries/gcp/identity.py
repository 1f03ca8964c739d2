"""Identity (C6) and registries (E1): service accounts, keys, IAM members, APIs."""

from __future__ import annotations

from aistack.engine.graph import Resource, StackGraph

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
    """Artifact Registry repositories in Docker format (standard, not remote/virtual) that
    hold the team's images: not a Cloud Function's build repository (its
    `buildConfig.dockerRepository`), whose images and tags Cloud Functions writes itself."""
    builds = {
        str((f.inputs.get("buildConfig") or {}).get("dockerRepository") or "")
        for f in graph.of_type("gcp:cloudfunctionsv2/function:Function")
    }
    return [
        r
        for r in graph.of_type(ARTIFACT_REPOSITORY)
        if r.inputs.get("format") == "DOCKER"
        and (r.inputs.get("mode") or "STANDARD_REPOSITORY") == "STANDARD_REPOSITORY"
        and str(r.outputs.get("id") or r.id) not in builds
    ]

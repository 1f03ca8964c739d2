"""AIS-C6-08: no basic role (owner, editor, viewer) for a service account or federated principal."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import HIERARCHY_IAM_MEMBERS, iam_members, is_workload_member

#: IAM docs, "Basic roles": thousands of permissions across every Google Cloud service.
BASIC_ROLES = frozenset({"roles/owner", "roles/editor", "roles/viewer"})


@rule(
    id="AIS-C6-08",
    checklist=["C6"],
    info="Workload identities (service accounts, federated principals) hold no basic roles "
    "on a project, folder or organisation.",
    why="Owner and Editor let a compromised training job or CI run delete data, read every "
    "secret and mint credentials; Viewer reads every bucket's metadata and config. A "
    "workload needs a few predefined roles on the resources it uses.",
    fix="Grant predefined roles on the resource (dataset.grant_read(identity.member(...)), "
    "registry.grant_read(...)) or WorkloadIdentity projectRoles with predefined roles.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for types in HIERARCHY_IAM_MEMBERS:
        for grant in graph.of_type(types):
            workloads = [m for m in iam_members(grant) if is_workload_member(m)]
            if not workloads:
                continue
            role = str(grant.inputs.get("role", ""))
            if role in BASIC_ROLES:
                yield fail(grant, f"grants the basic role {role} to {', '.join(workloads)}.")
            else:
                yield ok(grant, f"grants {role}, not a basic role.")

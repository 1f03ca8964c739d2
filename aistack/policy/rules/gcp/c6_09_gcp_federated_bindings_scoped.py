"""AIS-C6-09: who may act as a service account through federation is one repository or one
Kubernetes service account, never a whole workload identity pool."""

import re
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import iam_members

SERVICE_ACCOUNT_GRANTS = (
    "gcp:serviceaccount/iAMMember:IAMMember",
    "gcp:serviceaccount/iAMBinding:IAMBinding",
)
#: Roles that let a member act as the service account (IAM docs, "Service account
#: impersonation" and "Workload Identity Federation").
ACTING_ROLES = frozenset({"roles/iam.workloadIdentityUser", "roles/iam.serviceAccountTokenCreator"})
_WHOLE_POOL = re.compile(r"^principalSet://iam\.googleapis\.com/.+/workloadIdentityPools/[^/]+/\*$")
_GKE_MEMBER = re.compile(
    r"^serviceAccount:[a-z0-9.-]+\.svc\.id\.goog\[(?P<ns>[^/\]]+)/(?P<ksa>[^\]]+)\]$"
)


def _problem(member: str) -> str | None:
    if _WHOLE_POOL.match(member):
        return f"{member} is every identity the pool admits"
    gke = _GKE_MEMBER.match(member)
    if gke and ("*" in gke["ns"] or "*" in gke["ksa"]):
        return f"{member} is a wildcard over Kubernetes service accounts"
    if member.startswith("principalSet://") and "*" in member.rsplit("/", 1)[-1]:
        return f"{member} ends in a wildcard"
    return None


@rule(
    id="AIS-C6-09",
    checklist=["C6"],
    info="Federated identities may act as a service account only as one repository or one "
    "Kubernetes service account, not as a whole workload identity pool.",
    why="Binding `principalSet://.../workloadIdentityPools/<pool>/*` lets anything the pool "
    "admits, now or after a provider is added or loosened, act as the account; the "
    "binding should name the repository (attribute.repository/<owner>/<repo>) or the "
    "Kubernetes service account it is for.",
    fix="Bind principalSet://.../attribute.repository/<owner>/<repo> (gcp.WorkloadIdentity "
    "github does) or serviceAccount:<project>.svc.id.goog[<ns>/<ksa>].",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for types in SERVICE_ACCOUNT_GRANTS:
        for grant in graph.of_type(types):
            if grant.inputs.get("role") not in ACTING_ROLES:
                continue
            members = iam_members(grant)
            problems = [p for p in map(_problem, members) if p]
            if problems:
                yield fail(grant, "; ".join(problems) + ".")
            else:
                yield ok(grant, f"acting as the account is limited to {', '.join(members)}.")

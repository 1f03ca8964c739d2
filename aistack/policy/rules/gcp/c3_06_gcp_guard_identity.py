"""AIS-C3-06: the function acting on a GCP budget's updates runs as its own identity,
holds only the permissions its code calls, has no key, and takes no outside traffic."""

from collections.abc import Iterator
from typing import Any

from aistack.contracts.gcp import budget_guard_permissions
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import (
    BILLING_BUDGET,
    SERVICE_ACCOUNT_KEY,
    custom_role_permissions,
    functions_on_topic,
    grants_to,
    is_gcp,
)

#: Google's default service accounts: Editor on the project in most projects.
_DEFAULT_ACCOUNTS = ("-compute@developer.gserviceaccount.com", "@appspot.gserviceaccount.com")


def _allowed(env: dict[str, Any]) -> set[str]:
    """What the budget guard's code may call, given its switches."""
    permissions = budget_guard_permissions()
    allowed = set(permissions["state"])
    if env.get("AISTACK_KILL_SWITCH") == "true":
        allowed |= set(permissions["kill_switch"])
        if env.get("AISTACK_ALLOW_DISABLE_BILLING") == "true":
            allowed |= set(permissions["disable_billing"])
    return allowed


def _problems(graph: StackGraph, function: Resource) -> list[str]:
    service = function.inputs.get("serviceConfig") or {}
    email = str(service.get("serviceAccountEmail") or "")
    if not email or email.endswith(_DEFAULT_ACCOUNTS):
        return ["runs as a default service account (Editor in most projects)"]
    problems = []
    if service.get("ingressSettings") != "ALLOW_INTERNAL_ONLY":
        problems.append("accepts traffic from the internet (ingress not ALLOW_INTERNAL_ONLY)")
    allowed = _allowed(service.get("environmentVariables") or {})
    for grant in grants_to(graph, f"serviceAccount:{email}"):
        role = str(grant.inputs.get("role", ""))
        permissions = custom_role_permissions(graph, role)
        if permissions is None:
            problems.append(f"holds {role}, not a custom role of the stack")
        elif extra := sorted(set(permissions) - allowed):
            problems.append(f"{role} grants {extra}, which its code does not call")
    for key in graph.of_type(SERVICE_ACCOUNT_KEY):
        if email in str(key.inputs.get("serviceAccountId", "")):
            problems.append("has a service account key")
    return problems


@rule(
    id="AIS-C3-06",
    checklist=["C3"],
    info="A function triggered by a GCP budget's updates runs as a dedicated service "
    "account, with custom roles holding only the permissions its code calls, no key, and "
    "internal ingress only.",
    why="The kill switch can scale every training pool to zero and, if allowed, detach "
    "billing: as the default compute account (Editor) or with a broad role, whoever "
    "controls its code or its trigger controls the project.",
    fix="Use gcp.BudgetGuard, or give the function a service account of its own with a "
    "custom role built from the permissions it calls, and ingress ALLOW_INTERNAL_ONLY.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    if not is_gcp(graph):
        return
    for budget in graph.of_type(BILLING_BUDGET):
        topic = (budget.inputs.get("allUpdatesRule") or {}).get("pubsubTopic")
        for function in functions_on_topic(graph, topic) if topic else []:
            problems = _problems(graph, function)
            if problems:
                yield fail(function, "budget function " + "; ".join(problems) + ".")
            else:
                yield ok(function, "own identity, exactly the permissions its code calls.")

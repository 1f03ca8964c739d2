"""AIS-S1-03: every namespace the stack creates denies traffic by default."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import NAMESPACE, NETWORK_POLICY, namespace_of, objects_in


def _denies_all(spec: dict, direction: str) -> bool:
    """A policy selecting every pod (`podSelector: {}`) for `direction` with no rule for it
    allows nothing that way: the Kubernetes docs' "default deny all" policies."""
    key = "ingress" if direction == "Ingress" else "egress"
    return (
        spec.get("podSelector") in ({}, None)
        and direction in (spec.get("policyTypes") or [])
        and not spec.get(key)
    )


@rule(
    id="AIS-S1-03",
    checklist=["S1"],
    info="Every Kubernetes namespace has a default-deny NetworkPolicy for ingress and egress.",
    why="Without one every pod accepts connections from every other pod in the cluster and "
    "reaches everything: a serving pod can read the training namespace's data services and a "
    "compromised notebook can reach the model servers. Policies are additive, so a deny-all "
    "plus narrow allows is the only shape that stays closed as workloads are added. (It is "
    "enforced only by a CNI that implements NetworkPolicy.)",
    fix="Use k8s.TeamNamespace, or add a NetworkPolicy with podSelector: {} and policyTypes "
    "[Ingress, Egress] and no rules to the namespace, then allow what is needed.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for namespace in graph.of_type(NAMESPACE):
        name = namespace_of(namespace)
        specs = [p.inputs.get("spec") or {} for p in objects_in(graph, name, NETWORK_POLICY)]
        missing = [
            direction
            for direction in ("Ingress", "Egress")
            if not any(_denies_all(spec, direction) for spec in specs)
        ]
        if missing:
            yield fail(
                namespace,
                f"namespace {name!r} has no default deny for {' and '.join(missing).lower()}.",
            )
        else:
            yield ok(namespace, f"namespace {name!r} denies ingress and egress by default.")

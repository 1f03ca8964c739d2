"""AIS-G6-02: every namespace declares which third-party services see its data."""

import json
from collections.abc import Iterator

from aistack.contracts.k8s import THIRD_PARTY_ANNOTATION as ANNOTATION
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import NAMESPACE, SYSTEM_NAMESPACES, metadata_of, namespace_of


@rule(
    id="AIS-G6-02",
    checklist=["G6"],
    info=f"Every namespace carries {ANNOTATION}: the JSON list of third-party services "
    "(a hosted tracker, a model API) that see the data of its workloads, [] for none.",
    why="A namespace is where a team's data is processed on the cluster: what leaves it for "
    "another company's service is a governance decision that auditors must be able to read "
    "where the data is, not in someone's head.",
    fix="Use k8s.TeamNamespace (governance.thirdPartyServices), or annotate the namespace.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for namespace in graph.of_type(NAMESPACE):
        name = namespace_of(namespace)
        if name in SYSTEM_NAMESPACES:
            continue
        text = (metadata_of(namespace).get("annotations") or {}).get(ANNOTATION)
        try:
            declared = json.loads(text) if text is not None else None
        except ValueError:
            declared = None
        if not isinstance(declared, list):
            yield fail(namespace, f"namespace {name!r} declares no third-party services.")
        else:
            names = [d.get("name") for d in declared if isinstance(d, dict)] or ["none"]
            yield ok(namespace, f"namespace {name!r}: third parties {', '.join(map(str, names))}.")

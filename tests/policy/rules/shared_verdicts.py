"""One rule's verdicts on a graph a rule module builds once for several of its tests.

A rule module's compliant tests each ran the same component stack through the `verdicts`
fixture (tests/policy/conftest.py), one engine run per rule. `build` runs a program exactly
as that fixture does, for a module-scoped fixture to wrap in `tests.shared_graphs.shared`;
`verdicts_of` evaluates one rule on the built graph as the fixture does.
"""

from __future__ import annotations

from aistack import engine, policy
from aistack.engine.graph import StackGraph


def build(program, **config) -> StackGraph:
    """The graph the `verdicts` fixture evaluates for `program` and `config`."""
    return engine.run(program, config={"aws:region": "us-east-1", **config})


def verdicts_of(rule_id: str, graph: StackGraph) -> dict[str, str]:
    """{resource name: status} of the rule `rule_id` on `graph`."""
    rule = next(r for r in policy.all_rules() if r.id == rule_id)
    return {f.resource_name: f.status for f in rule.evaluate(graph)}

"""One rule's findings on a graph, the way every rule test computes them.

`findings_of` evaluates one rule on a graph and records the statuses it gave for the
session's check that every rule has a compliant and a non-compliant case
(tests/_harness/verdict_coverage.py): a rule test that computes findings some other way is
not counted. The `verdicts` fixture (tests/policy/conftest.py) and `verdicts_of` call it.

A rule module's compliant tests each ran the same component stack through the `verdicts`
fixture, one engine run per rule. `build` runs a program exactly as that fixture does, for
a module-scoped fixture to wrap in `tests._harness.shared_graphs.shared`; `verdicts_of` evaluates
one rule on the built graph as the fixture does.
"""

from __future__ import annotations

from aistack import engine, policy
from aistack.engine.graph import StackGraph
from aistack.policy import Finding
from tests._harness import verdict_coverage


def build(program, **config) -> StackGraph:
    """The graph the `verdicts` fixture evaluates for `program` and `config`."""
    return engine.run(program, config={"aws:region": "us-east-1", **config})


def findings_of(rule_id: str, graph: StackGraph) -> list[Finding]:
    """The findings of the rule `rule_id` on `graph`, their statuses recorded."""
    rule = next(r for r in policy.all_rules() if r.id == rule_id)
    findings = rule.evaluate(graph)
    verdict_coverage.record(rule_id, [f.status for f in findings])
    return findings


def verdicts_of(rule_id: str, graph: StackGraph) -> dict[str, str]:
    """{resource name: status} of the rule `rule_id` on `graph`."""
    return {f.resource_name: f.status for f in findings_of(rule_id, graph)}

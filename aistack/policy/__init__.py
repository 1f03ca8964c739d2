"""Checklist rules as pure functions over a recorded StackGraph.

A rule has an ID (`AIS-<checklist id>-NN`), the checklist IDs it covers, a severity, a
one-line `info`, the `why`, the `fix`, and a check that yields findings: compliant,
non-compliant or (when nothing in the stack is concerned) not applicable. The same rules
run in `aistack check`, in the test suite and in the CrossGuard policy pack.

Rules live one per module in `aistack/policy/rules/<platform>/`, each module named by its
rule's id (`c6_01_no_stored_keys.py` holds AIS-C6-01), and register themselves with
`@rule`. What several rules read is a query, in `aistack.queries`: no rule imports another.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from aistack.engine.graph import Resource, StackGraph
from aistack.policy.checklist import CHECKLIST, DOCUMENTED_ONLY, ON_THE_CLOUD

__all__ = [
    "CHECKLIST",
    "DOCUMENTED_ONLY",
    "Finding",
    "ItemStatus",
    "Report",
    "Rule",
    "Verdict",
    "all_rules",
    "evaluate",
    "fail",
    "ok",
    "rule",
]

Severity = Literal["mandatory", "advisory"]
Status = Literal["compliant", "non-compliant", "not-applicable"]


@dataclass(frozen=True)
class Finding:
    """One rule's verdict on one resource (or on the stack, when `resource_urn` is empty)."""

    rule_id: str
    status: Status
    message: str
    resource_urn: str = ""
    resource_name: str = ""
    resource_type: str = ""
    fix: str = ""

    @property
    def failed(self) -> bool:
        return self.status == "non-compliant"


@dataclass(frozen=True)
class Verdict:
    """What a rule's check yields for one resource (or for the stack, `resource` None);
    made with `ok` or `fail`, and turned into a `Finding` by `Rule.evaluate`."""

    compliant: bool
    resource: Resource | None
    message: str


def ok(resource: Resource | None, message: str) -> Verdict:
    """The resource satisfies the rule; `message` says how."""
    return Verdict(True, resource, message)


def fail(resource: Resource | None, message: str) -> Verdict:
    """The resource violates the rule; `message` says what is wrong."""
    return Verdict(False, resource, message)


Check = Callable[[StackGraph], Iterable[Verdict]]


@dataclass(frozen=True)
class Rule:
    id: str
    checklist: tuple[str, ...]
    severity: Severity
    info: str
    why: str
    fix: str
    check: Check = field(repr=False)

    def evaluate(self, graph: StackGraph) -> list[Finding]:
        findings = [
            Finding(
                rule_id=self.id,
                status="compliant" if verdict.compliant else "non-compliant",
                message=verdict.message,
                resource_urn=verdict.resource.urn if verdict.resource else "",
                resource_name=verdict.resource.name if verdict.resource else "",
                resource_type=verdict.resource.type if verdict.resource else "",
                fix="" if verdict.compliant else self.fix,
            )
            for verdict in self.check(graph)
        ]
        return findings or [Finding(self.id, "not-applicable", "nothing in the stack concerned")]


_REGISTRY: dict[str, Rule] = {}


def rule(
    *,
    id: str,  # noqa: A002 - the rule's public name
    checklist: Sequence[str],
    info: str,
    why: str,
    fix: str,
    severity: Severity = "mandatory",
) -> Callable[[Check], Rule]:
    """Register a check function as a rule."""
    unknown = [item for item in checklist if item not in CHECKLIST]
    if unknown or not id.startswith(f"AIS-{checklist[0]}-"):
        raise ValueError(f"rule {id}: bad checklist ids {unknown or checklist}")

    def register(check: Check) -> Rule:
        if id in _REGISTRY:
            raise ValueError(f"rule {id} registered twice")
        new_rule = Rule(id, tuple(checklist), severity, info, why, fix, check)
        _REGISTRY[id] = new_rule
        return new_rule

    return register


def all_rules() -> list[Rule]:
    """Every rule, importing `aistack.policy.rules.<platform>.*` on first use."""
    from aistack.policy import rules as package

    for module in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        importlib.import_module(module.name)
    return sorted(_REGISTRY.values(), key=lambda r: r.id)


ItemState = Literal[
    "passing", "failing", "not-applicable", "documented-only", "the-cloud", "no-rule"
]


@dataclass(frozen=True)
class ItemStatus:
    """How the stack stands on one checklist item."""

    id: str
    title: str
    state: ItemState
    rules: tuple[str, ...]
    findings: tuple[Finding, ...]
    note: str = ""


@dataclass
class Report:
    findings: list[Finding]
    rules: list[Rule]
    #: A stack of Kubernetes objects and no cloud resources: the cloud's items are the cloud's.
    kubernetes_only: bool = False

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    @property
    def violations(self) -> list[Finding]:
        return [f for f in self.findings if f.failed]

    @property
    def mandatory_violations(self) -> list[Finding]:
        mandatory = {r.id for r in self.rules if r.severity == "mandatory"}
        return [f for f in self.violations if f.rule_id in mandatory]

    def for_rule(self, rule_id: str) -> list[Finding]:
        return [f for f in self.findings if f.rule_id == rule_id]

    def items(self) -> list[ItemStatus]:
        statuses = []
        for item_id, title in CHECKLIST.items():
            rules = [r for r in self.rules if item_id in r.checklist]
            findings = tuple(f for f in self.findings if f.rule_id in {r.id for r in rules})
            state: ItemState
            note = ""
            if any(f.failed for f in findings):
                state = "failing"
            elif any(f.status == "compliant" for f in findings):
                state = "passing"
            elif item_id in DOCUMENTED_ONLY:
                state, note = "documented-only", DOCUMENTED_ONLY[item_id]
            elif self.kubernetes_only and item_id in ON_THE_CLOUD:
                state, note = "the-cloud", ON_THE_CLOUD[item_id]
            elif rules:
                state = "not-applicable"
            else:
                state = "no-rule"
            statuses.append(
                ItemStatus(item_id, title, state, tuple(r.id for r in rules), findings, note)
            )
        return statuses

    def score(self) -> tuple[int, int]:
        """(items passing, documented-only or the cloud's, items in the checklist)."""
        good = sum(
            1 for s in self.items() if s.state in ("passing", "documented-only", "the-cloud")
        )
        return good, len(CHECKLIST)


def evaluate(graph: StackGraph, rules: Iterable[Rule] | None = None) -> Report:
    chosen = list(rules) if rules is not None else all_rules()
    findings = [finding for r in chosen for finding in r.evaluate(graph)]
    types = [r.type for r in graph.resources]
    kubernetes_only = any(t.startswith("kubernetes:") for t in types) and not any(
        t.startswith(("aws:", "gcp:")) for t in types
    )
    return Report(findings, chosen, kubernetes_only)

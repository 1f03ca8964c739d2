"""The cloud names a stack fixes, and whether each is its own: ends in the stack's digest
(aistack.contracts.naming), or carries the stack's `<project>-<stack>` or
`<project>/<stack>/` in it, or is kept on destroy by a kind whose create adopts an existing
one. The names and what each kind does are aistack.engine.lifecycle's, so the rules and
the lifecycle replay read one table."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from aistack.contracts.naming import is_stack_scoped
from aistack.engine.graph import Resource, StackGraph
from aistack.engine.lifecycle import Account, CloudName, Fate, Meets, NameRule

__all__ = ["FixedName", "fixed_names"]


@dataclass(frozen=True)
class FixedName:
    resource: Resource
    name: CloudName
    rule: NameRule
    #: Why the name is the stack's own, or None when another stack could pick it.
    own_because: str | None


def fixed_names(graph: StackGraph, cloud: str) -> Iterator[FixedName]:
    """Every name `graph` fixes on `cloud` ('aws' or 'gcp'), bindings left out (an IAM
    member, a quota: named by what they bind, one holder per project)."""
    for name, (resource, rule) in sorted(Account().names(graph).items()):
        if rule.binding or not resource.type.startswith(f"{cloud}:"):
            continue
        if _auto_named(resource, name):
            continue
        yield FixedName(resource, name, rule, _own_because(graph, resource, name, rule))


def _own_because(
    graph: StackGraph, resource: Resource, name: CloudName, rule: NameRule
) -> str | None:
    text = name.name
    if is_stack_scoped(text, graph.project, graph.stack):
        return "carries the stack's digest"
    if any(is_stack_scoped(part, graph.project, graph.stack) for part in name.scope):
        # A node pool's name is unique in its cluster, and the cluster is the stack's.
        return "lives inside a resource of the stack's own"
    slug = f"{_slug(graph.project)}-{_slug(graph.stack)}"
    if slug in _slug(text) or f"{_slug(graph.project)}/{_slug(graph.stack)}/" in text.lower():
        return f"carries the stack ({slug})"
    if rule.meets_live is Meets.ADOPT and rule.fate(resource) is Fate.KEPT:
        return "kept on destroy and adopted by the next `up`"
    return None


def _auto_named(resource: Resource, name: CloudName) -> bool:
    """A name the provider made: Pulumi's auto-name is the logical name, a hyphen and 7
    random hex digits (Pulumi docs, "Resource names": auto-naming). CrossGuard hands a
    resource's outputs with its inputs, so an auto-name looks like a fixed one there."""
    return re.fullmatch(rf"{re.escape(resource.name)}-[0-9a-f]{{7}}", name.name) is not None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")

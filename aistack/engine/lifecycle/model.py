"""The lifecycle model's parts: cloud names, what destroy leaves, what a create meets,
and the account that remembers them (the package docstring tells the story)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from aistack.engine.graph import Resource, StackGraph

__all__ = ["Account", "CloudName", "Fate", "Meets", "NameRule", "Problem"]


@dataclass(frozen=True, order=True)
class CloudName:
    """The identity the cloud knows a resource by: its kind, where it lives and its name."""

    kind: str
    scope: tuple[str, ...]
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {'/'.join((*self.scope, self.name))}"


class Fate(Enum):
    """What `destroy` leaves behind under the name."""

    GONE = "deleted, the name free at once"
    SOFT_DELETED = "soft-deleted, the name held"
    KEPT = "kept (retained, or the cloud cannot delete it)"


class Meets(Enum):
    """What a create does when the name already exists."""

    CONFLICT = "fails: the name exists"
    ADOPT = "takes the existing one over"
    UNDELETE = "undeletes the soft-deleted one and updates it"


@dataclass(frozen=True)
class NameRule:
    """How one resource kind's name behaves across deployments, with the source."""

    kind: str
    identity: Callable[[Resource, str, str], CloudName | None]
    on_delete: Fate = Fate.GONE
    #: Days a soft-deleted name stays held.
    hold_days: int = 0
    meets_live: Meets = Meets.CONFLICT
    meets_soft_deleted: Meets = Meets.CONFLICT
    source: str = ""
    #: Named by what it binds or is (a quota, an IAM member, an API), not by a name the
    #: program picks: there is no name to scope, only one holder per project.
    binding: bool = False
    #: The fate of one resource of the kind, where its inputs decide (an API enablement
    #: with `disableOnDestroy: false` stays enabled).
    fate_of: Callable[[Resource], Fate] | None = None

    def fate(self, resource: Resource) -> Fate:
        if resource.retain_on_delete or resource.protect:
            return Fate.KEPT
        return self.fate_of(resource) if self.fate_of is not None else self.on_delete


@dataclass(frozen=True, order=True)
class Problem:
    """One name a deployment meets that makes it fail, or makes two stacks share a thing."""

    stack: str
    name: str
    what: str
    fix: str

    def __str__(self) -> str:
        return f"{self.stack}: {self.name}: {self.what} Fix: {self.fix}"


@dataclass
class _Holding:
    rule: NameRule
    #: Stacks whose state holds it; empty once every holder destroyed and the cloud kept it.
    holders: set[str] = field(default_factory=set)
    #: Holders whose destroy deletes it (the rest keep it).
    deleters: set[str] = field(default_factory=set)
    soft_deleted_days_left: int | None = None
    #: What the cloud returns for it: the outputs of the resource that created it.
    outputs: dict[str, Any] = field(default_factory=dict)


RuleBook = dict[str, NameRule]


class Account:
    """One AWS account or GCP project (several, scoped by name) as deployments leave it."""

    def __init__(self, rules: Iterable[NameRule]) -> None:
        self._rules: RuleBook = {rule.kind: rule for rule in rules}
        self._names: dict[CloudName, _Holding] = {}

    def names(self, graph: StackGraph) -> dict[CloudName, tuple[Resource, NameRule]]:
        """The cloud names `graph` would create, each with its resource and rule."""
        found: dict[CloudName, tuple[Resource, NameRule]] = {}
        for resource in graph:
            rule = self._rules.get(resource.type)
            if rule is None or not resource.custom:
                continue
            name = rule.identity(resource, graph.config.get("gcp:project", ""), _region(graph))
            if name is not None:
                found[name] = (resource, rule)
        return found

    def up(self, graph: StackGraph) -> list[Problem]:
        """Deploy `graph` as stack `<project>/<stack>`; the problems its creates meet."""
        stack = _stack_id(graph)
        declared = self.names(graph)
        problems: list[Problem] = []
        for name, (resource, rule) in sorted(declared.items()):
            holding = self._names.get(name)
            if holding is not None and stack in holding.holders:
                holding.deleters.discard(stack)
                if rule.fate(resource) is not Fate.KEPT:
                    holding.deleters.add(stack)
                continue
            if resource.import_id:
                problem = self._import(stack, name, resource, rule, holding)
            else:
                problem = self._create(stack, name, resource, rule, holding)
            if problem is not None:
                problems.append(problem)
        for name, holding in list(self._names.items()):
            if stack in holding.holders and name not in declared:
                self._release(stack, name, holding)
        return problems

    def existing(self) -> dict[tuple[str, tuple[str, ...], str], dict[str, Any]]:
        """What the account holds now, as a run's lookups see it (engine.context.Existing):
        each name with the outputs of the resource that made it, a soft-deleted one with
        `state: DELETED`."""
        return {
            (name.kind, name.scope, name.name): (
                {**holding.outputs, "state": "DELETED"}
                if holding.soft_deleted_days_left is not None
                else dict(holding.outputs)
            )
            for name, holding in self._names.items()
        }

    def delete_by_hand(self, name: CloudName) -> None:
        """Someone deletes `name` outside Pulumi (the console, gcloud): it goes, or is
        soft-deleted, as its rule says, and no stack holds it any more."""
        self._delete(name, self._names[name])

    def destroy(self, graph: StackGraph) -> None:
        """`pulumi destroy` of the stack: each name deleted, soft-deleted or kept."""
        stack = _stack_id(graph)
        for name, holding in list(self._names.items()):
            if stack in holding.holders:
                self._release(stack, name, holding)

    def wait(self, days: int) -> None:
        """Let `days` pass: soft-deleted names past their window are purged."""
        for name, holding in list(self._names.items()):
            if holding.soft_deleted_days_left is None:
                continue
            holding.soft_deleted_days_left -= days
            if holding.soft_deleted_days_left <= 0:
                del self._names[name]

    def _create(
        self,
        stack: str,
        name: CloudName,
        resource: Resource,
        rule: NameRule,
        holding: _Holding | None,
    ) -> Problem | None:
        deletes = rule.fate(resource) is not Fate.KEPT
        if holding is None:
            self._names[name] = _Holding(
                rule, {stack}, {stack} if deletes else set(), outputs=dict(resource.outputs)
            )
            return None
        problem = _met(stack, name, resource, rule, holding)
        if problem is None or rule.meets_live is Meets.ADOPT:
            holding.soft_deleted_days_left = None
            holding.holders.add(stack)
            if deletes:
                holding.deleters.add(stack)
        return problem

    def _import(
        self,
        stack: str,
        name: CloudName,
        resource: Resource,
        rule: NameRule,
        holding: _Holding | None,
    ) -> Problem | None:
        """The `import` option: the engine reads the resource by id and takes it into the
        stack, or fails when nothing has that id."""
        where = f"{resource.name} ({name})"
        if holding is None or holding.soft_deleted_days_left is not None:
            return Problem(
                stack,
                where,
                f"the deployment imports {resource.import_id!r}, which the account does not "
                "hold (or holds deleted): the import fails.",
                "import only what a lookup found (aistack._adopt).",
            )
        others = sorted(holding.holders - {stack})
        if others:
            return Problem(
                stack,
                where,
                f"the deployment imports what stack {', '.join(others)} manages: both "
                "stacks would then own it.",
                "put a digest of the stack into the name (aistack.contracts.naming).",
            )
        holding.holders.add(stack)
        if rule.fate(resource) is not Fate.KEPT:
            holding.deleters.add(stack)
        return None

    def _release(self, stack: str, name: CloudName, holding: _Holding) -> None:
        deleted = stack in holding.deleters
        holding.holders.discard(stack)
        holding.deleters.discard(stack)
        if deleted:
            self._delete(name, holding)

    def _delete(self, name: CloudName, holding: _Holding) -> None:
        """The cloud deletes `name`: gone, or soft-deleted as its rule says. Whoever else
        held it loses it too: the object is gone for every holder."""
        if holding.rule.on_delete is Fate.SOFT_DELETED:
            holding.holders.clear()
            holding.deleters.clear()
            holding.soft_deleted_days_left = holding.rule.hold_days
        else:
            del self._names[name]


def _met(
    stack: str, name: CloudName, resource: Resource, rule: NameRule, holding: _Holding
) -> Problem | None:
    """What a create of `name` meets in the account, as a problem, or None when it works."""
    where = f"{resource.name} ({name})"
    if holding.soft_deleted_days_left is not None:
        if rule.meets_soft_deleted is Meets.UNDELETE:
            return None
        return Problem(
            stack,
            where,
            f"an earlier destroy soft-deleted this name and the cloud holds it for "
            f"{rule.hold_days} days; the create {rule.meets_soft_deleted.value} ({rule.source}).",
            "give the id a part that is new for each deployment, or retain the resource so "
            "the next `up` adopts it.",
        )
    others = sorted(holding.holders - {stack})
    if not others:
        if rule.meets_live is Meets.ADOPT:
            return None
        return Problem(
            stack,
            where,
            f"an earlier destroy left this name in place ({rule.on_delete.value} or "
            f"retained), and the create {rule.meets_live.value} ({rule.source}).",
            "adopt what the earlier deployment left (import it), or make the name new for "
            "each deployment.",
        )
    if rule.meets_live is Meets.ADOPT and not (
        holding.deleters or rule.fate(resource) is not Fate.KEPT
    ):
        # Shared, and no holder's destroy deletes it: an idempotent, kept thing (an API
        # left enabled, an activated cost allocation tag).
        return None
    if rule.meets_live is Meets.ADOPT:
        return Problem(
            stack,
            where,
            f"stack {', '.join(others)} holds the same name and this create silently takes it "
            "over, so destroying either stack deletes it for both.",
            "put a digest of the stack into the name (aistack.contracts.naming).",
        )
    return Problem(
        stack,
        where,
        f"stack {', '.join(others)} holds the same name; the create {rule.meets_live.value} "
        f"({rule.source}).",
        "put a digest of the stack into the name (aistack.contracts.naming).",
    )


def _stack_id(graph: StackGraph) -> str:
    return f"{graph.project}/{graph.stack}"


def _region(graph: StackGraph) -> str:
    return graph.config.get("gcp:region") or graph.config.get("aws:region") or ""

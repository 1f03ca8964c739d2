"""The recorded result of running a stack program: a tree (parents) and a DAG (dependencies)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Resource", "StackGraph"]


@dataclass(frozen=True)
class Resource:
    """One registered resource, as the engine saw it.

    `inputs` are what the program sent, camelCase as Pulumi sends them to a provider;
    `outputs` are what the simulated cloud returned (inputs plus computed ids and ARNs).
    """

    type: str
    name: str
    urn: str
    parent: str | None
    dependencies: tuple[str, ...]
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    custom: bool
    id: str = ""
    provider: str = ""
    protect: bool = False
    retain_on_delete: bool = False
    #: The `import` option: the id of an existing cloud resource the deployment takes over.
    import_id: str = ""
    #: The `ignore_changes` option: inputs whose changes the engine does not apply.
    ignore_changes: tuple[str, ...] = ()
    property_dependencies: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def is_component(self) -> bool:
        return not self.custom

    def get(self, *path: str | int, default: Any = None) -> Any:
        """A nested input by path, e.g. `get("versioningConfiguration", "status")`."""
        value: Any = self.inputs
        for key in path:
            try:
                value = value[key]
            except (KeyError, IndexError, TypeError):
                return default
        return value


@dataclass
class StackGraph:
    """Every resource a program registered, its stack outputs and the config it ran with."""

    project: str
    stack: str
    resources: list[Resource]
    stack_outputs: dict[str, Any]
    config: dict[str, str] = field(default_factory=dict)
    root_urn: str = ""
    #: What each component passed to `register_outputs`, by URN.
    registered_outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: What the offline run did differently from `pulumi up` (secret placeholders), once each.
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self._by_urn = {resource.urn: resource for resource in self.resources}

    def __iter__(self) -> Iterator[Resource]:
        return iter(self.resources)

    def __len__(self) -> int:
        return len(self.resources)

    def by_urn(self, urn: str) -> Resource:
        return self._by_urn[urn]

    def of_type(self, token: str) -> list[Resource]:
        """Resources whose type token equals `token` (e.g. `aws:s3/bucket:Bucket`)."""
        return [resource for resource in self.resources if resource.type == token]

    def named(self, name: str) -> Resource:
        """The resource with logical name `name`; KeyError listing close names otherwise."""
        matches = [resource for resource in self.resources if resource.name == name]
        if len(matches) != 1:
            raise KeyError(f"{len(matches)} resources named {name!r}")
        return matches[0]

    def children(self, resource: Resource | str) -> list[Resource]:
        urn = resource if isinstance(resource, str) else resource.urn
        return [child for child in self.resources if child.parent == urn]

    def descendants(self, resource: Resource | str) -> list[Resource]:
        found: list[Resource] = []
        stack = self.children(resource)
        while stack:
            child = stack.pop(0)
            found.append(child)
            stack.extend(self.children(child))
        return found

    def parent_of(self, resource: Resource) -> Resource | None:
        if resource.parent is None:
            return None
        return self._by_urn.get(resource.parent)

    def ancestors(self, resource: Resource) -> list[Resource]:
        chain = []
        parent = self.parent_of(resource)
        while parent is not None:
            chain.append(parent)
            parent = self.parent_of(parent)
        return chain

    def component_of(self, resource: Resource) -> Resource | None:
        """The nearest enclosing component resource (aistack's or the team's), if any."""
        for ancestor in self.ancestors(resource):
            if ancestor.is_component:
                return ancestor
        return None

    def roots(self) -> list[Resource]:
        return [r for r in self.resources if r.parent in (None, self.root_urn)]

    def referencing(self, value: str) -> list[Resource]:
        """Resources whose inputs mention `value` anywhere (an id, ARN or name)."""
        return [r for r in self.resources if _mentions(r.inputs, value)]

    def outputs_of(self, component: Resource) -> dict[str, Any]:
        """The outputs a component registered (`register_outputs`)."""
        return self.registered_outputs.get(component.urn, {})

    def components(self) -> list[Resource]:
        return [r for r in self.resources if r.type.startswith("aistack:")]


def _mentions(value: Any, needle: str) -> bool:
    if isinstance(value, str):
        return needle in value
    if isinstance(value, dict):
        return any(_mentions(v, needle) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_mentions(v, needle) for v in value)
    return False

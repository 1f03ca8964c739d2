"""The checklist rules as a Pulumi CrossGuard policy pack (`pulumi preview --policy-pack`).

Each aistack rule becomes one stack validation policy with the same ID, description and
enforcement (mandatory rules block, advisory rules warn). The stack's resources are
turned into the StackGraph the rules already understand, so `aistack check`, the test
suite and CrossGuard judge a stack identically.

Needs the optional extra: `pip install 'aistack[policy]'` (pulumi-policy).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Rule, all_rules

if TYPE_CHECKING:
    from pulumi_policy import StackValidationArgs

__all__ = ["graph_from_policy_resources", "policies", "validator"]


def graph_from_policy_resources(resources: Iterable[Any]) -> StackGraph:
    """A StackGraph from CrossGuard's `PolicyResource`s.

    CrossGuard gives one property bag per resource (inputs, plus outputs once known), so it
    serves as both inputs and outputs.
    """
    records = []
    for resource in resources:
        props = _plain(resource.props)
        records.append(
            Resource(
                type=resource.resource_type,
                name=resource.name,
                urn=resource.urn,
                parent=resource.parent.urn if resource.parent is not None else None,
                dependencies=tuple(d.urn for d in resource.dependencies or []),
                inputs=props,
                outputs=props,
                custom=not resource.resource_type.startswith("aistack:")
                and resource.resource_type != "pulumi:pulumi:Stack",
                id=str(props.get("id", "")),
                protect=bool(getattr(resource.opts, "protect", False)),
            )
        )
    stack = next((r for r in records if r.type == "pulumi:pulumi:Stack"), None)
    # Every URN is `urn:pulumi:<stack>::<project>::<type>::<name>` (Pulumi docs, "Resource
    # names": URNs); rules that check a name against its stack (AIS-D1-04) need both.
    stack_name, project = _stack_and_project(records[0].urn if records else "")
    return StackGraph(
        project=project,
        stack=stack_name,
        resources=[r for r in records if r is not stack],
        stack_outputs={},
        root_urn=stack.urn if stack else "",
    )


def _stack_and_project(urn: str) -> tuple[str, str]:
    parts = urn.removeprefix("urn:pulumi:").split("::")
    return (parts[0], parts[1]) if len(parts) >= 2 else ("", "")


def _plain(value: Any) -> Any:  # noqa: ANN401 - a property bag holds any JSON value
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def validator(rule: Rule) -> Callable[[Any, Callable[..., None]], None]:
    """The CrossGuard validation function for `rule`."""

    def validate(args: StackValidationArgs, report_violation: Callable[..., None]) -> None:
        graph = graph_from_policy_resources(args.resources)
        for finding in rule.evaluate(graph):
            if finding.failed:
                message = f"{finding.message} Fix: {finding.fix}"
                if finding.resource_urn:
                    report_violation(message, finding.resource_urn)
                else:
                    report_violation(message)

    return validate


def policies() -> list[Any]:
    """Every rule as a `StackValidationPolicy`."""
    from pulumi_policy import EnforcementLevel, StackValidationPolicy

    return [
        StackValidationPolicy(
            name=rule.id.lower(),
            description=f"[{', '.join(rule.checklist)}] {rule.info} Why: {rule.why}",
            enforcement_level=EnforcementLevel.MANDATORY
            if rule.severity == "mandatory"
            else EnforcementLevel.ADVISORY,
            validate=validator(rule),
        )
        for rule in all_rules()
    ]

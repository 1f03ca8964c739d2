"""Renderings of a stack run for people and machines: the tree, findings, cost, Mermaid."""

from __future__ import annotations

import json
from typing import Any

from aistack.cost import CostReport
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Report

__all__ = ["key_settings", "mermaid", "preview_json", "checklist_markdown", "checklist_json"]

# Inputs worth a glance per type; anything else falls back to the first few scalars.
_KEY_INPUTS: dict[str, tuple[str, ...]] = {
    "pulumi:providers:aws": ("region",),
    "aws:s3/bucket:Bucket": ("bucket", "region", "forceDestroy"),
    "aws:s3/bucketVersioning:BucketVersioning": ("versioningConfiguration",),
    "aws:ec2/launchTemplate:LaunchTemplate": ("instanceType", "imageId", "metadataOptions"),
    "aws:batch/computeEnvironment:ComputeEnvironment": ("type", "computeResources"),
    "aws:autoscaling/group:Group": ("minSize", "maxSize", "desiredCapacity"),
    "aws:budgets/budget:Budget": ("budgetType", "limitAmount", "timeUnit"),
    "aws:cloudwatch/logGroup:LogGroup": ("retentionInDays", "kmsKeyId"),
    "aws:cloudwatch/metricAlarm:MetricAlarm": ("metricName", "threshold", "comparisonOperator"),
}
_SKIP = {"tags", "tagsAll", "policy", "assumeRolePolicy", "userData", "dashboardBody", "code"}


def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def key_settings(resource: Resource, limit: int = 4) -> str:
    keys = _KEY_INPUTS.get(resource.type)
    if keys is None:
        keys = tuple(
            key
            for key, value in resource.inputs.items()
            if key not in _SKIP and isinstance(value, str | int | float | bool)
        )[:limit]
    parts = [f"{key}={_short(resource.inputs[key])}" for key in keys if key in resource.inputs]
    return " ".join(parts)


def preview_json(
    graph: StackGraph, report: Report | None, cost: CostReport | None
) -> dict[str, Any]:
    document: dict[str, Any] = {
        "project": graph.project,
        "stack": graph.stack,
        "resources": [
            {
                "type": r.type,
                "name": r.name,
                "urn": r.urn,
                "parent": r.parent,
                # Sorted: the engine records them in the order the program awaited them,
                # which varies between runs; a diff of two reports must show none.
                "dependencies": sorted(r.dependencies),
                "protect": r.protect,
                "retain_on_delete": r.retain_on_delete,
                "inputs": r.inputs,
                "outputs": r.outputs,
            }
            # By URN: the engine records resources in the order they registered, which
            # varies with the program's awaits; the same program gives the same bytes.
            for r in sorted(graph.resources, key=lambda resource: resource.urn)
        ],
        "stack_outputs": graph.stack_outputs,
    }
    if report is not None:
        document["checklist"] = checklist_json(report)
    if cost is not None:
        document["cost"] = cost.as_dict()
    return document


def checklist_json(report: Report) -> dict[str, Any]:
    good, total = report.score()
    return {
        "score": {"passing": good, "total": total},
        "mandatory_violations": len(report.mandatory_violations),
        "items": [
            {
                "id": item.id,
                "title": item.title,
                "state": item.state,
                "rules": list(item.rules),
                "note": item.note,
                # In a stable order: rules judge resources in the order they registered.
                "findings": sorted(
                    (f.__dict__ for f in item.findings if f.status != "not-applicable"),
                    key=lambda f: (f["rule_id"], f["resource_urn"], f["message"]),
                ),
            }
            for item in report.items()
        ],
    }


def checklist_markdown(report: Report) -> str:
    good, total = report.score()
    lines = [
        f"### aistack checklist: {good}/{total} items passing, documented or the cloud's",
        "",
        "| ID | Item | State | Rules | Detail |",
        "|---|---|---|---|---|",
    ]
    for item in report.items():
        failures = [f for f in item.findings if f.failed]
        detail = "; ".join(f"`{f.resource_name}`: {f.message} Fix: {f.fix}" for f in failures)
        detail = detail or item.note
        icons = {"passing": "✅", "failing": "❌", "documented-only": "📄", "the-cloud": "☁️"}
        icon = icons.get(item.state, "➖")
        lines.append(
            f"| {item.id} | {item.title} | {icon} {item.state} | "
            f"{', '.join(item.rules) or '-'} | {detail.replace('|', '/')} |"
        )
    return "\n".join(lines) + "\n"


def mermaid(graph: StackGraph) -> str:
    """The component tree as Mermaid: aistack components (with how many resources each
    holds, and their kinds) under the stack; resources outside any component as leaves."""
    lines = ["graph TD", f'    root["{graph.project}-{graph.stack}"]']
    counter = 0
    component_ids: dict[str, str] = {}

    def visit(resources: list[Resource], parent_id: str) -> None:
        nonlocal counter
        for resource in sorted(resources, key=lambda r: (not r.is_component, r.type, r.name)):
            if resource.type.startswith("pulumi:providers:"):
                continue
            counter += 1
            node_id = f"n{counter}"
            kind = resource.type.rsplit(":", 1)[-1]
            if resource.type.startswith("aistack:"):
                inner = [r for r in graph.descendants(resource) if r.custom]
                kinds = sorted({r.type.rsplit(":", 1)[-1] for r in inner})
                summary = ", ".join(kinds[:4]) + (", ..." if len(kinds) > 4 else "")
                label = (
                    f"<b>{resource.name}</b><br/>{kind}<br/>"
                    f"<small>{len(inner)} resources: {summary}</small>"
                )
                component_ids[resource.urn] = node_id
                lines.append(f'    {node_id}["{label}"]')
                lines.append(f"    {parent_id} --> {node_id}")
                visit([c for c in graph.children(resource) if not c.custom], node_id)
            else:
                lines.append(f'    {node_id}["{resource.name}<br/><small>{kind}</small>"]')
                lines.append(f"    {parent_id} --> {node_id}")

    visit(graph.roots(), "root")
    # Dotted edges: one component uses another (a resource inside depends on one inside).
    owner: dict[str, str] = {}
    for urn in component_ids:
        for inner in graph.descendants(graph.by_urn(urn)):
            owner.setdefault(inner.urn, urn)
    uses = set()
    for resource in graph.resources:
        user = owner.get(resource.urn)
        for dependency in resource.dependencies:
            used = owner.get(dependency)
            if user and used and used != user:
                uses.add((component_ids[user], component_ids[used]))
    lines += [f"    {a} -.-> {b}" for a, b in sorted(uses)]
    return "\n".join(lines) + "\n"

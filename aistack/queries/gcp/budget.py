"""Budgets and the budget guard (C3): the function, its topic and what it is granted."""

from __future__ import annotations

from aistack.engine.graph import Resource, StackGraph

BILLING_BUDGET = "gcp:billing/budget:Budget"
FUNCTION_V2 = "gcp:cloudfunctionsv2/function:Function"
ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
CUSTOM_ROLE = "gcp:projects/iAMCustomRole:IAMCustomRole"
PUBSUB_PUBLISHED = "google.cloud.pubsub.topic.v1.messagePublished"


def is_gcp(graph: StackGraph) -> bool:
    return any(resource.type.startswith("gcp:") for resource in graph.resources)


def functions_on_topic(graph: StackGraph, topic: str) -> list[Resource]:
    """Cloud Functions (2nd gen) triggered by messages published to `topic` (its id)."""
    return [
        function
        for function in graph.of_type(FUNCTION_V2)
        if (function.get("eventTrigger", "pubsubTopic") == topic)
        and function.get("eventTrigger", "eventType") == PUBSUB_PUBLISHED
    ]


def grants_to(graph: StackGraph, member: str) -> list[Resource]:
    """IAM member and binding resources (any scope) that grant a role to `member`."""
    return [
        resource
        for resource in graph.resources
        if resource.type.startswith("gcp:")
        and resource.type.rsplit(":", 1)[-1].lower().endswith(("iammember", "iambinding"))
        and (
            resource.inputs.get("member") == member
            or member in (resource.inputs.get("members") or [])
        )
    ]


def custom_role_permissions(graph: StackGraph, role: str) -> list[str] | None:
    """The permissions of the custom role named `role` (`projects/<p>/roles/<id>`) in the
    graph, or None when it is not a custom role of this stack."""
    for resource in graph.of_type(CUSTOM_ROLE):
        if role in (resource.id, resource.outputs.get("name")):
            return list(resource.inputs.get("permissions") or [])
    return None

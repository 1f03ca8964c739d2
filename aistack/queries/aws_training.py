"""What training rules read: job definitions' containers and training nodes' user data."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.queries import tags

JOB_DEFINITION = "aws:batch/jobDefinition:JobDefinition"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
COMPUTE_ENVIRONMENT = "aws:batch/computeEnvironment:ComputeEnvironment"
GROUP = "aws:autoscaling/group:Group"


def container(job: Resource) -> dict[str, Any]:
    raw = job.inputs.get("containerProperties")
    try:
        return json.loads(raw) if isinstance(raw, str) else dict(raw or {})
    except ValueError:
        return {}


def environment(job: Resource) -> dict[str, str]:
    return {e.get("name", ""): e.get("value", "") for e in container(job).get("environment", [])}


def run_parameters(job: Resource) -> set[str]:
    """Per-run parameters a job definition takes and actually uses in its command."""
    command = " ".join(str(part) for part in container(job).get("command", []))
    return {key for key in job.inputs.get("parameters") or {} if f"Ref::{key}" in command}


def user_data(template: Resource) -> str:
    raw = template.inputs.get("userData") or ""
    try:
        return base64.b64decode(raw, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return str(raw)


def training_job_definitions(graph: StackGraph) -> list[Resource]:
    return [job for job in graph.of_type(JOB_DEFINITION) if container(job)]


def training_templates(graph: StackGraph) -> list[Resource]:
    """Launch templates of GPU training nodes (tagged workload=training)."""
    return [
        template
        for template in graph.of_type(LAUNCH_TEMPLATE)
        if tags(template).get("aistack:workload") == "training"
    ]


def training_groups(graph: StackGraph) -> list[Resource]:
    return [g for g in graph.of_type(GROUP) if tags(g).get("aistack:workload") == "training"]

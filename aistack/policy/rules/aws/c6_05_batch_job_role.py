"""AIS-C6-05: AWS Batch jobs run as their own role, never with the instance's credentials.

A Batch job definition must name a job role (`jobRoleArn`) that only ecs-tasks.amazonaws.com
may assume and that is not the compute environment's instance role: the instance role holds
AmazonEC2ContainerServiceforEC2Role and AmazonSSMManagedInstanceCore (every ECR repository,
every SSM parameter), which user training code must not. A job without a job role gets the
instance role's credentials from the metadata service. The launch template of a Batch
compute environment must also set the metadata response hop limit to 1: job containers get
their role from the ECS agent (169.254.170.2), so only the host needs the metadata service.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import as_list
from aistack.queries.aws_iam import statements
from aistack.queries.aws_training import COMPUTE_ENVIRONMENT, LAUNCH_TEMPLATE, container

ROLE = "aws:iam/role:Role"
INSTANCE_PROFILE = "aws:iam/instanceProfile:InstanceProfile"
JOB_DEFINITION = "aws:batch/jobDefinition:JobDefinition"
ECS_TASKS = "ecs-tasks.amazonaws.com"


def _principals(role: Resource) -> set[str]:
    found: set[str] = set()
    for statement in statements(role.inputs.get("assumeRolePolicy")) or []:
        principal: Any = statement.get("Principal") or {}
        if isinstance(principal, dict):
            for value in principal.values():
                found |= {str(v) for v in as_list(value)}
        else:
            found.add(str(principal))
    return found


def _instance_role_names(graph: StackGraph) -> set[str]:
    """Names of the roles behind the instance profiles Batch compute environments use."""
    profiles = {
        str(p.outputs.get("arn")): str(p.inputs.get("role"))
        for p in graph.of_type(INSTANCE_PROFILE)
    }
    return {
        profiles.get(str((ce.inputs.get("computeResources") or {}).get("instanceRole")), "")
        for ce in graph.of_type(COMPUTE_ENVIRONMENT)
    } - {""}


def _batch_templates(graph: StackGraph) -> list[Resource]:
    ids = {
        str(
            ((ce.inputs.get("computeResources") or {}).get("launchTemplate") or {}).get(
                "launchTemplateId"
            )
        )
        for ce in graph.of_type(COMPUTE_ENVIRONMENT)
    }
    return [t for t in graph.of_type(LAUNCH_TEMPLATE) if str(t.id) in ids]


@rule(
    id="AIS-C6-05",
    checklist=["C6"],
    info="Batch jobs run as a job role trusted only by ecs-tasks, not the instance role; "
    "Batch hosts keep the metadata service to themselves (hop limit 1).",
    why="The instance role of a Batch host can pull every image and read every SSM "
    "parameter; a job that holds it, or reaches it through the metadata service, turns "
    "any training dependency into those rights.",
    fix="Use aws.TrainingPool (job role 'training-job' from aws.WorkloadIdentity, hop limit 1 "
    "on Batch hosts), or set jobRoleArn to a role only ecs-tasks.amazonaws.com may assume.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    roles = {str(r.outputs.get("arn")): r for r in graph.of_type(ROLE)}
    instance_roles = _instance_role_names(graph)
    for job in graph.of_type(JOB_DEFINITION):
        if not container(job):
            continue
        arn = str(container(job).get("jobRoleArn") or "")
        role = roles.get(arn)
        if not arn:
            yield fail(job, "no job role: the job runs with the instance role's credentials.")
        elif role is not None and str(role.outputs.get("name")) in instance_roles:
            yield fail(job, "the job role is the compute environment's instance role.")
        elif role is not None and _principals(role) != {ECS_TASKS}:
            others = ", ".join(sorted(_principals(role) - {ECS_TASKS})) or "nobody"
            yield fail(job, f"the job role is also trusted by {others}.")
        else:
            yield ok(job, "runs as its own job role, trusted only by ecs-tasks.")
    for template in _batch_templates(graph):
        hops = (template.inputs.get("metadataOptions") or {}).get("httpPutResponseHopLimit")
        if hops == 1:
            yield ok(template, "the metadata service answers the host only (hop limit 1).")
        else:
            yield fail(template, f"metadata hop limit {hops or 'default'}: containers reach it.")

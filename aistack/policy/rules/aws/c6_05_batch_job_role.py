"""AIS-C6-05: AWS Batch jobs run as their own role, and the instance role holds nothing a job
may not have.

A Batch job definition must name a job role (`jobRoleArn`) that only ecs-tasks.amazonaws.com
may assume and that is not the compute environment's instance role: the instance role holds
AmazonEC2ContainerServiceforEC2Role and AmazonSSMManagedInstanceCore (every ECR repository,
every SSM parameter), which user training code must not be handed as its identity.

The metadata hop limit is deliberately not judged here, and never reported as isolation:
AWS Batch runs ECS jobs on EC2 in `host` network mode (Batch user guide, "Networking modes
for AWS Batch jobs": "ECS-EC2 simple job | host"; aws/containers-roadmap#2332 asks for a
choice), where a job's request to 169.254.169.254 takes no extra hop, so every job can read
the instance role whatever the limit. What the rule can judge is what that exposure gives:
an instance role of a Batch compute environment that may write or delete in S3 hands every
job (and every dependency it runs) the write, bypassing the job role. Data writes belong to
the job role (aws.TrainingPool: the host flushes checkpoints with a running job's
credentials, the instance role keeps the read of the pinned dataset version).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import as_list
from aistack.queries.aws_iam import ROLE, statements
from aistack.queries.aws_training import COMPUTE_ENVIRONMENT, container

INSTANCE_PROFILE = "aws:iam/instanceProfile:InstanceProfile"
JOB_DEFINITION = "aws:batch/jobDefinition:JobDefinition"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
ECS_TASKS = "ecs-tasks.amazonaws.com"
#: S3 actions that only read; every other s3: action (Put, Delete, Restore, ...) changes data.
S3_READ_PREFIXES = ("s3:Get", "s3:List", "s3:Describe")


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


def _instance_role_names(graph: StackGraph) -> dict[str, str]:
    """Compute environment name -> the role behind its instance profile."""
    profiles = {
        str(p.outputs.get("arn")): str(p.inputs.get("role"))
        for p in graph.of_type(INSTANCE_PROFILE)
    }
    found = {}
    for ce in graph.of_type(COMPUTE_ENVIRONMENT):
        profile = str((ce.inputs.get("computeResources") or {}).get("instanceRole"))
        if profile in profiles:
            found[ce.name] = profiles[profile]
    return found


def _s3_changes(graph: StackGraph, role_name: str) -> set[str]:
    """The S3 actions beyond reading that the role's inline policies allow."""
    documents = [
        p.inputs.get("policy")
        for p in graph.of_type(ROLE_POLICY)
        if str(p.inputs.get("role")) == role_name
    ]
    for role in graph.of_type(ROLE):
        if role_name in (str(role.outputs.get("name")), str(role.outputs.get("id"))):
            documents += [p.get("policy") for p in role.inputs.get("inlinePolicies") or []]
    found: set[str] = set()
    for document in documents:
        for statement in statements(document) or []:
            if statement.get("Effect") != "Allow":
                continue
            for action in (str(a) for a in as_list(statement.get("Action"))):
                if action in ("*", "s3:*") or (
                    action.startswith("s3:") and not action.startswith(S3_READ_PREFIXES)
                ):
                    found.add(action)
    return found


def _job_verdicts(graph: StackGraph, instance_roles: set[str]) -> Iterator[Verdict]:
    roles = {str(r.outputs.get("arn")): r for r in graph.of_type(ROLE)}
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


@rule(
    id="AIS-C6-05",
    checklist=["C6"],
    info="Batch jobs run as a job role trusted only by ecs-tasks, not the instance role; the "
    "instance role, which Batch jobs reach through the metadata service (host networking), "
    "writes no data.",
    why="Batch runs jobs in the host's network namespace, so the metadata hop limit does not "
    "keep the instance role from job code: whatever that role may do, every job and every "
    "training dependency may do too.",
    fix="Use aws.TrainingPool (job role 'training-job' from aws.WorkloadIdentity; the job role "
    "writes checkpoints), or set jobRoleArn to a role only ecs-tasks.amazonaws.com may assume "
    "and move S3 writes off the compute environment's instance role.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    instance_roles = _instance_role_names(graph)
    yield from _job_verdicts(graph, set(instance_roles.values()))
    for environment in graph.of_type(COMPUTE_ENVIRONMENT):
        role_name = instance_roles.get(environment.name)
        if role_name is None:
            continue
        changes = _s3_changes(graph, role_name)
        if changes:
            yield fail(
                environment,
                f"instance role {role_name} may {', '.join(sorted(changes))}; Batch jobs run "
                "in host networking and reach it through the metadata service.",
            )
        else:
            yield ok(
                environment,
                f"instance role {role_name} writes no S3 data; jobs that reach it through the "
                "metadata service (host networking) gain no write.",
            )

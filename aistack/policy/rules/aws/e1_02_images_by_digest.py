"""AIS-E1-02: every container the stack runs is referenced by digest, every AMI by id.

Looks wherever an image reference can sit in a Pulumi program: AWS Batch job definitions
(container, ECS, EKS and multi-node properties), ECS task definitions, SageMaker models and
image versions, Lambda container functions, Kubernetes workloads, and the machine images of
launch templates and Batch compute environments.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from aistack.contracts.images import reference_problem
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import as_list

#: Resource type -> inputs that hold container images (JSON strings or objects).
CONTAINER_INPUTS: dict[str, tuple[str, ...]] = {
    "aws:batch/jobDefinition:JobDefinition": (
        "containerProperties",
        "ecsProperties",
        "eksProperties",
        "nodeProperties",
    ),
    "aws:ecs/taskDefinition:TaskDefinition": ("containerDefinitions",),
    "aws:sagemaker/model:Model": ("primaryContainer", "containers"),
    "aws:sagemaker/imageVersion:ImageVersion": ("baseImage",),
    "aws:lambda/function:Function": ("imageUri",),
}
#: Keys that name an image inside those inputs.
IMAGE_KEYS = ("image", "imageUri", "baseImage")
#: Kubernetes kinds that run pods (and their server-side-apply patches).
POD_KINDS = {
    "Pod",
    "PodTemplate",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "ReplicationController",
    "Job",
    "CronJob",
}
#: Resource type -> inputs that hold a machine image id.
AMI_INPUTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "aws:ec2/launchTemplate:LaunchTemplate": (("imageId",),),
    "aws:batch/computeEnvironment:ComputeEnvironment": (
        ("computeResources", "imageId"),
        ("computeResources", "ec2Configurations", "*", "imageIdOverride"),
    ),
}
_AMI_ID = re.compile(r"^ami-(?:[0-9a-f]{8}|[0-9a-f]{17})$")
# A numbered parameter version never changes value; a bare name or a label can.
_SSM_VERSIONED = re.compile(r"^resolve:ssm:[^:]+:\d+$")


def _images(value: object, path: str) -> Iterator[tuple[str, Any]]:
    """(path, image) for every image key anywhere in `value`, JSON strings decoded."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            value = json.loads(value)
        except ValueError:
            return
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}"
            if key in IMAGE_KEYS and isinstance(item, str):
                yield here, item
            elif key == "image" and isinstance(item, dict) and "reference" in item:
                # Kubernetes image volumes mount an image's contents: it must be pinned too.
                yield f"{here}.reference", item["reference"]
            else:
                yield from _images(item, here)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _images(item, f"{path}[{index}]")


def _container_images(resource: Resource) -> Iterator[tuple[str, Any]]:
    if resource.type in CONTAINER_INPUTS:
        for key in CONTAINER_INPUTS[resource.type]:
            value = resource.inputs.get(key)
            if isinstance(value, str) and key in IMAGE_KEYS:
                yield key, value
            elif value is not None:
                yield from _images(value, key)
    elif _pod_kind(resource):
        yield from _images(resource.inputs.get("spec"), "spec")


def _pod_kind(resource: Resource) -> bool:
    if not resource.type.startswith("kubernetes:"):
        return False
    kind = resource.type.rsplit(":", 1)[-1]
    return kind.removesuffix("Patch") in POD_KINDS


def _machine_images(resource: Resource) -> Iterator[tuple[str, Any]]:
    for path in AMI_INPUTS.get(resource.type, ()):
        yield from _at_path(resource.inputs, path, "")


def _at_path(value: object, path: tuple[str, ...], where: str) -> Iterator[tuple[str, Any]]:
    if not path:
        if value is not None:
            yield where.lstrip("."), value
        return
    head, rest = path[0], path[1:]
    if head == "*":
        for index, item in enumerate(as_list(value)):
            yield from _at_path(item, rest, f"{where}[{index}]")
    elif isinstance(value, dict):
        yield from _at_path(value.get(head), rest, f"{where}.{head}")


def _ami_problem(image_id: object) -> str | None:
    text = str(image_id)
    if _AMI_ID.match(text) or _SSM_VERSIONED.match(text):
        return None
    if text.startswith("resolve:ssm:"):
        return (
            f"{text!r} resolves at launch to whatever the parameter holds then, so a new "
            "AMI (driver, CUDA) arrives unannounced"
        )
    return f"{text!r} is not an AMI id"


@rule(
    id="AIS-E1-02",
    checklist=["E1"],
    info="Container images are referenced by sha256 digest, machine images by AMI id.",
    why="A tag (or an SSM alias of the latest AMI) resolves to whatever was pushed last: two "
    "runs of the same job can get different framework, CUDA or driver builds, and a rollback "
    "can roll forward. A digest names one build forever.",
    fix="Reference images as 'repo@sha256:<digest>' (ContainerRegistry.image(name, digest), "
    "or `aws ecr describe-images` / `docker buildx imagetools inspect` to find the digest), "
    "and launch templates with an 'ami-...' id or a numbered SSM parameter version "
    "('resolve:ssm:<name>:<version>').",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for resource in graph.resources:
        containers = list(_container_images(resource))
        machines = list(_machine_images(resource))
        problems = [
            f"{path}: {problem}"
            for path, image in containers
            if (problem := reference_problem(image))
        ] + [f"{path}: {problem}" for path, image in machines if (problem := _ami_problem(image))]
        if problems:
            yield fail(resource, "; ".join(problems) + ".")
        elif containers or machines:
            yield ok(resource, f"{len(containers) + len(machines)} image reference(s), all pinned.")

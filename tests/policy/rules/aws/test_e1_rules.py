"""Rules for E1: hardened ECR repositories and images pinned by digest, compliant and not."""

import json

import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest

from aistack import aws as aistack_aws
from aistack import engine
from tests.policy.rules.shared_verdicts import findings_of

GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "research-1234",
    "allowedRegions": ["us-east-1"],
}
DIGEST = "sha256:" + "0123456789abcdef" * 4
PINNED = f"123456789012.dkr.ecr.us-east-1.amazonaws.com/trainer@{DIGEST}"
TAGGED = "123456789012.dkr.ecr.us-east-1.amazonaws.com/trainer:2.3.1"


def _messages(rule_id, program):
    graph = engine.run(program, config={"aws:region": "us-east-1"})
    return {f.resource_name: f.message for f in findings_of(rule_id, graph)}


# ---- AIS-E1-01: repositories ---------------------------------------------------------------


def test_e1_01_container_registry_complies(verdicts):
    def program():
        aistack_aws.ContainerRegistry(
            "images", {"repositories": ["trainer"], "region": "us-east-1", "governance": GOVERNANCE}
        )

    assert verdicts("AIS-E1-01", program) == {"images-trainer": "compliant"}


def test_e1_01_default_repository_violates_on_all_three_counts(verdicts):
    program = lambda: aws.ecr.Repository("raw")  # noqa: E731
    assert verdicts("AIS-E1-01", program) == {"raw": "non-compliant"}
    message = _messages("AIS-E1-01", program)["raw"]
    assert "MUTABLE" in message and "not scanned" in message and "not KMS" in message


def test_e1_01_immutable_but_aes256_repository_violates(verdicts):
    def program():
        aws.ecr.Repository(
            "raw",
            image_tag_mutability="IMMUTABLE",
            image_scanning_configuration={"scan_on_push": True},
            encryption_configurations=[{"encryption_type": "AES256"}],
        )

    assert verdicts("AIS-E1-01", program) == {"raw": "non-compliant"}


def test_e1_01_registry_level_scan_on_push_counts_as_scanning(verdicts):
    def program():
        aws.ecr.Repository(
            "team",
            name="team/trainer",
            image_tag_mutability="IMMUTABLE",
            encryption_configurations=[{"encryption_type": "KMS"}],
        )
        aws.ecr.RegistryScanningConfiguration(
            "scanning",
            scan_type="ENHANCED",
            rules=[
                {
                    "scan_frequency": "CONTINUOUS_SCAN",
                    "repository_filters": [{"filter": "team/*", "filter_type": "WILDCARD"}],
                }
            ],
        )

    assert verdicts("AIS-E1-01", program) == {"team": "compliant"}


def test_e1_01_does_not_apply_without_repositories(verdicts):
    assert verdicts("AIS-E1-01", lambda: aws.s3.Bucket("raw")) == {"": "not-applicable"}


# ---- AIS-E1-02: images by digest -----------------------------------------------------------


def _batch_job(image):
    return lambda: aws.batch.JobDefinition(
        "train",
        type="container",
        container_properties=json.dumps(
            {"image": image, "resourceRequirements": [{"type": "GPU", "value": "1"}]}
        ),
    )


def test_e1_02_batch_job_by_digest_complies(verdicts):
    assert verdicts("AIS-E1-02", _batch_job(PINNED)) == {"train": "compliant"}


@pytest.mark.parametrize(
    "image", [TAGGED, "pytorch/pytorch:latest", "pytorch/pytorch", "trainer@sha256:abc"]
)
def test_e1_02_batch_job_by_tag_violates_naming_the_image(verdicts, image):
    assert verdicts("AIS-E1-02", _batch_job(image)) == {"train": "non-compliant"}
    message = _messages("AIS-E1-02", _batch_job(image))["train"]
    assert "containerProperties.image" in message and repr(image) in message


def test_e1_02_batch_multinode_and_eks_properties_are_checked(verdicts):
    def program():
        aws.batch.JobDefinition(
            "multinode",
            type="multinode",
            node_properties=json.dumps(
                {
                    "mainNode": 0,
                    "numNodes": 2,
                    "nodeRangeProperties": [
                        {"targetNodes": "0:", "container": {"image": TAGGED}},
                    ],
                }
            ),
        )
        aws.batch.JobDefinition(
            "on-eks",
            type="container",
            eks_properties={"pod_properties": {"containers": [{"image": PINNED, "name": "train"}]}},
        )

    assert verdicts("AIS-E1-02", program) == {
        "multinode": "non-compliant",
        "on-eks": "compliant",
    }


def _task(image):
    return lambda: aws.ecs.TaskDefinition(
        "serve",
        family="serve",
        container_definitions=json.dumps(
            [
                {"name": "sidecar", "image": PINNED, "essential": False},
                {"name": "server", "image": image, "essential": True},
            ]
        ),
    )


def test_e1_02_ecs_task_by_digest_complies(verdicts):
    assert verdicts("AIS-E1-02", _task(PINNED)) == {"serve": "compliant"}


def test_e1_02_ecs_task_with_one_tagged_container_violates(verdicts):
    assert verdicts("AIS-E1-02", _task("vllm/vllm-openai:v0.5.0")) == {"serve": "non-compliant"}
    message = _messages("AIS-E1-02", _task("vllm/vllm-openai:v0.5.0"))["serve"]
    assert "containerDefinitions[1].image" in message and "v0.5.0" in message


def test_e1_02_sagemaker_model_by_tag_violates(verdicts):
    def program():
        aws.sagemaker.Model(
            "model",
            execution_role_arn="arn:aws:iam::123456789012:role/sm",
            primary_container={"image": TAGGED},
        )
        aws.sagemaker.Model(
            "pinned",
            execution_role_arn="arn:aws:iam::123456789012:role/sm",
            primary_container={"image": PINNED},
        )

    assert verdicts("AIS-E1-02", program) == {"model": "non-compliant", "pinned": "compliant"}


def _pod_spec(image):
    return {"containers": [{"name": "main", "image": image}]}


def test_e1_02_kubernetes_workloads_by_digest_comply(verdicts):
    def program():
        k8s.apps.v1.Deployment(
            "server",
            spec={
                "selector": {"match_labels": {"app": "s"}},
                "template": {"metadata": {"labels": {"app": "s"}}, "spec": _pod_spec(PINNED)},
            },
        )
        k8s.core.v1.Pod("debug", spec=_pod_spec(PINNED))

    assert verdicts("AIS-E1-02", program) == {"server": "compliant", "debug": "compliant"}


def test_e1_02_kubernetes_workloads_by_tag_violate(verdicts):
    def program():
        k8s.apps.v1.StatefulSet(
            "db",
            spec={
                "selector": {"match_labels": {"app": "db"}},
                "service_name": "db",
                "template": {
                    "metadata": {"labels": {"app": "db"}},
                    "spec": {
                        "init_containers": [{"name": "init", "image": "busybox"}],
                        "containers": [{"name": "db", "image": PINNED}],
                    },
                },
            },
        )
        k8s.batch.v1.Job(
            "train",
            spec={"template": {"spec": {**_pod_spec(TAGGED), "restart_policy": "Never"}}},
        )
        k8s.core.v1.Pod("debug", spec=_pod_spec("python:3.11"))

    result = verdicts("AIS-E1-02", program)
    assert result == {"db": "non-compliant", "train": "non-compliant", "debug": "non-compliant"}
    messages = _messages("AIS-E1-02", program)
    assert "spec.template.spec.initContainers[0].image" in messages["db"]
    assert "'busybox'" in messages["db"]


def test_e1_02_launch_template_with_ami_id_complies(verdicts):
    def program():
        aws.ec2.LaunchTemplate("gpu", image_id="ami-0123456789abcdef0")
        aws.ec2.LaunchTemplate("versioned", image_id="resolve:ssm:/team/gpu-ami:7")

    assert verdicts("AIS-E1-02", program) == {"gpu": "compliant", "versioned": "compliant"}


def test_e1_02_launch_template_resolving_latest_ami_from_ssm_violates(verdicts):
    name = "/aws/service/ecs/optimized-ami/amazon-linux-2/gpu/recommended/image_id"

    def program():
        aws.ec2.LaunchTemplate("gpu", image_id=f"resolve:ssm:{name}")

    assert verdicts("AIS-E1-02", program) == {"gpu": "non-compliant"}
    assert "resolve:ssm:" in _messages("AIS-E1-02", program)["gpu"]


def test_e1_02_does_not_apply_without_workloads(verdicts):
    assert verdicts("AIS-E1-02", lambda: aws.s3.Bucket("raw")) == {"": "not-applicable"}


def test_e1_02_registry_image_helper_output_complies(verdicts):
    def program():
        registry = aistack_aws.ContainerRegistry(
            "images", {"repositories": ["trainer"], "region": "us-east-1", "governance": GOVERNANCE}
        )
        image = registry.image("trainer", DIGEST)
        aws.batch.JobDefinition(
            "train",
            type="container",
            container_properties=image.apply(lambda i: json.dumps({"image": i})),
        )

    assert verdicts("AIS-E1-02", program) == {"train": "compliant"}

"""The budget kill switch against moto: only this stack's training capacity goes to zero.

Moto limitations met, and filled in by the `aws` fixture with AWS's documented behaviour:

* moto's Batch `UpdateComputeEnvironment` validates the request but drops
  `computeResources` (a TODO in `moto.batch.models.BatchBackend.update_compute_environment`),
  so `maxvCpus` would never read back as 0 and the second run could not see that it has
  nothing left to do. The fixture stores the sizes it was sent, and records each call so the
  tests can check what was sent.
* moto does not enforce Batch's sizing rules. AWS does: "The desiredvCpus value must be
  between the minvCpus and maxvCpus values" and "The updated desiredvCpus value must be
  greater than or equal to the current desiredvCpus value" (AWS Batch User Guide, "Error
  message when you update the desiredvCpus setting",
  docs.aws.amazon.com/batch/latest/userguide/error-desired-vcpus-update.html). The refusal of
  a `maxvCpus` below `desiredvCpus` reads "desiredvCpus should be between minvCpus and
  maxvCpus" (quoted by Terraform users who hit it, e.g. in `aws_batch_compute_environment`
  comments: "You must set desired_vcpus otherwise you get error: ..."). The fixture refuses
  both, with Batch's `ClientException`.
* moto's `TerminateJob` only flags a job that no Docker thread runs; Batch moves it to
  `FAILED` ("Jobs that are in the STARTING or RUNNING state are terminated, which causes them
  to transition to FAILED. Jobs that have not progressed to the STARTING state are
  cancelled", Batch API Reference, TerminateJob). The fixture does that.

Everything else is moto (Batch without Docker: `use_docker: False`).

moto is imported by the fixtures, not at the top: importing it loads EC2's region, zone and
instance-type catalogues (about 2 s), and every pytest-xdist worker imports every test module
when it collects. The module's tests share one xdist group, so one worker runs them all and
only that worker imports moto.
"""

from __future__ import annotations

import ast
import json
import logging
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
import botocore.session
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from aistack import config
from aistack.aws.lambdas import budget_guard
from aistack.aws.lambdas.budget_guard import (
    DISCOVERY_ACTIONS,
    MUTATING_ACTIONS,
    PREVIOUS_SIZE_TAG,
    REQUIRED_ACTIONS,
    STACK_TAG,
    WORKLOAD_TAG,
    KillSwitchConfigError,
    handler,
    kill_switch,
)

if TYPE_CHECKING:
    from moto.batch.models import BatchBackend, Job

pytestmark = pytest.mark.xdist_group("moto")

REGION = "us-east-1"
STACK = "ml-prod"
TRAINING = {STACK_TAG: STACK, WORKLOAD_TAG: "training"}
INFERENCE = {STACK_TAG: STACK, WORKLOAD_TAG: "inference"}
OTHER_STACK = {STACK_TAG: "ml-dev", WORKLOAD_TAG: "training"}

SNS_EVENT = {
    "Records": [
        {
            "EventSource": "aws:sns",
            "EventVersion": "1.0",
            "Sns": {
                "Type": "Notification",
                "Subject": "AWS Budgets: ml-prod-monthly has exceeded your alert threshold",
                "Message": "AWS Budget Notification: actual cost is 100.0% of 5000.00 USD",
            },
        }
    ]
}


@pytest.fixture(scope="module")
def session() -> Iterator[boto3.session.Session]:
    """One boto3 session for the module, so that service models are loaded once, not per test.

    moto resets `boto3.DEFAULT_SESSION` on every `mock_aws`; the `aws` fixture installs this
    one instead, and only while moto is active.
    """
    # Importing moto adds its request interceptor to botocore's built-in handlers, which a
    # botocore session copies when it is created: a session made before moto is imported
    # would send its requests to AWS.
    import moto.core.models  # noqa: F401

    yield boto3.session.Session(
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        aws_session_token="testing",
        region_name=REGION,
    )
    _clients.clear()


_clients: dict[str, Any] = {}


def client(service: str) -> Any:
    """A client of the module's session, made once per service for the module.

    Creating a client costs more than most moto calls. A client keeps no moto state: it holds
    the service model, the endpoint and the fake credentials, while what the tests create
    lives in moto's backends, which every `mock_aws` starts empty. Tests that hook events do
    so on sessions of their own (`hookable_session`), never on these clients.
    """
    if service not in _clients:
        _clients[service] = boto3.client(service)
    return _clients[service]


def hookable_session(shared: boto3.session.Session) -> boto3.session.Session:
    """A session of its own for `kill_switch`, whose event hooks touch no other client."""
    core = botocore.session.Session()
    core.register_component("data_loader", shared._session.get_component("data_loader"))
    return boto3.session.Session(botocore_session=core, region_name=REGION)


@pytest.fixture
def aws(
    monkeypatch: pytest.MonkeyPatch, session: boto3.session.Session
) -> Iterator[list[dict[str, Any]]]:
    """Fake credentials, moto for every service, and the Batch resize gap filled in.

    Yields the list of `computeResources` that moto's Batch was asked to apply.
    """
    from moto import mock_aws
    from moto.batch.models import BatchBackend, Job

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SECURITY_TOKEN"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AISTACK_STACK", raising=False)
    monkeypatch.delenv("AISTACK_DRY_RUN", raising=False)
    # Skip loading moto's catalogue of public AMIs (most of the setup time); moto does not
    # validate image ids by default, so any id will do.
    monkeypatch.setenv("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")

    resized: list[dict[str, Any]] = []
    original = BatchBackend.update_compute_environment

    def update_and_resize(self: BatchBackend, **kwargs: Any) -> tuple[str, str]:
        resources = kwargs.get("compute_resources") or {}
        env = self.get_compute_environment(kwargs["compute_environment_name"])
        if env is not None:
            _batch_sizing_rules(env.compute_resources, resources)
        result = original(self, **kwargs)  # moto's checks: existence, role, state
        resized.append({"state": kwargs.get("state"), "computeResources": resources})
        if resources:
            assert env is not None
            env.compute_resources.update(resources)
        return result

    def terminate_and_fail(self: Job, reason: str) -> None:
        terminate(self, reason)
        self._mark_stopped(success=False)

    terminate = Job.terminate
    monkeypatch.setattr(BatchBackend, "update_compute_environment", update_and_resize)
    monkeypatch.setattr(Job, "terminate", terminate_and_fail)
    with mock_aws(config={"batch": {"use_docker": False}}):
        boto3.DEFAULT_SESSION = session  # moto puts the previous value back when it stops
        yield resized


def moto_batch() -> BatchBackend:
    """moto's Batch backend for the test account and region, to reach what the API cannot."""
    from moto.batch.models import batch_backends

    return batch_backends["123456789012"][REGION]


def _batch_sizing_rules(current: dict[str, Any], update: dict[str, Any]) -> None:
    """Refuse what Batch refuses (see the module docstring for the sources)."""
    from moto.batch.exceptions import ClientException as MotoBatchClientException

    merged = {**current, **update}
    desired = merged.get("desiredvCpus")
    if desired is None:
        return
    if "desiredvCpus" in update and update["desiredvCpus"] < (current.get("desiredvCpus") or 0):
        raise MotoBatchClientException(
            "Manually scaling down compute environment is not supported. Disconnecting job "
            "queues from compute environment will cause it to scale-down to minvCpus."
        )
    if not merged.get("minvCpus", 0) <= desired <= merged["maxvCpus"]:
        raise MotoBatchClientException("desiredvCpus should be between minvCpus and maxvCpus")


@dataclass
class World:
    """Names and ids of what `world` created."""

    training_asg: str
    other_stack_asg: str
    inference_asg: str
    training_ce: str
    fargate_ce: str
    untagged_ce: str
    inference_ce: str
    other_stack_ce: str
    training_queue: str
    untagged_queue: str
    inference_queue: str
    other_stack_queue: str
    training_instance: str
    untagged_instance: str
    inference_instance: str
    other_stack_instance: str
    running_job: str
    runnable_job: str
    finished_job: str
    other_stack_job: str


def _tag_list(tags: dict[str, str]) -> list[dict[str, str]]:
    return [{"Key": key, "Value": value} for key, value in tags.items()]


def _asg_tags(name: str, tags: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "ResourceId": name,
            "ResourceType": "auto-scaling-group",
            "Key": key,
            "Value": value,
            "PropagateAtLaunch": True,
        }
        for key, value in tags.items()
    ]


@pytest.fixture
def world(aws: list[dict[str, Any]]) -> World:
    ec2, iam = client("ec2"), client("iam")
    autoscaling, batch = client("autoscaling"), client("batch")

    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/24")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(GroupName="batch", Description="batch", VpcId=vpc)
    security_group = group["GroupId"]
    image = "ami-12c6146b"
    # moto checks every instance it launches (these, the groups' and Batch's) by scanning
    # its offerings catalogue in order, about 1,300 entries for us-east-1; the a1 family
    # comes first, t3 near the end. The type matters to nothing here.
    instance_type = "a1.medium"

    # Auto Scaling: training (this stack), training (another stack), inference (this stack).
    ec2.create_launch_template(
        LaunchTemplateName="gpu",
        LaunchTemplateData={"ImageId": image, "InstanceType": instance_type},
    )
    for name, tags, (min_size, desired, max_size) in (
        ("ml-prod-training", TRAINING, (1, 2, 4)),
        ("ml-dev-training", OTHER_STACK, (1, 1, 3)),
        ("ml-prod-inference", INFERENCE, (2, 2, 5)),
    ):
        autoscaling.create_auto_scaling_group(
            AutoScalingGroupName=name,
            LaunchTemplate={"LaunchTemplateName": "gpu", "Version": "$Latest"},
            MinSize=min_size,
            DesiredCapacity=desired,
            MaxSize=max_size,
            VPCZoneIdentifier=subnet,
            Tags=_asg_tags(name, tags),
        )

    # Batch needs a service role and an instance profile for managed EC2 environments.
    trust = json.dumps({"Version": "2012-10-17", "Statement": []})
    service_role = iam.create_role(RoleName="batch-service", AssumeRolePolicyDocument=trust)
    instance_role = iam.create_role(RoleName="batch-instance", AssumeRolePolicyDocument=trust)
    profile = iam.create_instance_profile(InstanceProfileName="batch-instance")
    iam.add_role_to_instance_profile(
        InstanceProfileName="batch-instance", RoleName=instance_role["Role"]["RoleName"]
    )
    ec2_resources = {
        "type": "EC2",
        # 8 vCPUs: the environment's desiredvCpus of 8 is one instance, not eight.
        "instanceTypes": ["a1.2xlarge"],
        "instanceRole": profile["InstanceProfile"]["Arn"],
        "subnets": [subnet],
        "securityGroupIds": [security_group],
    }
    envs = {}
    for name, tags, resources in (
        # Running jobs: Batch has instances up, desiredvCpus is 8.
        ("ml-prod-training", TRAINING,
         {**ec2_resources, "minvCpus": 2, "desiredvCpus": 8, "maxvCpus": 64}),
        ("ml-prod-fargate", TRAINING, {"type": "FARGATE", "maxvCpus": 16, "subnets": [subnet],
                                       "securityGroupIds": [security_group]}),
        ("untagged", {}, {**ec2_resources, "minvCpus": 0, "maxvCpus": 16}),
        # Batch is filtered by tags only in the handler: inference and another stack's
        # training must survive it.
        ("ml-prod-batch-inference", INFERENCE, {**ec2_resources, "minvCpus": 0, "maxvCpus": 8}),
        ("ml-dev-batch-training", OTHER_STACK, {**ec2_resources, "minvCpus": 0, "maxvCpus": 8}),
    ):  # fmt: skip
        envs[name] = batch.create_compute_environment(
            computeEnvironmentName=name,
            type="MANAGED",
            state="ENABLED",
            computeResources=resources,
            serviceRole=service_role["Role"]["Arn"],
            **({"tags": tags} if tags else {}),
        )["computeEnvironmentArn"]
    batch.create_job_queue(
        jobQueueName="ml-prod-training",
        state="ENABLED",
        priority=1,
        computeEnvironmentOrder=[
            {"order": 1, "computeEnvironment": envs["ml-prod-training"]},
        ],
        tags=TRAINING,
    )
    batch.create_job_queue(
        jobQueueName="untagged",
        state="ENABLED",
        priority=1,
        computeEnvironmentOrder=[{"order": 1, "computeEnvironment": envs["untagged"]}],
    )
    for name, tags in (
        ("ml-prod-batch-inference", INFERENCE),
        ("ml-dev-batch-training", OTHER_STACK),
    ):
        batch.create_job_queue(
            jobQueueName=name,
            state="ENABLED",
            priority=1,
            computeEnvironmentOrder=[{"order": 1, "computeEnvironment": envs[name]}],
            tags=tags,
        )

    batch.register_job_definition(
        jobDefinitionName="train",
        type="container",
        containerProperties={"image": "trainer:1", "vcpus": 4, "memory": 1024},
    )

    def job(queue: str, status: str) -> str:
        job_id = batch.submit_job(jobName=f"train-{status.lower()}", jobQueue=queue,
                                  jobDefinition="train")["jobId"]  # fmt: skip
        # moto without Docker finishes every job at once; put it in the state under test.
        moto_job = moto_batch().get_job_by_id(job_id)
        assert moto_job is not None
        moto_job.job_stopped = status in {"SUCCEEDED", "FAILED"}
        moto_job.status = status
        return job_id

    def instance(tags: dict[str, str]) -> str:
        spec = [{"ResourceType": "instance", "Tags": _tag_list(tags)}] if tags else []
        return ec2.run_instances(
            ImageId=image,
            InstanceType=instance_type,
            MinCount=1,
            MaxCount=1,
            SubnetId=subnet,
            TagSpecifications=spec,
        )["Instances"][0]["InstanceId"]

    return World(
        training_asg="ml-prod-training",
        other_stack_asg="ml-dev-training",
        inference_asg="ml-prod-inference",
        training_ce="ml-prod-training",
        fargate_ce="ml-prod-fargate",
        untagged_ce="untagged",
        inference_ce="ml-prod-batch-inference",
        other_stack_ce="ml-dev-batch-training",
        training_queue="ml-prod-training",
        untagged_queue="untagged",
        inference_queue="ml-prod-batch-inference",
        other_stack_queue="ml-dev-batch-training",
        training_instance=instance(TRAINING),
        untagged_instance=instance({}),
        inference_instance=instance(INFERENCE),
        other_stack_instance=instance(OTHER_STACK),
        running_job=job("ml-prod-training", "RUNNING"),
        runnable_job=job("ml-prod-training", "RUNNABLE"),
        finished_job=job("ml-prod-training", "SUCCEEDED"),
        other_stack_job=job("ml-dev-batch-training", "RUNNING"),
    )


# -- reading state back ----------------------------------------------------------------------


def asg(name: str) -> dict[str, Any]:
    groups = client("autoscaling").describe_auto_scaling_groups(AutoScalingGroupNames=[name])[
        "AutoScalingGroups"
    ]
    (group,) = groups
    return {
        "min": group["MinSize"],
        "desired": group["DesiredCapacity"],
        "max": group["MaxSize"],
        "tags": {tag["Key"]: tag["Value"] for tag in group["Tags"]},
    }


def asg_instances(name: str) -> list[str]:
    (group,) = client("autoscaling").describe_auto_scaling_groups(AutoScalingGroupNames=[name])[
        "AutoScalingGroups"
    ]
    return [instance["InstanceId"] for instance in group["Instances"]]


def compute_environment(name: str) -> dict[str, Any]:
    (env,) = client("batch").describe_compute_environments(computeEnvironments=[name])[
        "computeEnvironments"
    ]
    return env


def job_statuses(*job_ids: str) -> dict[str, str]:
    jobs = client("batch").describe_jobs(jobs=list(job_ids))["jobs"]
    return {job["jobId"]: job["status"] for job in jobs}


def queue_state(name: str) -> str:
    (queue,) = client("batch").describe_job_queues(jobQueues=[name])["jobQueues"]
    return queue["state"]


def instance_states(*instance_ids: str) -> dict[str, str]:
    reservations = client("ec2").describe_instances(InstanceIds=list(instance_ids))
    return {
        instance["InstanceId"]: instance["State"]["Name"]
        for reservation in reservations["Reservations"]
        for instance in reservation["Instances"]
    }


def instance_state(instance_id: str) -> str:
    return instance_states(instance_id)[instance_id]


def snapshot(world: World) -> dict[str, Any]:
    """Every size and state the kill switch could touch."""
    envs = {
        name: compute_environment(name)
        for name in (
            world.training_ce,
            world.fargate_ce,
            world.untagged_ce,
            world.inference_ce,
            world.other_stack_ce,
        )
    }
    return {
        "asgs": {
            name: asg(name)
            for name in (world.training_asg, world.other_stack_asg, world.inference_asg)
        },
        "envs": {
            name: (
                env["computeResources"].get("minvCpus"),
                env["computeResources"]["maxvCpus"],
                env["tags"],
                env["state"],
            )
            for name, env in envs.items()
        },
        "queues": {
            name: queue_state(name)
            for name in (
                world.training_queue,
                world.untagged_queue,
                world.inference_queue,
                world.other_stack_queue,
            )
        },
        "instances": instance_states(
            world.training_instance,
            world.untagged_instance,
            world.inference_instance,
            world.other_stack_instance,
        ),
        "jobs": job_statuses(
            world.running_job, world.runnable_job, world.finished_job, world.other_stack_job
        ),
    }


def changed(summary: dict[str, Any]) -> list[Any]:
    return [
        *summary["auto_scaling_groups"],
        *summary["batch_compute_environments"],
        *summary["job_queues"],
        *summary["jobs"],
        *summary["instances"],
    ]


# -- tests -----------------------------------------------------------------------------------


def test_tag_constants_mirror_aistack_config() -> None:
    assert (STACK_TAG, WORKLOAD_TAG) == (config.STACK_TAG, config.WORKLOAD_TAG)


def test_handler_module_imports_only_stdlib_and_boto3() -> None:
    # The file is deployed alone as the Lambda's code: anything else would fail to import.
    tree = ast.parse(Path(budget_guard.__file__).read_text(encoding="utf-8"))
    imported = {
        name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for name in (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
        )
    }
    assert imported - sys.stdlib_module_names == {"boto3", "botocore"}


def test_required_actions_cover_discovery_and_mutation() -> None:
    assert REQUIRED_ACTIONS == {
        "autoscaling": [
            "autoscaling:DescribeAutoScalingGroups",
            "autoscaling:CreateOrUpdateTags",
            "autoscaling:UpdateAutoScalingGroup",
        ],
        "batch": [
            "batch:DescribeComputeEnvironments",
            "batch:DescribeJobQueues",
            "batch:ListJobs",
            "batch:TagResource",
            "batch:TerminateJob",
            "batch:UpdateComputeEnvironment",
            "batch:UpdateJobQueue",
        ],
        "ec2": ["ec2:DescribeInstances", "ec2:StopInstances"],
        "sns": ["sns:Publish"],
    }
    for actions in (*DISCOVERY_ACTIONS.values(), *MUTATING_ACTIONS.values()):
        assert all(action.split(":")[1][:1].isupper() for action in actions)
    json.dumps(REQUIRED_ACTIONS)


def test_scales_only_this_stacks_training_capacity_to_zero(
    aws: list[dict[str, Any]], world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AISTACK_STACK", STACK)
    before = snapshot(world)

    summary = handler(SNS_EVENT, None)

    json.dumps(summary)
    after = snapshot(world)
    # Auto Scaling: min and desired to zero, max kept, previous sizes recorded.
    training = after["asgs"][world.training_asg]
    assert (training["min"], training["desired"], training["max"]) == (0, 0, 4)
    assert training["tags"][PREVIOUS_SIZE_TAG] == "min=1,desired=2"
    assert after["asgs"][world.other_stack_asg] == before["asgs"][world.other_stack_asg]
    assert after["asgs"][world.inference_asg] == before["asgs"][world.inference_asg]
    other, inference = after["asgs"][world.other_stack_asg], after["asgs"][world.inference_asg]
    assert (other["min"], other["desired"], other["max"]) == (1, 1, 3)
    assert (inference["min"], inference["desired"], inference["max"]) == (2, 2, 5)
    assert PREVIOUS_SIZE_TAG not in other["tags"] | inference["tags"]
    # Batch: both environments are disabled. The EC2 one still runs instances (desiredvCpus
    # 8), so it loses minvCpus only: Batch refuses a maxvCpus below desiredvCpus and refuses
    # lowering desiredvCpus by hand; disabled, with min 0, it scales in by itself. Fargate
    # has only maxvCpus.
    assert aws == [
        {"state": "DISABLED", "computeResources": {"minvCpus": 0}},
        {"state": "DISABLED", "computeResources": {"maxvCpus": 0}},
    ]
    min_v, max_v, tags, state = after["envs"][world.training_ce]
    assert (min_v, max_v, state) == (0, 64, "DISABLED")
    assert tags[PREVIOUS_SIZE_TAG] == "min=2,max=64,desired=8"
    assert after["envs"][world.fargate_ce][1] == 0
    assert after["envs"][world.fargate_ce][2][PREVIOUS_SIZE_TAG] == "max=16"
    assert after["envs"][world.fargate_ce][3] == "DISABLED"
    assert (
        after["envs"][world.untagged_ce]
        == before["envs"][world.untagged_ce]
        == (0, 16, {}, "ENABLED")
    )
    # The stack's unfinished jobs are terminated; finished ones and other stacks' are not.
    assert after["jobs"] == {
        world.running_job: "FAILED",
        world.runnable_job: "FAILED",
        world.finished_job: "SUCCEEDED",
        world.other_stack_job: "RUNNING",
    }
    assert after["queues"] == {
        world.training_queue: "DISABLED",
        world.untagged_queue: "ENABLED",
        world.inference_queue: "ENABLED",
        world.other_stack_queue: "ENABLED",
    }
    for untouched in (world.inference_ce, world.other_stack_ce):
        assert after["envs"][untouched] == before["envs"][untouched]
        assert after["envs"][untouched][:2] == (0, 8)
    # EC2: the tagged standalone instance is stopped, everything else keeps running.
    assert after["instances"] == {
        world.training_instance: "stopped",
        world.untagged_instance: "running",
        world.inference_instance: "running",
        world.other_stack_instance: "running",
    }
    # The summary says what changed.
    assert summary["stack"] == STACK
    assert summary["dry_run"] is False
    assert summary["auto_scaling_groups"] == [
        {"name": world.training_asg, "previous": {"min": 1, "desired": 2, "max": 4}}
    ]
    assert [env["name"] for env in summary["batch_compute_environments"]] == [
        world.training_ce,
        world.fargate_ce,
    ]
    assert [queue["name"] for queue in summary["job_queues"]] == [world.training_queue]
    assert sorted((job["id"], job["previous_status"]) for job in summary["jobs"]) == sorted(
        [(world.running_job, "RUNNING"), (world.runnable_job, "RUNNABLE")]
    )
    assert summary["instances"] == [{"id": world.training_instance, "previous_state": "running"}]


def test_second_run_changes_nothing_and_keeps_the_previous_size_tag(
    aws: list[dict[str, Any]], world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AISTACK_STACK", STACK)
    handler(SNS_EVENT, None)
    after_first = snapshot(world)
    calls_after_first = len(aws)

    summary = handler(SNS_EVENT, None)

    assert changed(summary) == []
    assert snapshot(world) == after_first
    assert len(aws) == calls_after_first  # no second UpdateComputeEnvironment
    assert asg(world.training_asg)["tags"][PREVIOUS_SIZE_TAG] == "min=1,desired=2"
    unchanged = {(entry["kind"], entry["id"]): entry["reason"] for entry in summary["unchanged"]}
    assert unchanged[("auto_scaling_group", world.training_asg)].startswith("already at zero")
    assert unchanged[("batch_compute_environment", world.training_ce)].startswith("already")
    assert unchanged[("batch_compute_environment", world.fargate_ce)].startswith("already")
    assert unchanged[("job_queue", world.training_queue)] == "already disabled"
    assert unchanged[("instance", world.training_instance)] == "already stopped"


def test_dry_run_reports_but_changes_nothing(
    aws: list[dict[str, Any]],
    world: World,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("AISTACK_STACK", STACK)
    monkeypatch.setenv("AISTACK_DRY_RUN", "true")
    before = snapshot(world)

    with caplog.at_level(logging.INFO, logger=budget_guard.__name__):
        summary = handler(SNS_EVENT, None)

    assert snapshot(world) == before
    assert aws == []
    assert PREVIOUS_SIZE_TAG not in asg(world.training_asg)["tags"]
    assert summary["dry_run"] is True
    assert [group["name"] for group in summary["auto_scaling_groups"]] == [world.training_asg]
    assert len(summary["batch_compute_environments"]) == 2
    assert [queue["name"] for queue in summary["job_queues"]] == [world.training_queue]
    assert [instance["id"] for instance in summary["instances"]] == [world.training_instance]
    assert any("[dry run] would scale Auto Scaling group" in m for m in caplog.messages)
    # The group's own instances carry the tags too (propagated at launch) but are the group's
    # to stop; they are reported, not stopped one by one.
    launched = asg_instances(world.training_asg)
    assert len(launched) == 2
    assert instance_states(*launched) == dict.fromkeys(launched, "running")
    unchanged = {entry["id"]: entry["reason"] for entry in summary["unchanged"]}
    for instance_id in launched:
        assert unchanged[instance_id] == f"launched by Auto Scaling group {world.training_asg}"


def test_logs_one_line_per_action_and_the_budget_message(
    aws: list[dict[str, Any]],
    world: World,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("AISTACK_STACK", STACK)

    with caplog.at_level(logging.INFO, logger=budget_guard.__name__):
        handler(SNS_EVENT, None)

    messages = caplog.messages
    notification = [m for m in messages if m.startswith("budget notification")]
    assert len(notification) == 1
    assert "ml-prod-monthly has exceeded" in notification[0]
    assert "100.0% of 5000.00 USD" in notification[0]
    assert sum(m.startswith("scale Auto Scaling group") for m in messages) == 1
    assert sum(m.startswith("stop Batch compute environment") for m in messages) == 2
    assert sum(m.startswith("terminate Batch job") for m in messages) == 2
    assert sum(m.startswith("disable Batch job queue") for m in messages) == 1
    assert sum(m.startswith(f"stop EC2 instance {world.training_instance}") for m in messages) == 1


@pytest.mark.parametrize("event", [{}, None, {"Records": "garbage"}, {"Records": [{"x": 1}]}])
def test_direct_invoke_and_odd_events_work(
    aws: list[dict[str, Any]], world: World, monkeypatch: pytest.MonkeyPatch, event: Any
) -> None:
    monkeypatch.setenv("AISTACK_STACK", STACK)

    summary = handler(event, None)

    assert [group["name"] for group in summary["auto_scaling_groups"]] == [world.training_asg]


def test_no_tagged_resources_returns_an_empty_summary(
    aws: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AISTACK_STACK", STACK)

    summary = handler(SNS_EVENT, None)

    assert summary == {
        "stack": STACK,
        "dry_run": False,
        "auto_scaling_groups": [],
        "batch_compute_environments": [],
        "job_queues": [],
        "jobs": [],
        "instances": [],
        "unchanged": [],
    }


def test_another_stacks_name_touches_nothing_here(
    aws: list[dict[str, Any]], world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AISTACK_STACK", "ml-staging")
    before = snapshot(world)

    summary = handler({}, None)

    assert changed(summary) == []
    assert snapshot(world) == before


@pytest.mark.parametrize("value", [None, "", "   "])
def test_refuses_to_act_without_a_stack(
    aws: list[dict[str, Any]], world: World, monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is not None:
        monkeypatch.setenv("AISTACK_STACK", value)
    before = snapshot(world)

    with pytest.raises(KillSwitchConfigError, match="AISTACK_STACK is not set"):
        handler(SNS_EVENT, None)

    assert snapshot(world) == before


def test_refuses_an_unreadable_dry_run_flag(
    aws: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AISTACK_STACK", STACK)
    monkeypatch.setenv("AISTACK_DRY_RUN", "ture")

    with pytest.raises(KillSwitchConfigError, match="AISTACK_DRY_RUN"):
        handler({}, None)


def test_resources_deleted_mid_run_are_not_errors(
    aws: list[dict[str, Any]], world: World, session: boto3.session.Session
) -> None:
    session = hookable_session(session)

    def delete_group(**_: Any) -> None:
        client("autoscaling").delete_auto_scaling_group(
            AutoScalingGroupName=world.training_asg, ForceDelete=True
        )

    def delete_queue(**_: Any) -> None:
        batch = client("batch")
        batch.update_job_queue(jobQueue=world.training_queue, state="DISABLED")
        batch.delete_job_queue(jobQueue=world.training_queue)

    # moto's CreateOrUpdateTags fails with a 500 on a missing group, so delete the group after
    # the tag is written and before the resize, which is the window that matters anyway.
    session.events.register("before-call.autoscaling.UpdateAutoScalingGroup", delete_group)
    session.events.register("before-call.batch.UpdateJobQueue", delete_queue)

    summary = kill_switch(STACK, session=session)

    assert summary["auto_scaling_groups"] == []
    assert summary["job_queues"] == []
    unchanged = {(entry["kind"], entry["id"]): entry["reason"] for entry in summary["unchanged"]}
    assert unchanged[("auto_scaling_group", world.training_asg)] == "no longer exists"
    assert unchanged[("job_queue", world.training_queue)] == "no longer exists"
    # The rest of the run went ahead.
    assert instance_state(world.training_instance) == "stopped"


def test_unexpected_errors_propagate_after_the_rest_is_done(
    aws: list[dict[str, Any]], world: World, session: boto3.session.Session
) -> None:
    session = hookable_session(session)

    def deny(**_: Any) -> None:
        raise ClientError(
            {"Error": {"Code": "AccessDenied", "Message": "not authorized"}}, "UpdateJobQueue"
        )

    session.events.register("before-call.batch.UpdateJobQueue", deny)

    with pytest.raises(ClientError, match="AccessDenied"):
        kill_switch(STACK, session=session)

    # Everything else was still scaled down before the error was raised.
    assert asg(world.training_asg)["desired"] == 0
    env = compute_environment(world.training_ce)
    assert (env["state"], env["computeResources"]["minvCpus"]) == ("DISABLED", 0)
    assert instance_state(world.training_instance) == "stopped"
    assert queue_state(world.training_queue) == "ENABLED"
    # A queue that could not be disabled still has its running jobs terminated.
    assert job_statuses(world.running_job)[world.running_job] == "FAILED"


def test_unexpected_discovery_errors_propagate(
    aws: list[dict[str, Any]], world: World, session: boto3.session.Session
) -> None:
    session = hookable_session(session)

    def throttle(**_: Any) -> None:
        raise ClientError(
            {"Error": {"Code": "Throttling", "Message": "Rate exceeded"}},
            "DescribeAutoScalingGroups",
        )

    session.events.register("before-call.autoscaling.DescribeAutoScalingGroups", throttle)

    with pytest.raises(ClientError, match="Throttling"):
        kill_switch(STACK, session=session)

    assert instance_state(world.training_instance) == "stopped"


def test_the_batch_fixture_refuses_max_below_desired_as_batch_does(
    aws: list[dict[str, Any]], world: World
) -> None:
    # What the kill switch used to send: Batch refuses it while instances run, which made
    # the kill switch fail (and retry, and give up) exactly when jobs were running.
    with pytest.raises(ClientError) as refused:
        client("batch").update_compute_environment(
            computeEnvironment=world.training_ce,
            computeResources={"minvCpus": 0, "maxvCpus": 0},
        )
    assert refused.value.response["Error"]["Code"] == "ClientException"
    assert "desiredvCpus should be between minvCpus and maxvCpus" in str(refused.value)
    with pytest.raises(ClientError, match="Manually scaling down compute environment"):
        client("batch").update_compute_environment(
            computeEnvironment=world.training_ce, computeResources={"desiredvCpus": 0}
        )


def test_a_later_run_lowers_max_once_batch_has_scaled_in_and_keeps_the_first_sizes(
    aws: list[dict[str, Any]], world: World
) -> None:
    kill_switch(STACK)
    # With its jobs terminated and minvCpus at 0, Batch scales the disabled environment in.
    env = moto_batch().get_compute_environment(world.training_ce)
    assert env is not None
    env.compute_resources["desiredvCpus"] = 0
    del aws[:]

    summary = kill_switch(STACK)

    assert aws == [{"state": "DISABLED", "computeResources": {"maxvCpus": 0}}]
    after = compute_environment(world.training_ce)
    assert after["computeResources"]["maxvCpus"] == 0
    assert after["tags"][PREVIOUS_SIZE_TAG] == "min=2,max=64,desired=8"  # not overwritten
    assert [entry["name"] for entry in summary["batch_compute_environments"]] == [world.training_ce]
    # And a third run has nothing left to do.
    del aws[:]
    third = kill_switch(STACK)
    assert changed(third) == [] and aws == []


def test_batch_managed_auto_scaling_groups_are_left_to_batch(
    aws: list[dict[str, Any]], world: World
) -> None:
    # AWS Batch runs a compute environment's instances in an Auto Scaling group of its own,
    # which its service-linked role may only create and resize under the name `AWSBatch*`
    # and only tag with `AWSBatchServiceTag` (AWS Batch User Guide, "Using service-linked
    # roles for AWS Batch", AWSServiceRoleForBatch permissions; "AWS Batch creates a
    # separate, Batch-managed launch template for the Auto Scaling group", "Launch template
    # support"). Resizing it by hand fights Batch; the kill switch goes through the compute
    # environment instead, even if Batch copied the stack's tags onto the group.
    name = "AWSBatch-ml-prod-training-asg-640012bd-4e90-3f19-9dd2-c09a23dc923d"
    client("autoscaling").create_auto_scaling_group(
        AutoScalingGroupName=name,
        LaunchTemplate={"LaunchTemplateName": "gpu", "Version": "$Latest"},
        MinSize=0,
        DesiredCapacity=2,
        MaxSize=16,
        AvailabilityZones=[f"{REGION}a"],
        Tags=_asg_tags(name, {**TRAINING, "AWSBatchServiceTag": "batch"}),
    )

    summary = kill_switch(STACK)

    group = asg(name)
    assert (group["min"], group["desired"], group["max"]) == (0, 2, 16)
    assert PREVIOUS_SIZE_TAG not in group["tags"]
    unchanged = {(entry["kind"], entry["id"]): entry["reason"] for entry in summary["unchanged"]}
    assert unchanged[("auto_scaling_group", name)].startswith("managed by AWS Batch")
    # The aistack-managed training group is still scaled as before.
    assert asg(world.training_asg)["desired"] == 0


def test_instances_karpenter_launched_are_reported_not_stopped(
    aws: list[dict[str, Any]], world: World
) -> None:
    """Karpenter replaces an instance that stops (its NodeClaim's instance is gone), so
    stopping one changes nothing but the bill for a fresh boot; the alert says where its
    training is stopped instead."""
    ec2 = client("ec2")
    source = ec2.describe_instances(InstanceIds=[world.training_instance])
    launched = source["Reservations"][0]["Instances"][0]
    karpenter = ec2.run_instances(
        ImageId=launched["ImageId"],
        InstanceType=launched["InstanceType"],
        MinCount=1,
        MaxCount=1,
        SubnetId=launched["SubnetId"],
        TagSpecifications=[
            {
                "ResourceType": "instance",
                "Tags": _tag_list({**TRAINING, "karpenter.sh/nodepool": "gpu-spot"}),
            }
        ],
    )["Instances"][0]["InstanceId"]

    summary = kill_switch(STACK)

    assert instance_state(karpenter) == "running"
    assert instance_state(world.training_instance) in {"stopping", "stopped"}
    unchanged = {(entry["kind"], entry["id"]): entry["reason"] for entry in summary["unchanged"]}
    reason = unchanged[("instance", karpenter)]
    assert reason.startswith("launched by Karpenter NodePool gpu-spot")
    assert "stop_command" in reason


def test_the_report_on_the_alert_topic_says_what_was_stopped_and_what_was_left(
    aws: list[dict[str, Any]], world: World
) -> None:
    """The team reads the alert topic: the run's report says what it stopped, what it left
    alone and why, as SNS delivers it to a subscriber (moto's SNS to SQS)."""
    sns, sqs = client("sns"), client("sqs")
    topic = sns.create_topic(Name="budget-alerts")["TopicArn"]
    queue = sqs.create_queue(QueueName="team-inbox")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)

    summary = kill_switch(STACK, report_topic=topic)

    [message] = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    body = json.loads(message["Body"])
    assert body["Subject"].startswith("aistack kill switch stopped ")
    assert body["Subject"].endswith(f"resource(s) of {STACK}")
    text = body["Message"]
    assert f"stop EC2 instance {world.training_instance}" in text
    assert world.training_asg in text
    for entry in summary["unchanged"]:
        assert f"{entry['kind']} {entry['id']}: {entry['reason']}" in text
    assert "Failed" not in text


class StubbedSession:
    """A boto3-session stand-in whose clients answer from botocore Stubbers."""

    def __init__(self, session: boto3.session.Session) -> None:
        self.clients = {
            service: session.client(service, region_name=REGION)
            for service in ("autoscaling", "batch", "ec2")
        }
        self.stubbers = {service: Stubber(c) for service, c in self.clients.items()}
        self.stubbers["autoscaling"].add_response(
            "describe_auto_scaling_groups", {"AutoScalingGroups": []}
        )
        self.stubbers["ec2"].add_response("describe_instances", {"Reservations": []})

    def client(self, service: str) -> Any:
        return self.clients[service]


def test_a_refused_max_below_desired_still_disables_the_environment(
    session: boto3.session.Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The race Batch leaves open: the environment read desiredvCpus 0, Batch launched an
    # instance before the update, and refuses maxvCpus=0 with its ClientException (code and
    # message as Batch sends them; see the module docstring). The kill switch then disables
    # the environment and lowers minvCpus alone, and reports success.
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    stubbed = StubbedSession(session)
    batch = stubbed.stubbers["batch"]
    arn = f"arn:aws:batch:{REGION}:123456789012:compute-environment/ml-prod-training"
    batch.add_response(
        "describe_compute_environments",
        {
            "computeEnvironments": [
                {
                    "computeEnvironmentName": "ml-prod-training",
                    "computeEnvironmentArn": arn,
                    "type": "MANAGED",
                    "state": "ENABLED",
                    "status": "VALID",
                    "tags": TRAINING,
                    "computeResources": {
                        "type": "SPOT",
                        "minvCpus": 0,
                        "desiredvCpus": 0,
                        "maxvCpus": 384,
                        "subnets": ["subnet-1"],
                    },
                }
            ]
        },
    )
    batch.add_response("describe_job_queues", {"jobQueues": []})
    batch.add_response(
        "tag_resource",
        {},
        {"resourceArn": arn, "tags": {PREVIOUS_SIZE_TAG: "min=0,max=384,desired=0"}},
    )
    batch.add_client_error(
        "update_compute_environment",
        service_error_code="ClientException",
        service_message="desiredvCpus should be between minvCpus and maxvCpus",
        http_status_code=400,
        expected_params={
            "computeEnvironment": arn,
            "state": "DISABLED",
            "computeResources": {"maxvCpus": 0},
        },
    )
    batch.add_response(
        "update_compute_environment",
        {"computeEnvironmentName": "ml-prod-training", "computeEnvironmentArn": arn},
        {"computeEnvironment": arn, "state": "DISABLED"},
    )
    for stubber in stubbed.stubbers.values():
        stubber.activate()

    summary = kill_switch(STACK, session=stubbed)  # type: ignore[arg-type]

    for stubber in stubbed.stubbers.values():
        stubber.assert_no_pending_responses()
    (env,) = summary["batch_compute_environments"]
    assert env["name"] == "ml-prod-training"
    assert env["previous"]["state"] == "ENABLED"

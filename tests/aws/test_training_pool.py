"""TrainingPool: Spot, scale to zero, IMDSv2, encrypted, private, bounded, resumable, observed."""

import base64
import json

import pytest

from aistack import aws as aistack_aws
from aistack import catalog
from aistack.errors import ConfigError
from tests._harness.shared_graphs import shared

from .conftest import GOVERNANCE, run_in_us_east_1
from .training_platform import DIGEST
from .training_platform import training_platform as _platform

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("aws-training_pool")


def _one(graph, token):
    found = graph.of_type(token)
    assert len(found) == 1, f"expected one {token}, found {len(found)}"
    return found[0]


def _build(**pool):
    # The `run` and `governance` fixtures are per test; a module's shared build uses their
    # values directly.
    return run_in_us_east_1(lambda: _platform(dict(GOVERNANCE), **pool))


@pytest.fixture(scope="module")
def batch_graph():
    """The default (Batch, Spot) pool, built once for the tests that only read it."""
    with shared(_build()) as graph:
        yield graph


@pytest.fixture(scope="module")
def asg_graph():
    """The same pool on an auto scaling group, built once for the tests that only read it."""
    with shared(_build(scheduler="asg")) as graph:
        yield graph


def test_batch_compute_environment_is_spot_price_capacity_optimized_and_idles_at_zero(
    batch_graph,
):
    compute = _one(batch_graph, "aws:batch/computeEnvironment:ComputeEnvironment")
    resources = compute.inputs["computeResources"]
    assert resources["type"] == "SPOT"
    assert resources["allocationStrategy"] == "SPOT_PRICE_CAPACITY_OPTIMIZED"
    assert resources["minVcpus"] == 0
    assert resources["maxVcpus"] == 4 * catalog.get("g5.12xlarge").vcpus
    assert resources["instanceTypes"] == ["g5.12xlarge"]


def test_batch_nodes_use_only_training_subnets_in_offering_zones(batch_graph):
    compute = _one(batch_graph, "aws:batch/computeEnvironment:ComputeEnvironment")
    subnets = {s.id: s for s in batch_graph.of_type("aws:ec2/subnet:Subnet")}
    used = compute.inputs["computeResources"]["subnets"]
    assert used
    offering = set(catalog.get("g5.12xlarge").zones("us-east-1"))
    for subnet_id in used:
        subnet = subnets[subnet_id]
        assert subnet.inputs["availabilityZone"] in offering
        assert subnet.inputs.get("mapPublicIpOnLaunch") is False
        assert subnet.inputs["tags"]["aistack:workload"] == "training"


def test_launch_template_requires_imdsv2_encrypts_root_and_pins_the_image(batch_graph):
    template = _one(batch_graph, "aws:ec2/launchTemplate:LaunchTemplate")
    metadata = template.inputs["metadataOptions"]
    assert metadata["httpTokens"] == "required"
    assert metadata["httpEndpoint"] == "enabled"
    ebs = template.inputs["blockDeviceMappings"][0]["ebs"]
    assert ebs["encrypted"] == "true" and ebs["volumeType"] == "gp3"
    assert template.inputs["imageId"].startswith("ami-")
    assert not template.inputs["imageId"].startswith("resolve:ssm")
    pool = batch_graph.named("train")
    assert pool.type == "aistack:index:AwsTrainingPool"


def test_batch_user_data_is_mime_multipart_with_spot_draining_and_the_bootstrap(batch_graph):
    template = _one(batch_graph, "aws:ec2/launchTemplate:LaunchTemplate")
    user_data = base64.b64decode(template.inputs["userData"]).decode()
    assert user_data.startswith("MIME-Version: 1.0\nContent-Type: multipart/mixed")
    assert "ECS_ENABLE_SPOT_INSTANCE_DRAINING=true" in user_data
    assert "ECS_CONTAINER_STOP_TIMEOUT=110s" in user_data
    assert "AISTACK_DATASET_VERSION=v3" in user_data
    assert "AISTACK_MAX_RUNTIME_MINUTES=720" in user_data
    assert "AISTACK_SCHEDULER=batch" in user_data


def test_batch_hosts_install_the_aws_cli_agent_and_mdadm_the_ecs_ami_lacks(batch_graph):
    # The ECS-optimised AL2023 AMI is al2023-ami-minimal plus packages_al2023 =
    # "amazon-efs-utils amazon-ssm-agent amazon-ec2-net-utils acpid iproute-tc
    # ec2-instance-connect" (aws/amazon-ecs-ami variables.pkr.hcl): the node scripts' aws,
    # amazon-cloudwatch-agent-ctl and mdadm are not on it. bootstrap.sh installs these
    # before the cache and the sync (tests/node/test_bootstrap.py runs that under stubs).
    template = _one(batch_graph, "aws:ec2/launchTemplate:LaunchTemplate")
    user_data = base64.b64decode(template.inputs["userData"]).decode()
    assert "AISTACK_HOST_PACKAGES='awscli-2 amazon-cloudwatch-agent mdadm'" in user_data


def test_asg_nodes_on_the_deep_learning_ami_install_nothing(asg_graph):
    graph = asg_graph
    template = _one(graph, "aws:ec2/launchTemplate:LaunchTemplate")
    assert "AISTACK_HOST_PACKAGES" not in base64.b64decode(template.inputs["userData"]).decode()


def test_job_definition_has_timeout_and_retries_only_reclaimed_hosts(batch_graph):
    job = _one(batch_graph, "aws:batch/jobDefinition:JobDefinition")
    assert job.inputs["timeout"] == {"attemptDurationSeconds": 720 * 60}
    strategy = job.inputs["retryStrategy"]
    assert strategy["attempts"] == 3
    # Batch applies the first matching evaluateOnExit (Batch API reference, RetryStrategy:
    # "evaluated in order"), so every RETRY must precede the catch-all EXIT.
    assert strategy["evaluateOnExits"] == [
        {"onStatusReason": "Host EC2*", "action": "RETRY"},
        {"onExitCode": "138", "action": "RETRY"},
        {"onReason": "*", "action": "EXIT"},
    ]


def test_a_job_the_spot_watch_signalled_is_retried_not_failed(batch_graph):
    # SIGUSR1's default action is Term (signal(7)); a container ended by it exits
    # 128 + 10 = 138, and a trainer that checkpoints on it exits 138 to be requeued. Batch
    # reports "Essential container in task exited", which "Host EC2*" does not match, so
    # without a rule for 138 the catch-all failed a resumable run for good.
    job = _one(batch_graph, "aws:batch/jobDefinition:JobDefinition")
    rules = job.inputs["retryStrategy"]["evaluateOnExits"]
    first_match = next(
        rule for rule in rules if rule.get("onExitCode") == "138" or rule.get("onReason") == "*"
    )
    assert first_match["action"] == "RETRY"


def test_jobs_are_signalled_only_when_the_trainer_opts_in(run, governance, batch_graph):
    container = json.loads(
        _one(batch_graph, "aws:batch/jobDefinition:JobDefinition").inputs["containerProperties"]
    )
    names = {e["name"] for e in container["environment"]}
    assert "AISTACK_CHECKPOINT_SIGNAL" not in names
    graph = run(lambda: _platform(governance, job={"checkpointOnInterruption": True}))
    container = json.loads(
        _one(graph, "aws:batch/jobDefinition:JobDefinition").inputs["containerProperties"]
    )
    env = {e["name"]: e["value"] for e in container["environment"]}
    assert env["AISTACK_CHECKPOINT_SIGNAL"] == "USR1"


def test_job_runs_the_pinned_image_with_gpus_cache_logs_and_run_environment(batch_graph):
    job = _one(batch_graph, "aws:batch/jobDefinition:JobDefinition")
    container = json.loads(job.inputs["containerProperties"])
    assert container["image"] == DIGEST
    requirements = {r["type"]: r["value"] for r in container["resourceRequirements"]}
    assert requirements["GPU"] == str(catalog.get("g5.12xlarge").gpu_count)
    env = {e["name"]: e["value"] for e in container["environment"]}
    bucket = batch_graph.named("data-bucket").outputs["bucket"]
    ckpt = batch_graph.named("ckpt-bucket").outputs["bucket"]
    assert env["AISTACK_DATASET_URI"] == f"s3://{bucket}/v3"
    assert env["AISTACK_DATASET_VERSION"] == "v3"
    assert env["AISTACK_CHECKPOINT_URI"] == f"s3://{ckpt}/runs"
    # Run id, seed, commit and config hash are per-run parameters, refused when unset.
    assert set(job.inputs["parameters"]) == {"run_id", "seed", "code_commit", "config_hash"}
    assert container["command"][4:8] == [
        "Ref::run_id",
        "Ref::seed",
        "Ref::code_commit",
        "Ref::config_hash",
    ]
    assert "exit 64" in container["command"][2]
    assert container["mountPoints"][0]["containerPath"] == "/cache"
    assert container["volumes"][0]["host"]["sourcePath"] == "/mnt/nvme"
    log_group = batch_graph.named("train-logs")
    assert container["logConfiguration"]["options"]["awslogs-group"] == log_group.outputs["name"]


def test_log_group_is_retained_encrypted_and_kept_90_days(batch_graph):
    logs = batch_graph.named("train-logs")
    assert logs.inputs["retentionInDays"] == 90
    assert logs.inputs["kmsKeyId"] == batch_graph.named("train-logs-key").outputs["arn"]
    assert logs.retain_on_delete is True


def test_gpu_starvation_alarm_watches_pool_gpu_utilisation(batch_graph):
    alarm = batch_graph.named("train-gpu-starvation")
    assert alarm.inputs["metricName"] == "nvidia_smi_utilization_gpu"
    assert alarm.inputs["namespace"].endswith("/train")
    assert alarm.inputs["comparisonOperator"] == "LessThanThreshold"
    assert alarm.inputs["threshold"] == 40
    assert alarm.inputs["evaluationPeriods"] * alarm.inputs["period"] == 30 * 60


def _grant(graph, name):
    policy = json.loads(graph.named(name).inputs["policy"])
    return next(s for s in policy["Statement"] if s["Sid"] == "Objects")


def _s3_writes_of(graph, role_name):
    """Every S3 write action the role's inline policies allow."""
    role_id = graph.named(role_name).outputs["id"]
    found = set()
    for policy in graph.of_type("aws:iam/rolePolicy:RolePolicy"):
        if policy.inputs["role"] != role_id:
            continue
        for statement in json.loads(policy.inputs["policy"])["Statement"]:
            actions = statement["Action"]
            for action in [actions] if isinstance(actions, str) else actions:
                if action.startswith("s3:") and not action.startswith(("s3:Get", "s3:List")):
                    found.add(action)
    return found


def test_batch_jobs_read_the_dataset_and_write_checkpoints_with_the_job_role(batch_graph):
    data_arn = batch_graph.named("data-bucket").outputs["arn"]
    ckpt_arn = batch_graph.named("ckpt-bucket").outputs["arn"]
    read, write = (
        _grant(batch_graph, "data-read-train-job"),
        _grant(batch_graph, "ckpt-write-train-job"),
    )
    assert read["Resource"] == f"{data_arn}/*"
    assert "s3:PutObject" not in read["Action"]
    assert write["Resource"] == f"{ckpt_arn}/runs/*"
    assert _s3_writes_of(batch_graph, "id-training-job") >= {"s3:PutObject"}


def test_a_batch_instance_role_reads_the_pinned_dataset_version_only_and_writes_nothing(
    batch_graph,
):
    # Batch runs ECS jobs in host networking (Batch user guide, "Networking modes for AWS
    # Batch jobs": ECS-EC2 simple job, host), so every job reaches the instance role through
    # the metadata service whatever the hop limit. It keeps only the boot-time sync's read.
    data_arn = batch_graph.named("data-bucket").outputs["arn"]
    assert _grant(batch_graph, "data-read-train-pool")["Resource"] == f"{data_arn}/v3/*"
    assert _s3_writes_of(batch_graph, "id-training") == set()
    assert [r for r in batch_graph.resources if r.name == "ckpt-write-train-pool"] == []


def test_a_standing_pool_node_reads_and_writes_with_the_instance_role(asg_graph):
    data_arn = asg_graph.named("data-bucket").outputs["arn"]
    ckpt_arn = asg_graph.named("ckpt-bucket").outputs["arn"]
    assert _grant(asg_graph, "data-read-train-pool")["Resource"] == f"{data_arn}/*"
    assert _grant(asg_graph, "ckpt-write-train-pool")["Resource"] == f"{ckpt_arn}/runs/*"


def test_job_queue_carries_the_stack_tag_the_kill_switch_needs(batch_graph):
    queue = _one(batch_graph, "aws:batch/jobQueue:JobQueue")
    assert queue.inputs["tags"]["aistack:stack"] == "aistack-dev"
    assert queue.inputs["tags"]["aistack:workload"] == "training"


def test_pool_reports_its_vcpu_needs_for_the_quota(run, governance):
    pools = []
    run(lambda: pools.append(_platform(governance, maxNodes=3)))
    (need,) = pools[0].quota_needs()
    assert need.max_nodes == 3 and need.market == "spot"
    assert need.machine_types == ("g5.12xlarge",)


def test_asg_pool_is_mixed_spot_with_rebalance_at_zero_nodes(run, governance):
    graph = run(
        lambda: _platform(governance, scheduler="asg", instanceTypes=["g5.12xlarge", "g5.24xlarge"])
    )
    group = _one(graph, "aws:autoscaling/group:Group")
    assert group.inputs["minSize"] == 0 and group.inputs["desiredCapacity"] == 0
    assert group.inputs["maxSize"] == 4
    assert group.inputs["capacityRebalance"] is True
    policy = group.inputs["mixedInstancesPolicy"]
    distribution = policy["instancesDistribution"]
    assert distribution["onDemandPercentageAboveBaseCapacity"] == 0
    assert distribution["spotAllocationStrategy"] == "price-capacity-optimized"
    overrides = [o["instanceType"] for o in policy["launchTemplate"]["overrides"]]
    assert overrides == ["g5.12xlarge", "g5.24xlarge"]


def test_asg_nodes_have_no_public_ip_and_may_remove_only_themselves(asg_graph):
    graph = asg_graph
    template = _one(graph, "aws:ec2/launchTemplate:LaunchTemplate")
    interface = template.inputs["networkInterfaces"][0]
    assert interface["associatePublicIpAddress"] == "false"
    group = _one(graph, "aws:autoscaling/group:Group")
    statement = json.loads(graph.named("train-watchdog").inputs["policy"])["Statement"][0]
    assert statement["Action"] == "autoscaling:TerminateInstanceInAutoScalingGroup"
    assert statement["Resource"] == group.outputs["arn"]


def test_an_asg_node_that_shuts_itself_down_is_terminated_not_stopped(asg_graph):
    # EC2 User Guide, "Change the instance initiated shutdown behavior": an EBS-backed
    # instance that runs `shutdown` is *stopped* unless the launch sets "terminate". A
    # stopped node keeps billing for its EBS root and its group replaces it as unhealthy,
    # so the watchdog's last-resort `shutdown -h now` would not end the spending.
    graph = asg_graph
    template = _one(graph, "aws:ec2/launchTemplate:LaunchTemplate")
    assert template.inputs["instanceInitiatedShutdownBehavior"] == "terminate"
    # Containers on auto scaling nodes use the instance role, over one bridge hop.
    assert template.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 2


def test_batch_hosts_keep_one_metadata_hop_which_does_not_isolate_batch_jobs(batch_graph):
    # One hop keeps the metadata service from bridge-networked containers (checkov
    # CKV_AWS_341). It is no isolation for Batch jobs, which share the host's network
    # namespace (Batch user guide, "Networking modes for AWS Batch jobs"); that is why the
    # instance role holds no write (test above). Batch owns the instance's life: no
    # shutdown behaviour set.
    template = _one(batch_graph, "aws:ec2/launchTemplate:LaunchTemplate")
    assert template.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert "instanceInitiatedShutdownBehavior" not in template.inputs


def test_asg_idle_alarm_scales_the_group_to_zero(asg_graph):
    graph = asg_graph
    policy = graph.named("train-scale-to-zero")
    assert policy.inputs["adjustmentType"] == "ExactCapacity"
    assert policy.inputs["scalingAdjustment"] == 0
    alarm = graph.named("train-idle")
    assert alarm.inputs["alarmActions"] == [policy.outputs["arn"]]
    assert alarm.inputs["statistic"] == "Maximum"
    assert alarm.inputs["threshold"] == 5


def test_on_demand_market_uses_ec2_capacity(run, governance):
    graph = run(lambda: _platform(governance, market="on-demand"))
    compute = _one(graph, "aws:batch/computeEnvironment:ComputeEnvironment")
    assert compute.inputs["computeResources"]["type"] == "EC2"


def _refusal(run, governance, **kwargs):
    errors = []

    def program():
        try:
            _platform(governance, **kwargs)
        except ConfigError as error:
            errors.append(error)

    run(program)
    assert errors, "expected a ConfigError"
    return errors[0]


def test_dataset_in_another_region_is_refused(run, governance):
    error = _refusal(run, governance, dataset_region="us-west-2")
    assert "train.region" in error.fields and "D2" in str(error)


def test_mixed_gpu_classes_are_refused(run, governance):
    error = _refusal(run, governance, instanceTypes=["g5.12xlarge", "g6.12xlarge"])
    assert "train.instanceTypes" in error.fields


def test_missing_wall_clock_limit_is_refused(governance):
    with pytest.raises(ConfigError) as caught:
        aistack_aws.TrainingPoolArgs.parse(
            {
                "governance": governance,
                "region": "us-east-1",
                "instanceTypes": ["g5.xlarge"],
                "maxNodes": 1,
                "image": DIGEST,
            },
            where="train",
        )
    assert caught.value.fields == ["train.maxRuntimeMinutes"]


def test_mutable_image_tag_is_refused(governance):
    with pytest.raises(ConfigError, match="E1") as caught:
        aistack_aws.TrainingPoolArgs.parse(
            {
                "governance": governance,
                "region": "us-east-1",
                "instanceTypes": ["g5.xlarge"],
                "maxNodes": 1,
                "image": "trainer:latest",
                "maxRuntimeMinutes": 60,
            },
            where="train",
        )
    assert caught.value.fields == ["train.image"]


def test_nodes_wait_for_the_whole_network(batch_graph):
    compute = _one(batch_graph, "aws:batch/computeEnvironment:ComputeEnvironment")
    # Depending on the network component waits for every resource inside it: the S3
    # gateway endpoint and the interface endpoints exist before a node can boot.
    network = batch_graph.named("net")
    inside = {r.urn for r in batch_graph.descendants(network) if r.custom}
    assert inside <= set(compute.dependencies)
    assert batch_graph.named("net-s3").urn in compute.dependencies


def test_the_retained_log_group_takes_a_prefix_so_destroy_then_up_works(batch_graph):
    logs = batch_graph.named("train-logs")
    assert "name" not in logs.inputs
    assert logs.inputs["namePrefix"] == "/aistack/aistack-dev/train-"
    assert logs.outputs["name"].startswith("/aistack/aistack-dev/train-")

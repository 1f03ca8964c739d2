"""`aws.TrainingPool`: GPU capacity on Spot that resumes, caches on NVMe and stops itself.

Two schedulers share one launch template (pinned machine image, IMDSv2, encrypted gp3
root, no public IP, the node bootstrap as user data):

* `batch` (default): an AWS Batch managed compute environment that idles at 0 vCPUs (C5),
  a job queue and a job definition template: image by digest (E1), GPUs, a hard timeout
  (T5), retries only when the host was reclaimed (T2), logs to the pool's log group (T6),
  the NVMe cache mounted, and the run environment (D4, E3, E4, E5, T1).
* `asg`: a standing pool for interactive work, Ray or torchrun: a mixed-instances Spot
  auto scaling group at 0 nodes by default; each node's idle watchdog removes itself, and
  an alarm on the group's GPU utilisation scales it to zero as a second line of defence.

Both get a GPU-starvation alarm (T3) and report their vCPU needs to `aws.GpuQuota` (C1).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

import pulumi
import pulumi_aws as aws
from pydantic import Field, field_validator, model_validator

from aistack import catalog
from aistack.aws import _perms
from aistack.aws._base import child_opts, policy_output, stack_id, tags_for
from aistack.aws._logs import encrypted_log_group
from aistack.aws._node import gpu_launch_template, offers_in_region
from aistack.config import AistackModel, Governance
from aistack.contracts.aws import AwsInstanceProfile, AwsNetwork, AwsRole, AwsWorkloadIdentity
from aistack.contracts.capacity import CapacityNeed
from aistack.contracts.images import require_digest
from aistack.errors import ConfigError, Problem, Problems
from aistack.node import (
    CHECKPOINT_SIGNAL_ENV,
    ECS_AL2023_HOST_PACKAGES,
    REQUEUE_EXIT_CODE,
    NodeBootstrapConfig,
    render_user_data,
)

if TYPE_CHECKING:
    from aistack.aws.dataset_bucket import DatasetBucket

__all__ = ["MachineImage", "TrainingPool", "TrainingPoolArgs", "RUN_PARAMETERS"]

#: CloudWatch Logs accepts only these retention periods.
LOG_RETENTION_DAYS = (
    1,
    3,
    5,
    7,
    14,
    30,
    60,
    90,
    120,
    150,
    180,
    365,
    400,
    545,
    731,
    1096,
    1827,
    2192,
    2557,
    2922,
    3288,
    3653,
)
#: Per-run values every job must be submitted with (E3, E4, D4): `--parameters k=v,...`.
RUN_PARAMETERS = ("run_id", "seed", "code_commit", "config_hash")
# ECS-optimised GPU AMI for Batch; AWS Deep Learning Base AMI (drivers, CUDA, docker)
# for standing pools. Resolved once per `pulumi up`; the resolved id is exported.
DEFAULT_AMI_PARAMETERS = {
    "batch": "/aws/service/ecs/optimized-ami/amazon-linux-2023/gpu/recommended/image_id",
    "asg": "/aws/service/deeplearning/ami/x86_64/"
    "base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id",
}
ROOT_DEVICE = {"batch": "/dev/xvda", "asg": "/dev/sda1"}
CONTAINER_CACHE_PATH = "/cache"


def _ready(network: AwsNetwork) -> list[pulumi.Resource]:
    """What nodes must wait for: the whole network component when one is given."""
    return [network] if isinstance(network, pulumi.Resource) else []


class MachineImage(AistackModel):
    """The node's AMI: pinned by id, or resolved from an SSM parameter at deploy time."""

    ami_id: str | None = Field(
        None, pattern=r"^ami-[0-9a-f]{8,17}$", description="Pinned image id (preferred, E1)."
    )
    ssm_parameter: str | None = Field(
        None,
        description="Public SSM parameter resolved on each `pulumi up`; the resolved id is "
        "exported and written into the launch template, so nodes never change image "
        "between deployments. Default: the scheduler's recommended GPU image.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> MachineImage:
        if self.ami_id and self.ssm_parameter:
            raise ValueError("set ami_id or ssm_parameter, not both. Fix: keep one.")
        return self


class JobSpec(AistackModel):
    """The job definition template: what one training job asks for."""

    gpus: int | None = Field(None, ge=1, description="GPUs per job; default: a whole node.")
    vcpus: int | None = Field(None, ge=1, description="vCPUs per job; default: node minus 2.")
    memory_mib: int | None = Field(
        None, ge=1024, description="Memory per job; default: 90% of the node (agent headroom)."
    )
    shared_memory_mib: int = Field(
        16384,
        ge=64,
        description="/dev/shm for data loader workers (PyTorch needs more than "
        "docker's 64 MB default).",
    )
    command: tuple[str, ...] = Field(
        ("python", "-m", "train"), min_length=1, description="Command run in the image."
    )
    retry_attempts: int = Field(
        3, ge=1, le=10, description="Attempts when the host is reclaimed (T2); app errors exit."
    )
    checkpoint_on_interruption: bool = Field(
        False,
        description="The trainer handles SIGUSR1 by writing a checkpoint and exiting 138 "
        "(128 + SIGUSR1), and wants it on a Spot interruption notice: the job then carries "
        f"{CHECKPOINT_SIGNAL_ENV}=USR1, the host's spot watch sends it the signal, and Batch "
        "retries the job on exit 138 (T1, T2). Off (default): the trainer is never "
        "signalled, since SIGUSR1's default action would end it; the host still flushes "
        "the checkpoint directory and a reclaimed job is still retried.",
    )
    environment: dict[str, str] = Field(
        default_factory=dict, description="Extra environment for every job (no secrets)."
    )


class TrainingPoolArgs(AistackModel):
    output_keywords = frozenset({"alarm_topic_arn"})

    governance: Governance
    region: str = Field(
        description="The pool's region: must equal the dataset bucket's (D2) and be allowed (C4)."
    )
    scheduler: Literal["batch", "asg"] = Field(
        "batch", description="batch: jobs on demand from 0 vCPUs. asg: a standing group."
    )
    instance_types: tuple[str, ...] = Field(
        min_length=1,
        description="GPU instance types of ONE GPU class (same GPU model and count); several "
        "sizes widen the Spot pools the allocator can choose from.",
    )
    market: Literal["spot", "on-demand"] = Field(
        "spot", description="Spot is 40-70% cheaper; runs resume from checkpoints (T1, T2)."
    )
    max_nodes: int = Field(ge=1, le=1000, description="The cost cap of the pool; required.")
    min_nodes: int = Field(0, ge=0, description="asg only; 0 so an unused pool costs nothing.")
    image: str = Field(description="Training image by digest (E1): repo@sha256:<64 hex>.")
    machine_image: MachineImage = Field(default_factory=MachineImage)
    max_runtime_minutes: int = Field(
        ge=10,
        description="Hard wall-clock limit per job and per node (T5). Required: a run "
        "without a limit is how a stuck job bills for a month.",
    )
    idle_minutes: int = Field(30, ge=5, description="asg: idle minutes before a node leaves.")
    idle_gpu_util_percent: int = Field(5, ge=0, le=100, description="Idle below this GPU %.")
    starvation_gpu_util_percent: int = Field(
        40, ge=1, le=100, description="Alarm when busy nodes average GPU use below this (T3)."
    )
    starvation_minutes: int = Field(30, ge=5, description="...for this long (T3).")
    dataset_prefix: str = Field(
        "", description="Prefix in the dataset bucket holding one sub-prefix per version."
    )
    dataset_version: str | None = Field(
        None, description="Pinned dataset version; default: the dataset bucket's (D4)."
    )
    checkpoint_prefix: str = Field("runs", description="Prefix for checkpoints and manifests.")
    tracker_uri: str | None = Field(
        None, description="Experiment tracker endpoint passed to jobs (E6), e.g. MLflow URL."
    )
    root_volume_gb: int = Field(200, ge=30, description="Encrypted gp3 root (images are big).")
    stop_timeout_seconds: int = Field(
        110,
        ge=30,
        le=115,
        description="Grace between SIGTERM and SIGKILL for a container on a reclaimed host: "
        "Spot gives 120 s, keep a margin, use it to write the last checkpoint (T1).",
    )
    log_retention_days: int = Field(90, description="Retention of the pool's log group (T6).")
    job: JobSpec = Field(default_factory=JobSpec)
    alarm_topic_arn: str | None = Field(None, description="SNS topic for the pool's alarms.")

    @field_validator("image")
    @classmethod
    def _image_by_digest(cls, image: str) -> str:
        try:
            return require_digest(image, "image")
        except ConfigError as error:
            problem = error.problems[0]
            raise ValueError(f"{problem.message} Fix: {problem.fix}") from None

    @field_validator("log_retention_days")
    @classmethod
    def _valid_retention(cls, days: int) -> int:
        if days not in LOG_RETENTION_DAYS:
            raise ValueError(
                f"{days} is not a CloudWatch Logs retention. Fix: use one of {LOG_RETENTION_DAYS}."
            )
        return days

    def offers(
        self, problems: Problems | None = None, where: str = ""
    ) -> list[catalog.InstanceType]:
        """The catalog entries of the pool's instance types in its region."""
        problems = problems if problems is not None else Problems()
        return offers_in_region(self.instance_types, self.region, where, problems)

    def semantic_problems(self, where: str) -> list[Problem]:
        name = where
        problems = Problems()
        region_problem = self.governance.region_problem(self.region, f"{name}.region")
        if region_problem:
            problems.items.append(region_problem)
        offers = self.offers(problems, name)
        classes = {(offer.gpu_model, offer.gpu_memory_gb, offer.gpu_count) for offer in offers}
        if len(classes) > 1:
            problems.add(
                f"{name}.instanceTypes",
                "mixes GPU classes "
                + ", ".join(f"{o.name} ({o.gpu_label})" for o in offers)
                + "; a job sized for one would not fit, or would waste, the other.",
                "list sizes of one GPU class, e.g. g5.12xlarge and g6.12xlarge are both "
                "4 GPUs but different models: make two pools.",
            )
        if self.min_nodes > self.max_nodes:
            problems.add(f"{name}.minNodes", "exceeds maxNodes.", "lower minNodes.")
        if self.scheduler == "batch" and self.min_nodes:
            problems.add(
                f"{name}.minNodes",
                "applies to asg pools only; Batch idles at 0 vCPUs.",
                "remove minNodes.",
            )
        if offers and self.job.gpus and self.job.gpus > min(o.gpu_count for o in offers):
            problems.add(
                f"{name}.job.gpus",
                "asks for more GPUs than the smallest node has.",
                "lower job.gpus or use larger instance types.",
            )
        return problems.items


class TrainingPool(pulumi.ComponentResource):
    """GPU training capacity: Batch (default) or a standing auto scaling group."""

    log_group_name: pulumi.Output[str]
    job_queue_arn: pulumi.Output[str] | None
    job_definition_arn: pulumi.Output[str] | None
    auto_scaling_group_name: pulumi.Output[str] | None
    image_id: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: TrainingPoolArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        network: AwsNetwork | None = None,
        identity: AwsWorkloadIdentity | None = None,
        dataset: DatasetBucket | None = None,
        checkpoints: DatasetBucket | None = None,
        alarm_topic_arn: pulumi.Input[str] | None = None,
    ) -> None:
        """`alarm_topic_arn` (e.g. `budget.alert_topic_arn`) may be an Output; the args field
        of the same name takes a literal ARN from config."""

        def checks(valid: TrainingPoolArgs) -> list[catalog.InstanceType]:
            # Run only with every wiring keyword given (validate_with checks them first).
            assert dataset is not None and checkpoints is not None
            return self._validate(name, valid, dataset, checkpoints)

        args, self.offers = TrainingPoolArgs.validate_with(
            args,
            checks,
            where=name,
            wiring={
                "network": network,
                "identity": identity,
                "dataset": dataset,
                "checkpoints": checkpoints,
            },
        )
        # validate_with refused any of them missing, naming the keyword.
        assert network is not None and identity is not None
        assert dataset is not None and checkpoints is not None
        super().__init__(
            "aistack:index:AwsTrainingPool",
            name,
            {"scheduler": args.scheduler, "region": args.region, "market": args.market},
            opts,
        )
        self.args = args
        self._name = name
        self.region = args.region
        self.alarm_topic_arn = alarm_topic_arn or args.alarm_topic_arn
        largest = max(self.offers, key=lambda offer: offer.vcpus)
        self.node_shape = largest
        tags = tags_for(args.governance, workload="training", **{"aistack:pool": name})
        self.tags = tags
        # The instance role runs the node (ECS agent, CloudWatch agent, the host's dataset
        # sync). On Batch the job runs as its own role, trusted only by ecs-tasks; but Batch
        # runs ECS jobs in host networking (Batch user guide, "Networking modes for AWS Batch
        # jobs": ECS-EC2 simple job, host), so hop limit 1 does not keep the metadata service,
        # and the instance role, from job code. The instance role therefore holds only what
        # every job may have anyway (see _grants).
        role = identity.role("training")
        instance_profile = identity.instance_profile("training")
        job_role = identity.role("training-job") if args.scheduler == "batch" else None
        self.job_role = job_role
        self.dataset_version = args.dataset_version or (
            dataset.args.dataset.version if dataset.args.dataset else "unset"
        )

        self.logs_key, self.log_group = encrypted_log_group(
            name,
            self,
            log_group_name=f"/aistack/{stack_id()}/{name}",
            region=args.region,
            governance=args.governance,
            retention_days=args.log_retention_days,
            tags=tags,
        )
        self.log_group_name = self.log_group.name
        self.metrics_namespace = f"aistack/{stack_id()}/{name}"

        # Least privilege on data (D2 checked): the pool's logs (and metrics, in this pool's
        # namespace only, in place of CloudWatchAgentServerPolicy's logs and metrics on
        # everything), the dataset, the checkpoints. A standing pool's node and trainer use
        # the instance role for all of it. On Batch the job role reads the dataset and
        # writes checkpoints, and the host's spot watch flushes with a running job's
        # credentials (spot-watch.sh adopt_job_credentials); the instance role keeps the
        # read of the pinned dataset version alone, for the boot-time sync, which runs
        # before any job and so before any job credentials exist.
        batch = job_role is not None
        self.dataset_grant, self.checkpoint_grant, self.logs_grant = self._grants(
            role,
            "pool",
            dataset,
            checkpoints,
            metrics=True,
            dataset_prefix=self._version_prefix(args) if batch else None,
            write_checkpoints=not batch,
        )
        self.job_dataset_grant = self.job_checkpoint_grant = self.job_logs_grant = None
        if job_role is not None:
            self.job_dataset_grant, self.job_checkpoint_grant, self.job_logs_grant = self._grants(
                job_role, "job", dataset, checkpoints, metrics=False
            )

        self.image_id = self._resolve_image(args)
        dataset_prefix = args.dataset_prefix.strip("/")
        self.dataset_uri = dataset.bucket_name.apply(
            lambda bucket: f"s3://{bucket}/{dataset_prefix}".rstrip("/")
        )
        self.checkpoint_uri = checkpoints.bucket_name.apply(
            lambda bucket: f"s3://{bucket}/{args.checkpoint_prefix.strip('/')}"
        )
        self.launch_template = self._launch_template(name, args, instance_profile, network)

        self.compute_environment: aws.batch.ComputeEnvironment | None = None
        self.job_queue: aws.batch.JobQueue | None = None
        self.job_definition: aws.batch.JobDefinition | None = None
        self.group: aws.autoscaling.Group | None = None
        self.job_queue_arn = self.job_definition_arn = self.auto_scaling_group_name = None
        if job_role is not None:
            self._batch(name, args, network, instance_profile, job_role)
        else:
            self._asg(name, args, network, role)
        self.starvation_alarm = self._starvation_alarm(name, args)

        outputs: dict[str, Any] = {
            "scheduler": args.scheduler,
            "region": args.region,
            "image_id": self.image_id,
            "log_group_name": self.log_group_name,
            "dataset_uri": self.dataset_uri,
            "dataset_version": self.dataset_version,
            "checkpoint_uri": self.checkpoint_uri,
            "max_vcpus": self.max_vcpus,
        }
        if self.job_queue is not None and self.job_definition is not None:
            outputs.update(
                job_queue_arn=self.job_queue_arn,
                job_definition_arn=self.job_definition_arn,
                submit_command=self.submit_command(),
            )
        if self.group is not None:
            outputs["auto_scaling_group_name"] = self.auto_scaling_group_name
        self.register_outputs(outputs)

    # ---- validation ------------------------------------------------------------------------

    @staticmethod
    def _validate(
        name: str, args: TrainingPoolArgs, dataset: DatasetBucket, checkpoints: DatasetBucket
    ) -> list[catalog.InstanceType]:
        """The wiring checks; the arguments' own are `TrainingPoolArgs.semantic_problems`."""
        problems = Problems()
        for label, bucket in (("dataset", dataset), ("checkpoints", checkpoints)):
            if bucket.region != args.region:
                problems.add(
                    f"{name}.region",
                    f"the {label} bucket is in {bucket.region} but the pool is in "
                    f"{args.region}: every epoch would cross regions, slowly and billed "
                    "(checklist D2).",
                    f"put the pool in {bucket.region}, or the data in {args.region}.",
                )
        if dataset.args.kind != "dataset":
            problems.add(
                f"{name}.dataset",
                f"is a {dataset.args.kind!r} bucket.",
                "pass the DatasetBucket of kind 'dataset'.",
            )
        if checkpoints.args.kind != "checkpoints":
            problems.add(
                f"{name}.checkpoints",
                f"is a {checkpoints.args.kind!r} bucket.",
                "pass the DatasetBucket of kind 'checkpoints'.",
            )
        problems.raise_if_any()
        return args.offers()

    # ---- shared pieces --------------------------------------------------------------------

    @property
    def max_vcpus(self) -> int:
        return self.args.max_nodes * self.node_shape.vcpus

    def quota_needs(self) -> list[CapacityNeed]:
        """What `aws.GpuQuota` must request for this pool (C1)."""
        return [
            CapacityNeed(
                pool=self._name,
                machine_types=tuple(offer.name for offer in self.offers),
                max_nodes=self.args.max_nodes,
                market=self.args.market,
            )
        ]

    def _grants(
        self,
        role: AwsRole,
        holder: str,
        dataset: DatasetBucket,
        checkpoints: DatasetBucket,
        *,
        metrics: bool,
        dataset_prefix: str | None = None,
        write_checkpoints: bool = True,
    ) -> tuple[Any, Any, aws.iam.RolePolicy]:
        """`role` writes this pool's logs (and metrics), reads the dataset (under
        `dataset_prefix`, default the pool's whole dataset prefix) and, unless told not to,
        writes checkpoints."""
        args, name = self.args, self._name
        statements: list[dict[str, Any]] = [
            {
                "Sid": "WritePoolLogs",
                "Effect": "Allow",
                "Action": list(_perms.LOGS_WRITE),
                "Resource": pulumi.Output.concat(self.log_group.arn, ":*"),
            }
        ]
        if metrics:
            statements.append(
                {
                    "Sid": "PublishNodeMetrics",
                    "Effect": "Allow",
                    "Action": "cloudwatch:PutMetricData",
                    # PutMetricData has no resource-level permissions ("*" is required);
                    # the condition confines it to this pool's namespace.
                    "Resource": "*",
                    "Condition": {"StringEquals": {"cloudwatch:namespace": self.metrics_namespace}},
                }
            )
        suffix = "" if holder == "pool" else f"-{holder}"
        if dataset_prefix is None:
            dataset_prefix = args.dataset_prefix.strip("/")
        return (
            dataset.grant_read(role, prefix=dataset_prefix, name=f"{name}-{holder}"),
            checkpoints.grant_write(role, prefix=args.checkpoint_prefix, name=f"{name}-{holder}")
            if write_checkpoints
            else None,
            aws.iam.RolePolicy(
                f"{name}{suffix}-logs-write",
                role=role.id,
                policy=policy_output(*statements),
                opts=child_opts(self),
            ),
        )

    def _version_prefix(self, args: TrainingPoolArgs) -> str:
        """The pinned dataset version's prefix, which the boot-time sync copies."""
        return "/".join(
            part for part in (args.dataset_prefix.strip("/"), self.dataset_version) if part
        )

    def _resolve_image(self, args: TrainingPoolArgs) -> pulumi.Output[str]:
        if args.machine_image.ami_id:
            return pulumi.Output.from_input(args.machine_image.ami_id)
        parameter = args.machine_image.ssm_parameter or DEFAULT_AMI_PARAMETERS[args.scheduler]
        return aws.ssm.get_parameter_output(
            name=parameter, region=args.region, opts=pulumi.InvokeOutputOptions(parent=self)
        ).value

    def _bootstrap(self, args: TrainingPoolArgs) -> pulumi.Output[str]:
        def render(values: list[str]) -> str:
            dataset_uri, checkpoint_uri, log_group = values
            config = NodeBootstrapConfig(
                scheduler=args.scheduler,
                region=args.region,
                max_runtime_minutes=args.max_runtime_minutes,
                idle_minutes=args.idle_minutes,
                idle_gpu_util_percent=args.idle_gpu_util_percent,
                dataset_uri=dataset_uri,
                dataset_version=self.dataset_version,
                checkpoint_uri=checkpoint_uri,
                log_group=log_group,
                metrics_namespace=self.metrics_namespace,
                # The ECS-optimised AL2023 AMI has no aws CLI, CloudWatch agent or mdadm.
                host_packages=ECS_AL2023_HOST_PACKAGES if args.scheduler == "batch" else (),
            )
            ecs = (
                {
                    # Batch hosts: drain on a Spot notice so no new job lands on a doomed
                    # host, and give containers the time to write a last checkpoint.
                    "ECS_ENABLE_SPOT_INSTANCE_DRAINING": "true",
                    "ECS_CONTAINER_STOP_TIMEOUT": f"{args.stop_timeout_seconds}s",
                    "ECS_ENABLE_GPU_SUPPORT": "true",
                    # Batch jobs on EC2 use host networking (Batch user guide, "Networking
                    # modes for AWS Batch jobs"); the agent vends their job role there only
                    # with this (ECS developer guide, task IAM roles). Explicit, not assumed.
                    "ECS_ENABLE_TASK_IAM_ROLE": "true",
                    "ECS_ENABLE_TASK_IAM_ROLE_NETWORK_HOST": "true",
                }
                if args.scheduler == "batch"
                else None
            )
            return render_user_data(config, multipart=args.scheduler == "batch", ecs_config=ecs)

        return pulumi.Output.all(self.dataset_uri, self.checkpoint_uri, self.log_group.name).apply(
            render
        )

    def _launch_template(
        self,
        name: str,
        args: TrainingPoolArgs,
        instance_profile: AwsInstanceProfile,
        network: AwsNetwork,
    ) -> aws.ec2.LaunchTemplate:
        import base64

        return gpu_launch_template(
            f"{name}-launch-template",
            parent=self,
            description=f"aistack training pool {name}",
            region=args.region,
            image_id=self.image_id,
            instance_profile_arn=instance_profile.arn,
            root_device_name=ROOT_DEVICE[args.scheduler],
            root_volume_gb=args.root_volume_gb,
            user_data=self._bootstrap(args).apply(
                lambda text: base64.b64encode(text.encode()).decode()
            ),
            instance_tags=self.tags,
            # Batch sets subnets and security groups on the compute environment.
            security_group_id=network.security_group_id("training")
            if args.scheduler == "asg"
            else None,
            batch_host=args.scheduler == "batch",
            # The trainer in a standing pool's container writes checkpoints with the
            # instance role. Batch jobs get their job role from the ECS agent, and reach
            # the instance role too (host networking): it holds only what a job may have.
            container_metadata_access=args.scheduler == "asg",
        )

    # ---- batch ---------------------------------------------------------------------------

    def _batch(
        self,
        name: str,
        args: TrainingPoolArgs,
        network: AwsNetwork,
        instance_profile: AwsInstanceProfile,
        role: AwsRole,
    ) -> None:
        spot = args.market == "spot"
        self.compute_environment = aws.batch.ComputeEnvironment(
            f"{name}-compute",
            type="MANAGED",
            compute_resources=aws.batch.ComputeEnvironmentComputeResourcesArgs(
                type="SPOT" if spot else "EC2",
                allocation_strategy="SPOT_PRICE_CAPACITY_OPTIMIZED"
                if spot
                else "BEST_FIT_PROGRESSIVE",
                # 0: an empty queue costs nothing (C5).
                min_vcpus=0,
                max_vcpus=self.max_vcpus,
                instance_types=[offer.name for offer in self.offers],
                subnets=network.subnet_ids("training"),
                security_group_ids=[network.security_group_id("training")],
                instance_role=instance_profile.arn,
                launch_template=aws.batch.ComputeEnvironmentComputeResourcesLaunchTemplateArgs(
                    launch_template_id=self.launch_template.id,
                    version=self.launch_template.latest_version.apply(str),
                ),
                ec2_configurations=[
                    aws.batch.ComputeEnvironmentComputeResourcesEc2ConfigurationArgs(
                        image_type="ECS_AL2023_NVIDIA", image_id_override=self.image_id
                    )
                ],
                tags=self.tags,
            ),
            region=args.region,
            tags=self.tags,
            # Nodes boot only once their routes and endpoints exist.
            opts=child_opts(self, depends_on=_ready(network)),
        )
        self.job_queue = aws.batch.JobQueue(
            f"{name}-queue",
            state="ENABLED",
            priority=1,
            compute_environment_orders=[
                aws.batch.JobQueueComputeEnvironmentOrderArgs(
                    order=1, compute_environment=self.compute_environment.arn
                )
            ],
            region=args.region,
            # The kill switch may disable only queues carrying this stack's tag.
            tags=self.tags,
            opts=child_opts(self),
        )
        self.job_definition = aws.batch.JobDefinition(
            f"{name}-job",
            type="container",
            platform_capabilities=["EC2"],
            container_properties=pulumi.Output.all(
                self.log_group.name, role.arn, self.dataset_uri, self.checkpoint_uri
            ).apply(lambda values: json.dumps(self._container_properties(args, *values))),
            parameters={key: "unset" for key in RUN_PARAMETERS},
            retry_strategy=aws.batch.JobDefinitionRetryStrategyArgs(
                attempts=args.job.retry_attempts,
                evaluate_on_exits=[
                    # A reclaimed Spot host: run again, resuming from the last checkpoint.
                    aws.batch.JobDefinitionRetryStrategyEvaluateOnExitArgs(
                        on_status_reason="Host EC2*", action="RETRY"
                    ),
                    # Ended by the spot watch's SIGUSR1 (128 + 10), or checkpointed on it
                    # and exited so to be requeued: a reclaim, not an application error.
                    # Before the catch-all, which would otherwise fail the job for good.
                    aws.batch.JobDefinitionRetryStrategyEvaluateOnExitArgs(
                        on_exit_code=str(REQUEUE_EXIT_CODE), action="RETRY"
                    ),
                    # Anything else is the application's error: retrying burns GPU hours.
                    aws.batch.JobDefinitionRetryStrategyEvaluateOnExitArgs(
                        on_reason="*", action="EXIT"
                    ),
                ],
            ),
            timeout=aws.batch.JobDefinitionTimeoutArgs(
                attempt_duration_seconds=args.max_runtime_minutes * 60
            ),
            propagate_tags=True,
            region=args.region,
            tags=self.tags,
            opts=child_opts(self),
        )
        self.job_queue_arn = self.job_queue.arn
        self.job_definition_arn = self.job_definition.arn

    def _container_properties(
        self,
        args: TrainingPoolArgs,
        log_group: str,
        role_arn: str,
        dataset_uri: str,
        checkpoint_uri: str,
    ) -> dict[str, Any]:
        node = self.node_shape
        gpus = args.job.gpus or min(offer.gpu_count for offer in self.offers)
        vcpus = args.job.vcpus or max(1, min(o.vcpus for o in self.offers) - 2)
        memory = args.job.memory_mib or int(min(o.memory_gib for o in self.offers) * 1024 * 0.9)
        environment = {
            **args.job.environment,
            "AISTACK_DATASET_URI": f"{dataset_uri}/{self.dataset_version}",
            "AISTACK_DATASET_VERSION": self.dataset_version,
            "AISTACK_DATASET_CACHE": f"{CONTAINER_CACHE_PATH}/datasets",
            "AISTACK_CHECKPOINT_URI": checkpoint_uri,
            "AISTACK_CHECKPOINT_DIR": f"{CONTAINER_CACHE_PATH}/checkpoints",
            "AISTACK_POOL": self._name,
            "AISTACK_GPU_CLASS": node.gpu_label,
        }
        if args.tracker_uri:
            environment["AISTACK_TRACKER_URI"] = args.tracker_uri
        if args.job.checkpoint_on_interruption:
            # Batch job containers carry no docker labels of their own: the spot watch
            # reads this variable from the container instead (aistack/node spot-watch.sh).
            environment[CHECKPOINT_SIGNAL_ENV] = "USR1"
        # Batch substitutes Ref::name only in `command`, and only whole elements: a small
        # sh prologue turns the per-run parameters into environment variables, refuses
        # to start a run without them (E3, E4), and places the run under its own prefix.
        prologue = (
            'for v in "$1" "$2" "$3" "$4"; do [ "$v" != unset ] || { '
            'echo "aistack: submit with --parameters run_id=...,seed=...,code_commit=...,'
            'config_hash=..." >&2; exit 64; }; done; '
            'export AISTACK_RUN_ID="$1" AISTACK_SEED="$2" AISTACK_CODE_COMMIT="$3" '
            'AISTACK_CONFIG_HASH="$4"; '
            'export AISTACK_RUN_CHECKPOINT_URI="$AISTACK_CHECKPOINT_URI/$1"; '
            'shift 4; exec "$@"'
        )
        return {
            "image": args.image,
            "command": [
                "/bin/sh",
                "-c",
                prologue,
                "aistack-run",
                *(f"Ref::{key}" for key in RUN_PARAMETERS),
                *args.job.command,
            ],
            "jobRoleArn": role_arn,
            "resourceRequirements": [
                {"type": "GPU", "value": str(gpus)},
                {"type": "VCPU", "value": str(vcpus)},
                {"type": "MEMORY", "value": str(memory)},
            ],
            "environment": [{"name": k, "value": v} for k, v in sorted(environment.items())],
            "volumes": [{"name": "nvme-cache", "host": {"sourcePath": "/mnt/nvme"}}],
            "mountPoints": [
                {
                    "sourceVolume": "nvme-cache",
                    "containerPath": CONTAINER_CACHE_PATH,
                    "readOnly": False,
                }
            ],
            "linuxParameters": {
                "sharedMemorySize": args.job.shared_memory_mib,
                "initProcessEnabled": True,
            },
            "readonlyRootFilesystem": False,
            "privileged": False,
            "logConfiguration": {
                "logDriver": "awslogs",
                "options": {
                    "awslogs-group": log_group,
                    "awslogs-region": args.region,
                    "awslogs-stream-prefix": self._name,
                },
            },
        }

    def submit_command(self) -> pulumi.Output[str]:
        """The `aws batch submit-job` a user runs, with every per-run parameter."""
        assert self.job_queue is not None and self.job_definition is not None
        return pulumi.Output.all(self.job_queue.name, self.job_definition.name).apply(
            lambda names: (
                f"aws batch submit-job --region {self.region} --job-queue {names[0]} "
                f"--job-definition {names[1]} --job-name run-$(date +%s) --parameters "
                "run_id=$RUN_ID,seed=$SEED,code_commit=$(git rev-parse HEAD),"
                "config_hash=$(sha256sum config.yaml | cut -c1-12)"
            )
        )

    # ---- asg -----------------------------------------------------------------------------

    def _asg(self, name: str, args: TrainingPoolArgs, network: AwsNetwork, role: AwsRole) -> None:
        spot = args.market == "spot"
        self.group = aws.autoscaling.Group(
            f"{name}-group",
            min_size=args.min_nodes,
            max_size=args.max_nodes,
            desired_capacity=args.min_nodes,
            capacity_rebalance=spot,
            vpc_zone_identifiers=network.subnet_ids("training"),
            mixed_instances_policy=aws.autoscaling.GroupMixedInstancesPolicyArgs(
                instances_distribution=(
                    aws.autoscaling.GroupMixedInstancesPolicyInstancesDistributionArgs(
                        on_demand_base_capacity=0,
                        on_demand_percentage_above_base_capacity=0 if spot else 100,
                        spot_allocation_strategy="price-capacity-optimized",
                    )
                ),
                launch_template=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateArgs(
                    launch_template_specification=(
                        aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateLaunchTemplateSpecificationArgs(
                            launch_template_id=self.launch_template.id, version="$Latest"
                        )
                    ),
                    overrides=[
                        aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateOverrideArgs(
                            instance_type=offer.name
                        )
                        for offer in self.offers
                    ],
                ),
            ),
            # Nodes end themselves when idle; a replacement would defeat the watchdog.
            health_check_type="EC2",
            max_instance_lifetime=max(86400, args.max_runtime_minutes * 60),
            tags=[
                aws.autoscaling.GroupTagArgs(key=key, value=value, propagate_at_launch=True)
                for key, value in sorted(self.tags.items())
            ],
            region=args.region,
            # Scaling (people, the watchdog, the alarm) owns the size between deployments.
            opts=child_opts(self, ignore_changes=["desiredCapacity"], depends_on=_ready(network)),
        )
        self.auto_scaling_group_name = self.group.name
        self.watchdog_grant = aws.iam.RolePolicy(
            f"{name}-watchdog",
            role=role.id,
            policy=policy_output(
                {
                    "Sid": "NodeRemovesItself",
                    "Effect": "Allow",
                    "Action": "autoscaling:TerminateInstanceInAutoScalingGroup",
                    "Resource": self.group.arn,
                }
            ),
            opts=child_opts(self),
        )
        self.scale_to_zero = aws.autoscaling.Policy(
            f"{name}-scale-to-zero",
            autoscaling_group_name=self.group.name,
            policy_type="SimpleScaling",
            adjustment_type="ExactCapacity",
            scaling_adjustment=0,
            cooldown=300,
            region=args.region,
            opts=child_opts(self),
        )
        self.idle_alarm = aws.cloudwatch.MetricAlarm(
            f"{name}-idle",
            alarm_description=f"Pool {name} has had idle GPUs for {args.idle_minutes + 15} "
            "minutes: scale to zero (second line behind the node watchdog, C5).",
            namespace=self.metrics_namespace,
            metric_name="nvidia_smi_utilization_gpu",
            dimensions={"AutoScalingGroupName": self.group.name},
            statistic="Maximum",
            period=300,
            evaluation_periods=max(1, (args.idle_minutes + 15) // 5),
            comparison_operator="LessThanThreshold",
            threshold=args.idle_gpu_util_percent,
            # No nodes, no data: nothing to stop.
            treat_missing_data="notBreaching",
            alarm_actions=[self.scale_to_zero.arn],
            region=args.region,
            tags=self.tags,
            opts=child_opts(self),
        )

    # ---- starvation ----------------------------------------------------------------------

    def _starvation_alarm(self, name: str, args: TrainingPoolArgs) -> aws.cloudwatch.MetricAlarm:
        """GPU use low while nodes run: the data pipeline cannot keep up (T3).

        Nodes publish GPU metrics only while running, and idle nodes leave, so a low
        average over the window means GPUs waiting on input, not an empty pool.
        """
        dimensions = {"AutoScalingGroupName": self.group.name} if self.group is not None else None
        return aws.cloudwatch.MetricAlarm(
            f"{name}-gpu-starvation",
            alarm_description=f"Pool {name}: average GPU utilisation below "
            f"{args.starvation_gpu_util_percent}% for {args.starvation_minutes} minutes while "
            "nodes run. Profile the data pipeline (checklist T3).",
            namespace=self.metrics_namespace,
            metric_name="nvidia_smi_utilization_gpu",
            dimensions=dimensions,
            statistic="Average",
            period=300,
            evaluation_periods=max(1, args.starvation_minutes // 5),
            comparison_operator="LessThanThreshold",
            threshold=args.starvation_gpu_util_percent,
            treat_missing_data="notBreaching",
            alarm_actions=[self.alarm_topic_arn] if self.alarm_topic_arn else None,
            region=args.region,
            tags=self.tags,
            opts=child_opts(self),
        )

"""aistack's components (AWS, Google Cloud, Kubernetes) as Pulumi sees them from other
languages.

One class per component, named as its token's name (`aistack:index:AwsDatasetBucket` is
`AwsDatasetBucket`), as `ComponentProvider` requires. The class only describes: its `args`
annotation (a TypedDict of args.py, generated from the pydantic Args and registry.WIRING) is
what the analyzer turns into inputs, its `pulumi.Output[...]` annotations become outputs.
Calling it builds the aistack component itself (`_Adapter.__new__`), so a program in
TypeScript registers exactly the resources, names and URNs a Python program does, with no
wrapper level.

What arrives (pulumi 3.272, `ComponentProvider.map_input_properties`): snake_case keys,
nested objects as dicts, enum members, whole numbers as floats (`4.0`; `4.5` is not
refused there) and Outputs on wired inputs. `_as_written` turns keys back into camelCase
and members into their values; the aistack Args take `4.0` as 4, refuse `4.5`, and raise
the ConfigError a Python caller gets. Wiring between components is by ids and ARNs
(`wiring.py`): component objects cannot cross languages.
"""

import enum
import inspect
import typing
from collections.abc import Mapping
from typing import Any

import pulumi
from pydantic.alias_generators import to_camel

from aistack.aws.audit_trail import AuditTrail
from aistack.aws.budget_guard import BudgetGuard
from aistack.aws.container_registry import ContainerRegistry
from aistack.aws.dataset_bucket import DatasetBucket
from aistack.aws.gpu_quota import GpuQuota
from aistack.aws.inference import InferenceTier
from aistack.aws.karpenter_gpu_pool import KarpenterGpuPool
from aistack.aws.network import Network
from aistack.aws.notebook import Notebook
from aistack.aws.training_pool import TrainingPool
from aistack.aws.workload_identity import WorkloadIdentity
from aistack.errors import ConfigError, Problem, Problems
from aistack.gcp.audit_logs import AuditLogs as CloudAuditLogs
from aistack.gcp.budget_guard import BudgetGuard as GcpBudget
from aistack.gcp.container_registry import ContainerRegistry as ArtifactRegistry
from aistack.gcp.dataset_bucket import DatasetBucket as GcsDatasetBucket
from aistack.gcp.gke_cluster import GkeCluster
from aistack.gcp.gpu_node_pool import GpuNodePool
from aistack.gcp.gpu_quota import GpuQuota as GcpQuota
from aistack.gcp.inference_tier import InferenceTier as GceInferenceTier
from aistack.gcp.network import Network as VpcNetwork
from aistack.gcp.notebook import Notebook as WorkbenchNotebook
from aistack.gcp.project_services import ProjectServices
from aistack.gcp.training_pool import TrainingPool as GceTrainingPool
from aistack.gcp.workload_identity import WorkloadIdentity as ServiceAccounts
from aistack.k8s.gpu_monitoring import GpuMonitoring
from aistack.k8s.image_policy import ImagePolicy
from aistack.k8s.inference_service import InferenceService
from aistack.k8s.team_namespace import TeamNamespace
from aistack.k8s.training_job_template import TrainingJobTemplate
from aistack.k8s.training_queue import TrainingQueue
from aistack_components.args import (
    AwsAuditTrailArgs,
    AwsBudgetGuardArgs,
    AwsContainerRegistryArgs,
    AwsDatasetBucketArgs,
    AwsGpuQuotaArgs,
    AwsInferenceTierArgs,
    AwsKarpenterGpuPoolArgs,
    AwsNetworkArgs,
    AwsNotebookArgs,
    AwsTrainingPoolArgs,
    AwsWorkloadIdentityArgs,
    GcpAuditLogsArgs,
    GcpBudgetGuardArgs,
    GcpContainerRegistryArgs,
    GcpDatasetBucketArgs,
    GcpGkeClusterArgs,
    GcpGpuNodePoolArgs,
    GcpGpuQuotaArgs,
    GcpInferenceTierArgs,
    GcpNetworkArgs,
    GcpNotebookArgs,
    GcpProjectServicesArgs,
    GcpTrainingPoolArgs,
    GcpWorkloadIdentityArgs,
    K8sGpuMonitoringArgs,
    K8sImagePolicyArgs,
    K8sInferenceServiceArgs,
    K8sTeamNamespaceArgs,
    K8sTrainingJobTemplateArgs,
    K8sTrainingQueueArgs,
)
from aistack_components.gcp_wiring import (
    ClusterRef,
    DatasetReadRef,
    GcsBucketRef,
    InferenceNetworkRef,
    LogsBucketRef,
    NotebookNetworkRef,
    ServicesRef,
    TrainingNetworkRef,
    waiting_for,
)
from aistack_components.registry import PACKAGE, SPECS, VERSION, WIRING
from aistack_components.wiring import BucketArn, BucketRef, IdentityArns, NetworkIds

__all__ = ["COMPONENTS", "PACKAGE", "VERSION"]


def _as_written(value: Any, shape: Any) -> Any:
    """Inputs as the program wrote them: the schema's camelCase keys (so a ConfigError names
    `maxNodes`, not `max_nodes`) and enum members as their values. Keys are renamed only
    where `shape` is one of our TypedDicts: a `dict[str, str]` holds the caller's own keys."""
    if typing.get_origin(shape) in (typing.NotRequired, typing.Required):
        shape = typing.get_args(shape)[0]
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        if typing.is_typeddict(shape):
            # Not get_type_hints: pulumi.Input holds a forward reference to Output[T].
            fields = {
                k: v for c in reversed(shape.__mro__) for k, v in inspect.get_annotations(c).items()
            }
            return {
                to_camel(key): _as_written(item, fields.get(key)) for key, item in value.items()
            }
        values = typing.get_args(shape)[1] if typing.get_origin(shape) is dict else None
        return {key: _as_written(item, values) for key, item in value.items()}
    if isinstance(value, list | tuple):
        items = typing.get_args(shape)[0] if typing.get_origin(shape) is list else None
        return [_as_written(item, items) for item in value]
    return value


def _signature(args_type: type) -> Any:
    """An `__init__` whose `args` is annotated `args_type`: what the analyzer reads."""

    def __init__(
        self: pulumi.ComponentResource,
        name: str,
        args: Any,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """Never runs: calling the class returns the aistack component (`_Adapter`)."""

    __init__.__annotations__ = {**__init__.__annotations__, "args": args_type}
    return __init__


#: Each adapter class by its name (its token's name), as it is defined.
_ADAPTERS: dict[str, type[pulumi.ComponentResource]] = {}


class _Adapter(pulumi.ComponentResource):
    """`class AwsX(_Adapter, args=AwsXArgs, component=X)`: the analyzer reads `AwsXArgs` as
    the inputs and the class's `pulumi.Output` annotations as the outputs; calling the class
    returns the aistack component `_build` makes (by default `component(name, args, opts)`),
    so there is no wrapper level between the program and the component. (Attributes here
    are `_`-prefixed: the analyzer takes every other annotation for an output.)"""

    _component: type[pulumi.ComponentResource]

    def __init_subclass__(
        cls, *, args: type, component: type[pulumi.ComponentResource], **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        cls.__init__ = _signature(args)  # type: ignore[method-assign]
        cls._component = component
        _ADAPTERS[cls.__name__] = cls

    def __new__(  # type: ignore[misc]
        cls, name: str, args: Mapping[str, Any], opts: pulumi.ResourceOptions | None = None
    ) -> pulumi.ComponentResource:
        shape = inspect.get_annotations(cls.__init__)["args"]
        return cls._build(name, _as_written(dict(args), shape), opts)

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        return cls._component(name, args, opts)  # type: ignore[call-arg]


def _wiring(token: str, args: dict[str, Any]) -> dict[str, Any]:
    """The wiring inputs taken out of `args` (what stays is the component's configuration)."""
    return {key: args.pop(to_camel(key), None) for key, *_ in WIRING[token]}


def _owning(
    component: type[Any],
    buckets: list[BucketRef],
    name: str,
    args: dict[str, Any],
    opts: pulumi.ResourceOptions | None,
    **wired: Any,
) -> pulumi.ComponentResource:
    """`component` built in two steps, so that the grants `buckets` make while it builds its
    children are its children too."""
    instance = component.__new__(component)
    for bucket in buckets:
        bucket.owner = instance
    instance.__init__(name, args, opts, **wired)
    return instance  # type: ignore[no-any-return]


# ---- data -----------------------------------------------------------------------------------


class AwsDatasetBucket(_Adapter, args=AwsDatasetBucketArgs, component=DatasetBucket):
    """A versioned, encrypted, TLS-only, private S3 bucket with lifecycle rules (D1, D2,
    D4-D6, C4). Kept on `pulumi destroy` unless allowDestroyWithData."""

    bucket_name: pulumi.Output[str]
    """The bucket's name."""
    bucket_arn: pulumi.Output[str]
    """The bucket's ARN."""
    kms_key_arn: pulumi.Output[str] | None
    """The key objects are encrypted with (none for logs buckets: S3-managed keys)."""
    uri: pulumi.Output[str]
    """s3://<bucket>/"""

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        logs_bucket = args.pop("accessLogsBucketName", None)
        access_logs = None
        if logs_bucket is not None:
            access_logs = BucketRef(
                "access-logs",
                kind="logs",
                region=str(args.get("region")),
                bucket_name=logs_bucket,
                bucket_arn=pulumi.Output.concat("arn:aws:s3:::", logs_bucket),
                kms_key_arn=None,
            )
        return DatasetBucket(name, args, opts, access_logs=access_logs)  # type: ignore[arg-type]


# ---- identity, budgets, quotas, images ------------------------------------------------------


class AwsWorkloadIdentity(_Adapter, args=AwsWorkloadIdentityArgs, component=WorkloadIdentity):
    """IAM roles per workload, instance profiles for EC2, an optional GitHub Actions CI role
    (C6): no access keys anywhere."""

    role_arns: pulumi.Output[dict[str, str]]
    """Role ARN per workload (training, training-job, inference, notebook, ...)."""
    instance_profile_arns: pulumi.Output[dict[str, str]]
    """Instance profile ARN per EC2-trusted workload."""
    instance_profile_names: pulumi.Output[dict[str, str]]
    """Instance profile name per EC2-trusted workload."""
    github_provider_arn: pulumi.Output[str] | None
    """The GitHub Actions OIDC provider, when github is set."""
    ci_role_arn: pulumi.Output[str] | None
    """The role GitHub Actions assumes, when github is set (no permissions unless granted)."""


class AwsBudgetGuard(_Adapter, args=AwsBudgetGuardArgs, component=BudgetGuard):
    """Monthly and daily budgets, anomaly alerts and an optional training kill switch (C3)."""

    monthly_budget_name: pulumi.Output[str]
    daily_budget_name: pulumi.Output[str]
    alert_topic_arn: pulumi.Output[str]
    """The SNS topic budget alerts go to; wire it as alarmTopicArn of the other components."""
    kms_key_arn: pulumi.Output[str]
    anomaly_monitor_arn: pulumi.Output[str]
    anomaly_subscription_arn: pulumi.Output[str]
    kill_switch_topic_arn: pulumi.Output[str] | None
    kill_switch_function_name: pulumi.Output[str] | None
    kill_switch_function_arn: pulumi.Output[str] | None


class AwsGpuQuota(_Adapter, args=AwsGpuQuotaArgs, component=GpuQuota):
    """EC2 vCPU quota increase requests sized from the stack's GPU pools (C1). From other
    languages the pools are described in `needs` (pool, instanceTypes, maxNodes, market)."""

    requested_vcpus: pulumi.Output[dict[str, int]]
    """vCPUs requested per quota code."""
    quota_names: pulumi.Output[dict[str, str]]
    summaries: pulumi.Output[dict[str, str]]
    """Per quota code: what is requested and why, in words."""
    request_status: pulumi.Output[dict[str, str]]


class AwsContainerRegistry(_Adapter, args=AwsContainerRegistryArgs, component=ContainerRegistry):
    """Private ECR repositories: immutable tags, scan on push, KMS, lifecycle-managed (E1)."""

    repository_urls: pulumi.Output[dict[str, str]]
    """Repository URL per repository; push images and refer to them by digest."""
    repository_arns: pulumi.Output[dict[str, str]]
    kms_key_arn: pulumi.Output[str]


class AwsAuditTrail(_Adapter, args=AwsAuditTrailArgs, component=AuditTrail):
    """A multi-region, KMS-encrypted, validated CloudTrail trail into a retained bucket, with
    S3 data events on the personal-data buckets given by ARN (D5, G1)."""

    trail_arn: pulumi.Output[str]
    """The trail's ARN."""
    kms_key_arn: pulumi.Output[str]
    """The key the trail's log files are encrypted with."""

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        arns = _wiring("AwsAuditTrail", args)["data_bucket_arns"]
        if arns is not None and not isinstance(arns, list):
            # One selector prefix per bucket: the count must be known while the trail builds.
            raise ConfigError(
                [
                    Problem(
                        f"{name}.dataBucketArns",
                        "the list itself is an Output, so how many buckets it holds is not "
                        "known while the trail builds.",
                        "pass a list literal of the buckets' bucketArn outputs, e.g. "
                        "[dataset.bucketArn].",
                    )
                ]
            )
        buckets = [BucketArn(arn) for arn in arns or []]
        return AuditTrail(name, args, opts, data_buckets=buckets)  # type: ignore[arg-type]


# ---- network --------------------------------------------------------------------------------

_TIERS = ("training", "inference", "notebook")


class AwsNetwork(_Adapter, args=AwsNetworkArgs, component=Network):
    """A private, zone-aware, tier-separated VPC for GPU training and inference. Its per-tier
    subnet and security group ids are what the other components take as wiring."""

    vpc_id: pulumi.Output[str]
    training_subnet_ids: pulumi.Output[list[str]] | None
    """Private training subnets (when trainingInstanceTypes is set): a pool's subnetIds."""
    training_security_group_id: pulumi.Output[str] | None
    """The training nodes' security group: a pool's securityGroupId."""
    inference_subnet_ids: pulumi.Output[list[str]] | None
    inference_security_group_id: pulumi.Output[str] | None
    notebook_subnet_ids: pulumi.Output[list[str]] | None
    notebook_security_group_id: pulumi.Output[str] | None
    alb_subnet_ids: pulumi.Output[list[str]]
    alb_security_group_id: pulumi.Output[str] | None
    public_subnet_ids: pulumi.Output[list[str]]
    endpoint_security_group_id: pulumi.Output[str] | None
    flow_log_group_name: pulumi.Output[str]
    offered_zones: pulumi.Output[dict[str, list[str]]]
    """Per instance type, the zones that offer it (looked up at deploy time)."""

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        network = Network(name, args, opts)
        # Exported for other languages only: a Python caller uses the accessor methods. The
        # subnet ids carry the network itself, so what is placed in them waits for all of
        # it (routes, endpoints), as `depends_on=[network]` makes a Python pool's nodes wait.
        for tier in _TIERS:
            present = tier in network.plan.tiers
            ids = (
                pulumi.Output.all(network.urn, *network.subnet_ids(tier)).apply(
                    lambda values: list(values[1:])
                )
                if present
                else None
            )
            setattr(network, f"{tier}_subnet_ids", ids)
            group = network.security_group_id(tier) if present else None
            setattr(network, f"{tier}_security_group_id", group)
        return network


# ---- compute --------------------------------------------------------------------------------


class AwsTrainingPool(_Adapter, args=AwsTrainingPoolArgs, component=TrainingPool):
    """GPU training capacity on Spot (T1-T6, C5, D3, D4, E1): AWS Batch from 0 vCPUs
    (default) or a standing auto scaling group, wired by ids to the network, identity and
    buckets. datasetVersion is required here: the bucket's metadata is in another program."""

    log_group_name: pulumi.Output[str]
    job_queue_arn: pulumi.Output[str] | None
    job_definition_arn: pulumi.Output[str] | None
    auto_scaling_group_name: pulumi.Output[str] | None
    image_id: pulumi.Output[str]
    """The machine image nodes boot, as resolved at deploy time."""
    dataset_uri: pulumi.Output[str]
    checkpoint_uri: pulumi.Output[str]

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        wiring = _wiring("AwsTrainingPool", args)
        batch = args.get("scheduler", "batch") == "batch"
        problems = Problems()
        if not args.get("datasetVersion"):
            problems.add(
                f"{name}.datasetVersion",
                "is required when the pool is wired by ids: the dataset bucket's version is "
                "recorded in the program that made it.",
                "set datasetVersion to the dataset's pinned version (D4).",
            )
        if batch and wiring["job_role_arn"] is None:
            problems.add(
                f"{name}.jobRoleArn",
                "is required for the batch scheduler: jobs run as their own role.",
                'pass the identity\'s roleArns["training-job"].',
            )
        problems.raise_if_any()
        region = str(args.get("region"))
        network = NetworkIds(
            {"training": wiring["subnet_ids"]}, {"training": wiring["security_group_id"]}
        )
        roles = {"training": wiring["instance_role_arn"]}
        if wiring["job_role_arn"] is not None:
            roles["training-job"] = wiring["job_role_arn"]
        identity = IdentityArns(roles, {"training": wiring["instance_profile_arn"]})
        buckets = [
            BucketRef(
                label,
                kind=label,
                region=region,
                bucket_name=wiring[f"{label}_bucket_name"],
                bucket_arn=wiring[f"{label}_bucket_arn"],
                kms_key_arn=wiring[f"{label}_kms_key_arn"],
                dataset_version=args.get("datasetVersion"),
            )
            for label in ("dataset", "checkpoints")
        ]
        # An Output (e.g. budget.alertTopicArn): the keyword argument, not the config field.
        alarm_topic_arn = args.pop("alarmTopicArn", None)
        return _owning(
            TrainingPool,
            buckets,
            name,
            args,
            opts,
            network=network,
            identity=identity,
            dataset=buckets[0],
            checkpoints=buckets[1],
            alarm_topic_arn=alarm_topic_arn,
        )


class AwsNotebook(_Adapter, args=AwsNotebookArgs, component=Notebook):
    """A VPC-only SageMaker Studio domain with idle shutdown and one profile per user (C5),
    wired by vpcId, subnetIds, securityGroupIds and executionRoleArn."""

    kms_key_id: pulumi.Output[str]
    domain_id: pulumi.Output[str]
    domain_arn: pulumi.Output[str]
    domain_url: pulumi.Output[str]
    studio_url: pulumi.Output[str]
    home_efs_file_system_id: pulumi.Output[str]


class AwsInferenceTier(_Adapter, args=AwsInferenceTierArgs, component=InferenceTier):
    """Versioned model serving on GPU nodes behind nginx, an ALB and WAF (S1-S7, G2-G5),
    wired by ids to the network, the inference identity and the models bucket. Load
    balancer access logs are not wired across languages yet."""

    load_balancer_arn: pulumi.Output[str]
    dns_name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    """The URL clients call."""
    web_acl_arn: pulumi.Output[str]
    log_group_name: pulumi.Output[str]
    waf_log_group_name: pulumi.Output[str]
    dashboard_name: pulumi.Output[str]
    rollback_command: pulumi.Output[str]
    """The command that moves all traffic back to the previous version (S6)."""
    image_id: pulumi.Output[str]

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        wiring = _wiring("AwsInferenceTier", args)
        network = NetworkIds(
            {"inference": wiring["subnet_ids"]},
            {"inference": wiring["security_group_id"]},
            vpc_id=wiring["vpc_id"],
            alb_subnet_ids=wiring["alb_subnet_ids"],
            alb_security_group_id=wiring["alb_security_group_id"],
            alb_internal=args.get("public") is not True,
            cidr_block=wiring["vpc_cidr_block"],
        )
        identity = IdentityArns(
            {"inference": wiring["instance_role_arn"]},
            {"inference": wiring["instance_profile_arn"]},
        )
        models = BucketRef(
            "models",
            kind="models",
            region=str(args.get("region")),
            bucket_name=wiring["models_bucket_name"],
            bucket_arn=wiring["models_bucket_arn"],
            kms_key_arn=wiring["models_kms_key_arn"],
        )
        alarm_topic_arn = args.pop("alarmTopicArn", None)
        return _owning(
            InferenceTier,
            [models],
            name,
            args,
            opts,
            network=network,
            identity=identity,
            models=models,
            alarm_topic_arn=alarm_topic_arn,
        )


# ---- Google Cloud ---------------------------------------------------------------------------


def _services(token: str, args: dict[str, Any]) -> tuple[dict[str, Any], ServicesRef]:
    """The wiring of a GCP component, and the ProjectServices its project and
    `enabledServices` stand for."""
    wiring = _wiring(token, args)
    return wiring, ServicesRef(str(wiring["project"]), wiring["enabled_services"])


class GcpProjectServices(_Adapter, args=GcpProjectServicesArgs, component=ProjectServices):
    """The Google APIs the aistack GCP components use, enabled on the project and never
    disabled on destroy. Pass its project and enabledServices to the other Gcp components."""

    project: pulumi.Output[str]
    """The project ID."""
    enabled_services: pulumi.Output[list[str]]
    """The APIs enabled; depends on every one of them being on."""


class GcpDatasetBucket(_Adapter, args=GcpDatasetBucketArgs, component=GcsDatasetBucket):
    """A versioned, CMEK-encrypted, never-public GCS bucket in one region with lifecycle
    rules per kind (D1, D2, D4-D6, C4). Kept on `pulumi destroy` (deletion_policy PREVENT)
    unless allowDestroyWithData."""

    bucket_name: pulumi.Output[str]
    """The bucket's name."""
    uri: pulumi.Output[str]
    """gs://<bucket>/"""
    kms_key_name: pulumi.Output[str]
    """The Cloud KMS key objects are encrypted with."""

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        wiring, services = _services("GcpDatasetBucket", args)
        logs = wiring["access_logs_bucket_name"]
        access_logs = LogsBucketRef(logs, services.project) if logs is not None else None
        return GcsDatasetBucket(
            name,
            args,
            opts,
            services=services,  # type: ignore[arg-type]
            access_logs=access_logs,  # type: ignore[arg-type]
        )


class GcpWorkloadIdentity(_Adapter, args=GcpWorkloadIdentityArgs, component=ServiceAccounts):
    """One service account per workload, with no roles and no keys; GKE Workload Identity
    bindings and an optional GitHub Actions pool and provider (C6)."""

    emails: pulumi.Output[dict[str, str]]
    """Service account e-mail per workload (a K8sTeamNamespace's identities)."""
    members: pulumi.Output[dict[str, str]]
    """`serviceAccount:<email>` per workload: what IAM grants take."""
    github_provider_name: pulumi.Output[str] | None
    """The workload_identity_provider of google-github-actions/auth, when github is set."""

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        wiring, services = _services("GcpWorkloadIdentity", args)
        cluster = wiring["cluster_id"]
        return ServiceAccounts(
            name,
            args,
            opts,
            services=services,  # type: ignore[arg-type]
            cluster=waiting_for(cluster) if cluster is not None else None,
        )


class GcpContainerRegistry(_Adapter, args=GcpContainerRegistryArgs, component=ArtifactRegistry):
    """A private Artifact Registry Docker repository: immutable tags, CMEK, vulnerability
    scanning, cleanup policies (E1). Kept on `pulumi destroy` unless allowDestroyWithImages."""

    repository_id: pulumi.Output[str]
    """projects/<project>/locations/<region>/repositories/<id>"""
    repository_url: pulumi.Output[str]
    """<region>-docker.pkg.dev/<project>/<id>: what docker push and pull use."""
    kms_key_name: pulumi.Output[str]
    """The Cloud KMS key layers are encrypted with."""

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        _, services = _services("GcpContainerRegistry", args)
        return ArtifactRegistry(name, args, opts, services=services)  # type: ignore[arg-type]


class GcpAuditLogs(_Adapter, args=GcpAuditLogsArgs, component=CloudAuditLogs):
    """Data Access audit logs on for the data's services (Cloud Storage by default), nobody
    exempted, and every audit log of the project kept in a regional log bucket (D5, G1)."""

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        _, services = _services("GcpAuditLogs", args)
        return CloudAuditLogs(name, args, opts, services=services)  # type: ignore[arg-type]


class GcpBudgetGuard(_Adapter, args=GcpBudgetGuardArgs, component=GcpBudget):
    """A monthly budget with e-mail and Pub/Sub alerts, a daily-spend alert function and an
    optional training kill switch (C3)."""

    budget_name: pulumi.Output[str]
    topic_id: pulumi.Output[str]
    """The Pub/Sub topic the budget publishes to."""
    function_name: pulumi.Output[str]
    function_service_account_email: pulumi.Output[str]
    state_bucket_name: pulumi.Output[str]
    notification_channel_ids: pulumi.Output[list[str]]

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        wiring, services = _services("GcpBudgetGuard", args)
        logs = wiring["access_logs_bucket_name"]
        access_logs = LogsBucketRef(logs, services.project) if logs is not None else None
        return GcpBudget(
            name,
            args,
            opts,
            services=services,  # type: ignore[arg-type]
            access_logs=access_logs,  # type: ignore[arg-type]
        )


class GcpGpuQuota(_Adapter, args=GcpGpuQuotaArgs, component=GcpQuota):
    """Cloud Quotas preferences for the GPUs the stack's pools need, never lowering a
    granted quota (C1). From other languages the pools are described in `needs` (pool,
    region, machineTypes, maxNodes, market)."""

    requested_gpus: pulumi.Output[dict[str, int]]
    """GPUs requested per quota preference."""
    summaries: pulumi.Output[dict[str, str]]
    """Per quota preference: what is requested and why, in words."""
    granted_values: pulumi.Output[dict[str, str]]
    """Per quota preference: the value Google has granted."""
    reconciling: pulumi.Output[dict[str, bool]]
    """Per quota preference: whether Google is still deciding."""

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        _, services = _services("GcpGpuQuota", args)
        return GcpQuota(name, args, opts, services=services)  # type: ignore[arg-type]


# ---- Kubernetes node pools on the clouds ---------------------------------------------------


class AwsKarpenterGpuPool(_Adapter, args=AwsKarpenterGpuPoolArgs, component=KarpenterGpuPool):
    """Spot-first GPU NodePools and their EC2NodeClass on an existing EKS cluster with
    Karpenter, the node role and access entry, and the interruption queue (C3, C5, C6, D3, T1)."""

    interruption_queue_name: pulumi.Output[str] | None
    """Karpenter's Helm value settings.interruptionQueue (none when interruptionQueue is false)."""
    interruption_queue_arn: pulumi.Output[str] | None
    node_role_name: pulumi.Output[str]
    """The EC2NodeClass's role (Karpenter makes its instance profile)."""
    node_role_arn: pulumi.Output[str]
    node_pool_names: pulumi.Output[dict[str, str]]
    """NodePool name per capacity type (spot, on-demand)."""
    node_class_name: pulumi.Output[str]


class GcpNetwork(_Adapter, args=GcpNetworkArgs, component=VpcNetwork):
    """A custom-mode VPC: private tier subnets with Private Google Access and flow logs, a
    default-deny firewall that admits traffic by service account only, private DNS for
    Google APIs, optional proxy-only subnet and Cloud NAT, zones offering the GPUs (S1, C2)."""

    network_self_link: pulumi.Output[str]
    """The VPC's self-link (a GKE cluster's network)."""
    network_id: pulumi.Output[str]
    """projects/<project>/global/networks/<name>"""
    subnet_self_links: pulumi.Output[dict[str, str]]
    """Subnet self-link per tier (a GKE cluster's subnetwork: subnetSelfLinks["training"])."""
    pods_range_name: str | None
    """The training subnet's secondary range for GKE pods."""
    services_range_name: str | None
    """The training subnet's secondary range for GKE services."""
    planned_zones: dict[str, list[str]]
    """Per tier, the zones offering all its machine types: node locations, MIG zones."""
    offered_zones: pulumi.Output[dict[str, list[str]]]
    """The planned zones compute.getZones reports UP at deploy time."""

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        wiring, services = _services("GcpNetwork", args)
        region = wiring["dataset_region"]
        dataset = _Region(region) if region is not None else None
        return VpcNetwork(
            name,
            args,
            opts,
            services=services,  # type: ignore[arg-type]
            service_accounts=wiring["service_accounts"],
            dataset=dataset,  # type: ignore[arg-type]
        )


class _Region:
    """A dataset bucket known by its region (all gcp.Network reads of it)."""

    def __init__(self, region: str) -> None:
        self.region = region


class GcpGkeCluster(_Adapter, args=GcpGkeClusterArgs, component=GkeCluster):
    """A private regional GKE cluster: Workload Identity, Dataplane V2, managed DCGM
    metrics, a least-privilege node account and a small system pool. GPU capacity comes
    from GcpGpuNodePools on it."""

    cluster_id: pulumi.Output[str]
    """projects/<project>/locations/<region>/clusters/<name>: a GcpGpuNodePool's clusterId."""
    endpoint: pulumi.Output[str]
    """The control plane's address (private unless allowPublicEndpoint)."""
    node_service_account_email: pulumi.Output[str]
    """The nodes' service account: a GcpGpuNodePool's nodeServiceAccountEmail."""
    node_disk_key: pulumi.Output[str]
    """The key the nodes' boot disks are encrypted with: a GcpGpuNodePool's nodeDiskKey."""

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        _, services = _services("GcpGkeCluster", args)
        return GkeCluster(name, args, opts, services=services)  # type: ignore[arg-type]


class GcpGpuNodePool(_Adapter, args=GcpGpuNodePoolArgs, component=GpuNodePool):
    """A GKE GPU node pool from 0 to maxNodes on Spot, on-demand or flex-start: GPU and Spot
    taints, local SSD ephemeral storage, a node lifetime, the GKE metadata server."""

    node_pool_id: pulumi.Output[str]
    """projects/<p>/locations/<region>/clusters/<c>/nodePools/<name>"""

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        wiring = _wiring("GcpGpuNodePool", args)
        cluster = ClusterRef(
            str(wiring["project"]),
            str(wiring["cluster_region"]),
            wiring["cluster_id"],
            wiring["node_service_account_email"],
            wiring["node_disk_key"],
        )
        return GpuNodePool(name, args, opts, cluster=cluster)  # type: ignore[arg-type]


class GcpNotebook(_Adapter, args=GcpNotebookArgs, component=WorkbenchNotebook):
    """A Vertex AI Workbench instance that stops after idleMinutes without activity (C5),
    with no external IP in the network's notebook subnet (S1), shielded, root off, running
    as the notebook tier's account with dataset read and log writing only (C6), in the
    dataset bucket's region (D2), CMEK disks kept on destroy. Users open JupyterLab at
    https://<proxyUri>."""

    instance_name: pulumi.Output[str]
    instance_id: pulumi.Output[str]
    """projects/<project>/locations/<zone>/instances/<name>"""
    proxy_uri: pulumi.Output[str]
    """The JupyterLab host behind the Workbench proxy."""
    state: pulumi.Output[str]
    service_account_email: pulumi.Output[str]
    kms_key_name: pulumi.Output[str] | None
    """The Cloud KMS key the disks are encrypted with (none with Google-managed keys)."""

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        wiring, services = _services("GcpNotebook", args)
        network = NotebookNetworkRef(
            services.project,
            str(wiring["network_region"]),
            wiring["network_self_link"],
            wiring["notebook_subnet_self_link"],
            wiring["service_account_email"],
        )
        bucket = None
        if wiring["dataset_bucket_name"] is not None:
            if wiring["dataset_region"] is None:
                raise ConfigError(
                    [
                        Problem(
                            f"{name}.datasetRegion",
                            "datasetBucketName is given without the bucket's region, which "
                            "the notebook must share (D2).",
                            "set datasetRegion to the GcpDatasetBucket's region.",
                        )
                    ]
                )
            region = str(wiring["dataset_region"])
            bucket = DatasetReadRef(wiring["dataset_bucket_name"], region, services)
        return WorkbenchNotebook(
            name,
            args,
            opts,
            services=services,  # type: ignore[arg-type]
            network=network,  # type: ignore[arg-type]
            bucket=bucket,  # type: ignore[arg-type]
        )


# ---- Kubernetes -----------------------------------------------------------------------------


class GcpTrainingPool(_Adapter, args=GcpTrainingPoolArgs, component=GceTrainingPool):
    """Spot GPU VMs in a regional managed instance group from 0 (T1-T6, C5, C6, D2-D4):
    local SSD cache, checkpoint flush and restore, idle VMs deleted through the group,
    starvation and idle alerts, a regional log bucket. datasetVersion is required here: the
    bucket's metadata is in another program."""

    group_name: str
    """The managed instance group (runs create VMs in it: the submit command)."""
    group_id: pulumi.Output[str]
    service_account_email: pulumi.Output[str]
    dataset_uri: pulumi.Output[str]
    checkpoint_uri: pulumi.Output[str]

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        wiring, services = _services("GcpTrainingPool", args)
        if not args.get("datasetVersion"):
            raise ConfigError(
                "is required when the pool is wired by names: the dataset bucket's version "
                "is recorded in the program that made it.",
                field=f"{name}.datasetVersion",
                fix="set datasetVersion to the dataset's pinned version (D4).",
            )
        region = str(args.get("region"))
        network = TrainingNetworkRef(
            region,
            wiring["training_subnet_self_link"],
            wiring["training_service_account_email"],
            list(wiring["training_zones"] or []),
            wiring["training_health_check_port"],
        )
        buckets = [
            GcsBucketRef(
                label,
                kind=label,
                region=region,
                bucket_name=wiring[f"{label}_bucket_name"],
                services=services,
                dataset_version=args.get("datasetVersion"),
            )
            for label in ("dataset", "checkpoints")
        ]
        # Outputs (e.g. a BudgetGuard's channel ids): the keyword, not the config field.
        channels = args.pop("notificationChannels", None)
        return _owning(
            GceTrainingPool,
            buckets,  # type: ignore[arg-type]
            name,
            args,
            opts,
            notification_channels=channels,
            services=services,
            network=network,
            dataset=buckets[0],
            checkpoints=buckets[1],
        )


class GcpInferenceTier(_Adapter, args=GcpInferenceTierArgs, component=GceInferenceTier):
    """Explicit model versions on GPU VMs behind a weighted regional application load
    balancer with a Cloud Armor throttle (S1-S7, G2-G5, C6): per version a template, group,
    autoscaler (maxNodes = the cost cap) and backend service; the nginx gateway on every VM;
    latency, 5xx and quality alerts and a dashboard."""

    endpoint: pulumi.Output[str]
    """The load balancer's URL (http(s)://<address>)."""
    service_account_email: pulumi.Output[str]

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        wiring, services = _services("GcpInferenceTier", args)
        region = str(args.get("region"))
        network = InferenceNetworkRef(
            region,
            wiring["network_id"],
            wiring["inference_subnet_self_link"],
            wiring["inference_service_account_email"],
            list(wiring["inference_zones"] or []),
            int(wiring["gateway_port"]),
            wiring["proxy_subnet_cidr"],
        )
        models = GcsBucketRef(
            "models",
            kind="models",
            region=region,
            bucket_name=wiring["models_bucket_name"],
            services=services,
        )
        channels = args.pop("notificationChannels", None)
        return _owning(
            GceInferenceTier,
            [models],  # type: ignore[list-item]
            name,
            args,
            opts,
            notification_channels=channels,
            services=services,
            network=network,
            models=models,
        )


# ---- Kubernetes -----------------------------------------------------------------------------


class K8sTeamNamespace(_Adapter, args=K8sTeamNamespaceArgs, component=TeamNamespace):
    """A team's namespace: quota'd, Pod Security restricted, default-deny networking, one
    keyless ServiceAccount per workload linked to its cloud identity."""

    namespace_name: pulumi.Output[str]
    service_account_names: pulumi.Output[dict[str, str]]

    @classmethod
    def _build(
        cls, name: str, args: dict[str, Any], opts: pulumi.ResourceOptions | None
    ) -> pulumi.ComponentResource:
        wiring = _wiring("K8sTeamNamespace", args)
        return TeamNamespace(name, args, opts, identities=wiring["identities"])


class K8sGpuMonitoring(_Adapter, args=K8sGpuMonitoringArgs, component=GpuMonitoring):
    """DCGM exporter scraping (Prometheus Operator or GKE Managed Prometheus) and alert
    rules on idle GPUs (C5), GPU starvation (T3) and Kueue queue wait."""

    alert_names: pulumi.Output[list[str]]


class K8sTrainingJobTemplate(
    _Adapter, args=K8sTrainingJobTemplateArgs, component=TrainingJobTemplate
):
    """A training Job (one node) or JobSet (several) as a template in a ConfigMap of the
    team namespace, and the command that submits a run of it to the team's Kueue queue.
    From other languages `namespace` is required (a K8sTeamNamespace's namespaceName)."""

    config_map_name: pulumi.Output[str]
    namespace: pulumi.Output[str]
    submit_command: pulumi.Output[str]
    """Submits one run: set RUN_ID and SEED, run it where git and the config file are."""


class K8sTrainingQueue(_Adapter, args=K8sTrainingQueueArgs, component=TrainingQueue):
    """A Kueue ClusterQueue capped at the GPU pools' maximum (Spot flavors first), a
    LocalQueue per team namespace, priority classes and the stopPolicy kill switch. From
    other languages `namespaces` are the namespace names (a K8sTeamNamespace's `namespace`)
    and `flavors` the pools' flavors as plain objects."""

    cluster_queue_name: pulumi.Output[str]
    local_queue_names: pulumi.Output[dict[str, str]]
    """The LocalQueue's name per namespace: jobs put it in kueue.x-k8s.io/queue-name."""
    workload_priority_class_names: pulumi.Output[dict[str, str]]
    priority_class_names: pulumi.Output[dict[str, str]]
    stop_command: pulumi.Output[str]
    """The kubectl patch that stops the queue (stopPolicy HoldAndDrain)."""
    resume_command: pulumi.Output[str]


class K8sInferenceService(_Adapter, args=K8sInferenceServiceArgs, component=InferenceService):
    """A model served from its serving namespace: per version a Deployment of the runtime
    with the aistack gateway sidecar, a Service, an autoscaler with an explicit maximum and
    a PodDisruptionBudget; a weighted HTTPRoute, an ingress NetworkPolicy, the scrape and
    the serving alerts. From other languages `namespace` is required (a K8sTeamNamespace's
    namespaceName)."""

    route_name: pulumi.Output[str]
    """The HTTPRoute: rollback is a patch of its backend weights."""
    alert_names: pulumi.Output[list[str]]


class K8sImagePolicy(_Adapter, args=K8sImagePolicyArgs, component=ImagePolicy):
    """ValidatingAdmissionPolicies and bindings that refuse, in the namespaces aistack
    manages, images without a digest (E1) and serving pods without an explicit model
    version (S7)."""

    policy_names: pulumi.Output[dict[str, str]]
    """The policy's name per shape (pods, workloads, cronjobs, jobsets)."""


#: Every adapter, in the registry's order (aistack/_registry.py). A component listed there
#: without an adapter here stops this import with a KeyError naming it.
COMPONENTS: list[type[pulumi.ComponentResource]] = [_ADAPTERS[name] for name in SPECS]

"""The arguments of `aws.InferenceTier`: the model, its versions, the runtime, the front.

Each field is checked as it is parsed; what needs the wiring (network, buckets) or several
fields at once is the plan's (`planning.py`), so `pulumi up` still fails with one
ConfigError naming every bad field.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from aistack.config import AistackModel, DataClassification, Governance
from aistack.contracts.aws import MAX_SERVING_NODES as MAX_NODES
from aistack.contracts.images import pinned_image
from aistack.contracts.model_versions import (  # re-exported: S7, every cloud
    MOVING_LABELS,
    version_slug,
)
from aistack.contracts.serving import MAX_VERSIONS, VersionSpec
from aistack.gateway import GatewayConfig

__all__ = [
    "DEFAULT_AMI_PARAMETER",
    "DEFAULT_LOG_RETENTION_DAYS",
    "InferenceTierArgs",
    "LOG_RETENTION_DAYS",
    "MAX_NODES",
    "MAX_VERSIONS",
    "MOVING_LABELS",
    "ModelQualityAlarm",
    "ModelVersion",
    "ServingMachineImage",
    "version_slug",
]

# MAX_VERSIONS (aistack.contracts.serving) fits an ALB: a forward action takes at most five
# target groups.
# MAX_NODES: aistack.contracts.aws.MAX_SERVING_NODES, which rule AIS-S3-02 reads.
# Deep Learning Base AMI (Ubuntu 22.04): NVIDIA driver, docker, NVIDIA container toolkit and
# the AWS CLI. Resolved on each `pulumi up`; the resolved id goes into the launch template.
DEFAULT_AMI_PARAMETER = (
    "/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
)
#: Days the tier's logs are kept unless requestLogging 'full' sets it: a month of incidents.
DEFAULT_LOG_RETENTION_DAYS = 30
#: CloudWatch Logs accepts only these retention periods.
LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096,
                      1827, 2192, 2557, 2922, 3288, 3653)  # fmt: skip
_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
_WAF_RULE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


def _retention(days: int | None) -> int | None:
    if days is not None and days not in LOG_RETENTION_DAYS:
        raise ValueError(
            f"CloudWatch Logs cannot keep logs for {days} days. Fix: use one of "
            f"{list(LOG_RETENTION_DAYS)}."
        )
    return days


def _digest(image: str | None, field: str) -> str | None:
    return None if image is None else pinned_image(image, field)


class ModelVersion(VersionSpec):
    """One deployable model version: its traffic share, its bounds and who approved it."""

    version: str = Field(
        pattern=_NAME,
        description="The version as stored in the models bucket, under "
        "s3://<bucket>/<modelName>/<version>/ (S7). Explicit: 'latest', 'current' and "
        "'stable' are refused, because they name whatever is newest.",
    )
    weight: int = Field(
        ge=0,
        le=100,
        description="Share of traffic in per cent; the weights of all versions sum to 100. "
        "0 keeps the version deployable without traffic (S6): rollback is a weight change.",
    )
    min_nodes: int | None = Field(
        None,
        ge=1,
        description="Nodes kept while the version takes traffic; default: the tier's "
        "minNodes. At least 1: request-count scaling cannot start a group from zero.",
    )
    max_nodes: int | None = Field(
        None,
        ge=1,
        le=MAX_NODES,
        description="Most nodes of this version (its cost cap); default: the tier's maxNodes.",
    )
    standby: Literal["warm", "zero"] = Field(
        "warm",
        description="At weight 0: 'warm' (default) keeps one node loaded, so a rollback "
        "takes seconds; 'zero' keeps none, so it costs nothing and a rollback waits for a "
        "node to boot and load the model.",
    )
    approved_by: str | None = Field(
        None,
        min_length=1,
        max_length=256,
        description="Who approved this version for production (G3), e.g. an email or a "
        "ticket. Required for every version when governance.environment is prod.",
    )
    instance_type: str | None = Field(
        None, description="GPU instance type for this version; default: the tier's."
    )


class ModelQualityAlarm(AistackModel):
    """The model-quality metric the serving code publishes, and when it alarms (G4)."""

    threshold: float = Field(
        description="Alarm threshold of the metric. Required: only the team knows what a "
        "bad score is for its model."
    )
    metric_name: str = Field(
        "model_quality_score",
        pattern=r"^[A-Za-z0-9._/#:-]{1,255}$",
        description="Metric published in the tier's namespace aistack/<stack>/<name> with "
        "the dimension ModelVersion=<version>.",
    )
    alarm_when: Literal["below", "above"] = Field(
        "below",
        description="'below' for scores (accuracy, win rate), 'above' for drift or error measures.",
    )
    statistic: Literal["Average", "Minimum", "Maximum", "Sum", "SampleCount"] = Field(
        "Average", description="How the period's values are combined."
    )
    period_minutes: int = Field(
        60, ge=1, le=1440, description="Length of one evaluation period (max a day)."
    )
    evaluation_periods: int = Field(
        3, ge=1, description="Periods in a row beyond the threshold before it alarms."
    )
    treat_missing_data: Literal["breaching", "notBreaching", "missing", "ignore"] = Field(
        "breaching",
        description="A version taking traffic whose quality nobody publishes is not "
        "monitored, so by default silence alarms too. Publish at least once per period.",
    )

    @field_validator("evaluation_periods")
    @classmethod
    def _within_a_week(cls, periods: int, info: Any) -> int:
        minutes = info.data.get("period_minutes", 60)
        if periods * minutes > 7 * 24 * 60:
            raise ValueError(
                "CloudWatch evaluates at most seven days. Fix: lower evaluationPeriods or "
                "periodMinutes."
            )
        return periods


class ServingMachineImage(AistackModel):
    """The nodes' AMI: pinned by id, or resolved from a public SSM parameter at deploy time."""

    ami_id: str | None = Field(
        None, pattern=r"^ami-[0-9a-f]{8,17}$", description="Pinned image id (preferred, E1)."
    )
    ssm_parameter: str = Field(
        DEFAULT_AMI_PARAMETER,
        description="Parameter resolved on each `pulumi up` when amiId is unset; default: "
        "the Deep Learning Base AMI (Ubuntu 22.04) with driver, docker and the NVIDIA "
        "container toolkit.",
    )
    root_device_name: str = Field(
        "/dev/sda1",
        pattern=r"^/dev/[a-z0-9]+$",
        description="Root device of the AMI (/dev/sda1 on Ubuntu, /dev/xvda on Amazon Linux).",
    )


class InferenceTierArgs(AistackModel):
    """Arguments of `aws.InferenceTier`; camelCase in Pulumi config, snake_case in Python."""

    output_keywords = frozenset({"alarm_topic_arn"})

    governance: Governance
    region: str = Field(
        description="Region of the tier: the network's and the models bucket's, inside "
        "governance.allowed_regions (C4)."
    )
    model_name: str = Field(
        pattern=_NAME,
        description="The model's prefix in the models bucket; also the name the runtime "
        "serves it under.",
    )
    versions: tuple[ModelVersion, ...] = Field(
        min_length=1,
        description="Every deployable version with its traffic weight (S6, S7); at most "
        f"{MAX_VERSIONS}, weights summing to 100.",
    )
    image: str = Field(
        description="Model server image by digest (E1, S2): repo@sha256:<64 hex>. With the "
        "network's default egress (no internet), it must come from ECR; grant the inference "
        "role pull access (ContainerRegistry.grant_pull)."
    )
    runtime: Literal["vllm", "triton", "tensorrt-llm"] = Field(
        "vllm",
        description="The optimised runtime in the image (S2): how it is started and which "
        "health path it answers. vLLM (default) serves an OpenAI-compatible API.",
    )
    runtime_args: tuple[str, ...] = Field(
        (),
        description="Extra arguments for the runtime, after the ones aistack sets (model "
        "path, port, tensor parallelism), e.g. ['--max-model-len', '8192'].",
    )
    instance_type: str = Field(
        description="GPU instance type from the aistack catalog, offered in the region and "
        "in the network's inference zones (C2). Required."
    )
    max_nodes: int = Field(
        ge=1,
        le=MAX_NODES,
        description="Most nodes per version: the cost cap (S3). Required, no default.",
    )
    min_nodes: int = Field(
        1,
        ge=1,
        description="Nodes kept per version taking traffic; default 1 (request-count "
        "scaling cannot start from zero).",
    )
    target_requests_per_node_per_minute: int = Field(
        60,
        ge=1,
        description="Target tracking goal: requests a node takes per minute before the "
        "group adds one (S3). Default 60; measure your model and set it.",
    )
    request_logging: Literal["none", "metadata", "full"] = Field(
        description="What the gateway logs per request (G2), required with no default: "
        "'none'; 'metadata' (time, client address, path, status, latencies, cache status: no "
        "bodies, no keys); 'full' (metadata plus the request body, i.e. prompts; needs "
        "logDataClassification and logRetentionDays). Answers are never logged."
    )
    log_data_classification: DataClassification | None = Field(
        None,
        description="Highest classification of what the logs hold; required with "
        "requestLogging 'full' (G2).",
    )
    log_retention_days: int | None = Field(
        None,
        description="Days the tier's logs are kept; required with requestLogging 'full'. "
        "Default 30 otherwise. A CloudWatch retention value.",
    )
    fallback: Literal["error", "previous_version"] = Field(
        "error",
        description="What a node answers while its model server is down (G5): 'error' "
        "(default) is a JSON 503 with Retry-After, while the node is replaced. "
        "'previous_version' is refused on AWS; see docs/components/aws/inference-tier.md.",
    )
    gateway: GatewayConfig = Field(
        default_factory=GatewayConfig,
        description="The nginx gateway on every node (rate limit, concurrency cap, cache); "
        "its listen port is the network's gateway port, and the tier sets its fallback.",
    )
    gateway_image: str | None = Field(
        None,
        description="nginx image by digest to run the gateway from (e.g. mirrored to ECR). "
        "Required unless machineImage.amiId pins an image that already has nginx: private "
        "nodes cannot reach a package mirror to install it, and a node that cannot start "
        "its gateway is replaced forever.",
    )
    public: bool = Field(
        False,
        description="Internet-facing load balancer; needs a network with public_endpoint. "
        "Off: internal, reachable from the VPC and what is peered to it.",
    )
    certificate_arn: str | None = Field(
        None,
        description="ACM certificate for HTTPS on 443 (TLS 1.3/1.2 policy); HTTP then only "
        "redirects. Without one the load balancer speaks plain HTTP on 80. Required for a "
        "public load balancer, and when governance.data_classification is confidential or "
        "restricted, unless allow_plaintext_http.",
    )
    allow_plaintext_http: bool = Field(
        False,
        description="Allow plain HTTP without a certificate where one is required: on a "
        "public load balancer, or for confidential or restricted data on an internal one. "
        "Off: prompts and answers with such data never travel unencrypted.",
    )
    allow_container_metadata_access: bool = Field(
        False,
        description="Let the serving containers reach the instance metadata service (hop "
        "limit 2) and with it the inference role. Off: the model server, third-party code, "
        "gets no AWS credentials; the host's scripts pull the image and sync the model. "
        "Turn on only for a runtime that calls AWS itself.",
    )
    waf_rate_limit: int = Field(
        2000,
        ge=10,
        le=2_000_000_000,
        description="Requests one client IP may send in 5 minutes before WAF blocks it with "
        "429 (S3). Default 2000 (about 7 per second): far above one user, far below a flood.",
    )
    waf_count_only_rules: tuple[str, ...] = Field(
        ("SizeRestrictions_BODY",),
        description="Rules of AWSManagedRulesCommonRuleSet that only count instead of "
        "block. Default: SizeRestrictions_BODY, which blocks every body over 8 KB, i.e. "
        "every long prompt. Add e.g. CrossSiteScripting_BODY if prompts carry code.",
    )
    waf_log_all_requests: bool = Field(
        False,
        description="Log every request WAF sees. Off: only blocked and counted ones (cost, "
        "and fewer copies of request metadata).",
    )
    waf_log_retention_days: int = Field(90, description="Days WAF logs are kept.")
    latency_slo_ms: int = Field(
        gt=0,
        description="p99 latency objective; the latency alarm fires above it (S5). "
        "Required: generation latency depends on the model and output length.",
    )
    error_rate_percent: float = Field(
        1.0, gt=0, le=100, description="5xx share of requests that alarms (S5). Default 1%."
    )
    quality: ModelQualityAlarm = Field(
        description="The model-quality alarm (G4); required, with its threshold."
    )
    alarm_topic_arn: str | None = Field(
        None, description="SNS topic for alarm and recovery notifications."
    )
    machine_image: ServingMachineImage = Field(
        default_factory=ServingMachineImage,
        description="The nodes' AMI; default: the Deep Learning Base AMI, resolved at deploy time.",
    )
    root_volume_gb: int = Field(
        200,
        ge=30,
        description="Encrypted gp3 root volume: images are large, and without NVMe the "
        "model is copied here too.",
    )
    boot_timeout_minutes: int = Field(
        45,
        ge=5,
        le=120,
        description="How long a new node may take to copy the model, pull the images and "
        "answer; past it the group replaces the node. At most 120 (lifecycle hook limit).",
    )
    allow_destroy_logs: bool = Field(
        False, description="Let `pulumi destroy` delete the log groups and their keys."
    )

    @field_validator("image", "gateway_image")
    @classmethod
    def _images_by_digest(cls, image: str | None, info: Any) -> str | None:
        return _digest(image, info.field_name)

    @field_validator("log_retention_days", "waf_log_retention_days")
    @classmethod
    def _retention_values(cls, days: int | None) -> int | None:
        return _retention(days)

    @field_validator("instance_type")
    @classmethod
    def _lowercase(cls, value: str) -> str:
        return value.strip().lower()

    @field_validator("waf_count_only_rules")
    @classmethod
    def _rule_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for rule_name in names:
            if not _WAF_RULE_NAME.match(rule_name):
                raise ValueError(
                    f"{rule_name!r} is not a WAF rule name. Fix: use a rule name of "
                    "AWSManagedRulesCommonRuleSet, e.g. 'SizeRestrictions_BODY'."
                )
        return tuple(dict.fromkeys(names))

"""Arguments of `gcp.InferenceTier`, and the plan made from them before any resource exists.

As on AWS (aistack/aws/inference/args.py), everything a stack can get wrong is checked in
one pass, so `pulumi up` fails with one ConfigError naming every bad field: explicit
versions (S7) whose weights sum to 100, bounds per version (the cost cap, S3), a machine
type the region and the network's inference zones offer (C2), the wiring (network with an
inference tier and a proxy-only subnet, models bucket) in one region (D2, S1), an explicit
request-logging choice with what full logging needs (G2), an approver for every version in
production (G3), TLS for confidential data, and a gateway config that fits the network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from aistack import catalog
from aistack.config import AistackModel, DataClassification, Governance
from aistack.contracts.images import require_digest
from aistack.contracts.model_versions import check_full_logging, version_slug
from aistack.contracts.serving import MAX_VERSIONS, VersionSpec, check_versions
from aistack.errors import ConfigError, Problems
from aistack.gateway import GatewayConfig
from aistack.gcp._boot_image import pinned_boot_image

if TYPE_CHECKING:
    from aistack.gcp.dataset_bucket import DatasetBucket
    from aistack.gcp.network import Network
    from aistack.gcp.project_services import ProjectServices

__all__ = [
    "API_SERVICES",
    "AUTOHEAL_MAX_DELAY_SECONDS",
    "InferenceTierArgs",
    "MAX_NODES",
    "MAX_VERSIONS",
    "ModelQualityAlert",
    "ModelVersion",
    "SCALE_IN_WINDOW_SECONDS",
    "THROTTLE_INTERVALS",
    "VersionPlan",
    "plan_tier",
    "version_slug",
]

WORKLOAD = "inference"
# MAX_VERSIONS (aistack.contracts.serving) bounds the weightedBackendServices of a URL map
# route action: five versions deployable, as on AWS (a rollback target, a canary and what
# is being retired).
MAX_NODES = 100
#: Scale-in control: no more than the scale-in of one node per 600 s, longer than a model
#: load (research gcp-k8s.md §C1: a 30 s window thrashes with multi-minute loads).
SCALE_IN_WINDOW_SECONDS = 600
#: autoHealingPolicies.initialDelaySec accepts 0 to 3600 (Compute Engine API,
#: instanceGroupManagers resource).
AUTOHEAL_MAX_DELAY_SECONDS = 3600
#: rateLimitOptions.rateLimitThreshold.intervalSec takes these values only (Cloud Armor
#: docs, "Rate limiting overview" / pulumi-gcp RegionSecurityPolicyRule interval_sec).
THROTTLE_INTERVALS = (10, 30, 60, 120, 180, 240, 300, 600, 900, 1200, 1800, 2700, 3600)
#: Cloud Logging log buckets keep logs 1 to 3650 days (Logging API, LogBucket.retentionDays).
_RETENTION = (1, 3650)
DEFAULT_LOG_RETENTION_DAYS = 30
API_SERVICES = (
    "compute.googleapis.com",
    "storage.googleapis.com",
    "logging.googleapis.com",
    "monitoring.googleapis.com",
    # The log bucket's key (aistack.gcp._logs.log_bucket_key).
    "cloudkms.googleapis.com",
)
_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
_ENCRYPT_IN_TRANSIT = frozenset({"confidential", "restricted"})
#: A regional SSL certificate or Certificate Manager certificate, by id or self link.
_CERTIFICATE = re.compile(
    r"^(https://www\.googleapis\.com/compute/v1/)?projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/"
    r"(regions/(?P<region>[a-z0-9-]+)/sslCertificates/[a-z]([-a-z0-9]*[a-z0-9])?"
    r"|locations/(?P<location>[a-z0-9-]+)/certificates/[A-Za-z0-9_-]+)$"
)
_HEADER = re.compile(r"^[A-Za-z0-9-]{1,64}$")


class ModelVersion(VersionSpec):
    """One deployable model version: its traffic share, its bounds and who approved it."""

    version: str = Field(
        pattern=_NAME,
        description="The version as stored in the models bucket, under "
        "gs://<bucket>/<modelName>/<version>/ (S7). Explicit: 'latest' and the other moving "
        "labels are refused.",
    )
    weight: int = Field(
        ge=0,
        le=100,
        description="Share of traffic in per cent; the weights sum to 100. 0 keeps the "
        "version deployable without traffic (S6): rollback is a weight change.",
    )
    min_nodes: int | None = Field(None, ge=1, description="Default: the tier's minNodes.")
    max_nodes: int | None = Field(
        None, ge=1, le=MAX_NODES, description="Cost cap of this version; default: the tier's."
    )
    standby: Literal["warm", "zero"] = Field(
        "warm",
        description="At weight 0: 'warm' keeps one VM loaded (a rollback takes seconds); "
        "'zero' keeps none.",
    )
    approved_by: str | None = Field(
        None,
        min_length=1,
        max_length=256,
        description="Who approved this version for production (G3). Required in prod.",
    )


class ModelQualityAlert(AistackModel):
    """The model-quality metric the serving code writes, and when it alerts (G4)."""

    threshold: float = Field(description="Alert threshold. Required.")
    metric_name: str = Field(
        "model_quality_score",
        pattern=r"^[a-z][a-z0-9_/]{0,99}$",
        description="Custom metric custom.googleapis.com/aistack/<metricName>, written with "
        "the labels model_version and tier.",
    )
    alert_when: Literal["below", "above"] = Field("below", description="'below' for scores.")
    period_minutes: int = Field(60, ge=1, le=1440, description="Alignment period.")
    duration_minutes: int = Field(
        180, ge=0, le=1440, description="How long beyond the threshold before it alerts."
    )
    absent_alerts: bool = Field(
        True,
        description="Also alert when no version publishes the metric for durationMinutes: "
        "a version whose quality nobody publishes is not monitored.",
    )


class InferenceTierArgs(AistackModel):
    """Arguments of `gcp.InferenceTier`; camelCase in Pulumi config, snake_case in Python."""

    output_keywords = frozenset({"notification_channels"})

    governance: Governance
    region: str = Field(description="The tier's region: the network's and the models bucket's.")
    model_name: str = Field(pattern=_NAME, description="The model's prefix in the models bucket.")
    versions: tuple[ModelVersion, ...] = Field(
        min_length=1, description=f"Deployable versions (S6, S7); at most {MAX_VERSIONS}."
    )
    image: str = Field(description="Model server image by digest (E1, S2).")
    runtime: Literal["vllm", "triton", "tensorrt-llm"] = Field("vllm", description="Runtime.")
    runtime_args: tuple[str, ...] = Field((), description="Extra runtime arguments.")
    machine_type: str = Field(
        description="GPU machine type from the catalog, offered in the network's inference "
        "zones (C2), e.g. 'g2-standard-8' (1 x L4)."
    )
    source_image: str = Field(
        description="Boot image pinned by name, projects/<p>/global/images/<name> (E1), with "
        "the NVIDIA driver built in, docker with the NVIDIA container toolkit, gcloud and the "
        "Ops Agent: a Deep Learning VM `-nvidia-<driver>-v<date>` image (others of that "
        "project are refused) or the team's own (docs/real-boot.md)."
    )
    max_nodes: int = Field(ge=1, le=MAX_NODES, description="Most VMs per version: the cost cap.")
    min_nodes: int = Field(1, ge=1, description="VMs kept per version taking traffic.")
    target_requests_per_node_per_second: float = Field(
        1.0,
        gt=0,
        description="Load balancing utilization target: requests per second a VM takes "
        "before the autoscaler adds one (S3). Measure your model and set it.",
    )
    request_logging: Literal["none", "metadata", "full"] = Field(
        description="What the gateway and the load balancer log per request (G2), required."
    )
    log_data_classification: DataClassification | None = Field(
        None, description="What the logs hold; required with requestLogging 'full' (G2)."
    )
    log_retention_days: int | None = Field(
        None, description="Days the tier's regional log bucket keeps logs; required with 'full'."
    )
    fallback: Literal["error", "previous_version"] = Field(
        "error",
        description="What a VM answers while its model server is down (G5): a JSON 503 with "
        "Retry-After. 'previous_version' is refused, as on AWS.",
    )
    gateway: GatewayConfig = Field(default_factory=GatewayConfig, description="nginx gateway.")
    gateway_image: str | None = Field(
        None,
        description="nginx image by digest (e.g. mirrored to Artifact Registry). Required: "
        "private VMs cannot reach a package mirror to install nginx.",
    )
    public: bool = Field(
        False,
        description="EXTERNAL_MANAGED (internet-facing) regional application load balancer. "
        "Off: INTERNAL_MANAGED, reachable from the VPC only.",
    )
    certificate: str | None = Field(
        None,
        description="Regional SSL certificate (projects/<p>/regions/<r>/sslCertificates/<n>) "
        "for HTTPS on 443. Required when public or for confidential/restricted data unless "
        "allowPlaintextHttp.",
    )
    allow_plaintext_http: bool = Field(False, description="Allow HTTP where TLS is required.")
    throttle_key: Literal["IP", "HTTP_HEADER"] = Field(
        "IP",
        description="What Cloud Armor counts per client (S3): 'IP' or 'HTTP_HEADER' "
        "(throttleHeader, e.g. the API key).",
    )
    throttle_header: str = Field("x-api-key", description="Header counted with HTTP_HEADER.")
    throttle_requests: int = Field(
        600, ge=1, le=1_000_000, description="Requests per client per interval before 429."
    )
    throttle_interval_seconds: int = Field(60, description="Interval of throttleRequests.")
    latency_slo_ms: int = Field(gt=0, description="p99 latency objective (S5). Required.")
    error_rate_percent: float = Field(1.0, gt=0, le=100, description="5xx share that alerts.")
    quality: ModelQualityAlert = Field(description="The model-quality alert (G4). Required.")
    notification_channels: tuple[str, ...] = Field((), description="Monitoring channel ids.")
    boot_disk_gb: int = Field(200, ge=50, description="Boot disk (pd-balanced) size.")
    boot_timeout_minutes: int = Field(
        45,
        ge=5,
        le=AUTOHEAL_MAX_DELAY_SECONDS // 60,
        description="How long a new VM may take to load the model before autohealing judges "
        "it; at most 60 (autohealing initial delay limit).",
    )

    @field_validator("image", "gateway_image")
    @classmethod
    def _by_digest(cls, image: str | None, info: Any) -> str | None:
        if image is None:
            return None
        try:
            return require_digest(image, info.field_name)
        except ConfigError as error:
            problem = error.problems[0]
            raise ValueError(f"{problem.message} Fix: {problem.fix}") from None

    @field_validator("machine_type")
    @classmethod
    def _catalogued(cls, machine: str) -> str:
        machine = machine.strip().lower()
        if catalog.find("gcp", machine) is None:
            known = [t.name for t in catalog.instance_types("gcp")]
            raise ValueError(f"{machine!r} is not a GPU machine type. Fix: use one of {known}.")
        return machine

    @field_validator("source_image")
    @classmethod
    def _pinned(cls, image: str) -> str:
        return pinned_boot_image(image)

    @field_validator("log_retention_days")
    @classmethod
    def _retention(cls, days: int | None) -> int | None:
        if days is not None and not _RETENTION[0] <= days <= _RETENTION[1]:
            raise ValueError(f"{days} is not a log bucket retention. Fix: use 1 to 3650 days.")
        return days

    @field_validator("throttle_interval_seconds")
    @classmethod
    def _interval(cls, seconds: int) -> int:
        if seconds not in THROTTLE_INTERVALS:
            raise ValueError(
                f"Cloud Armor counts over {list(THROTTLE_INTERVALS)} seconds only. Fix: use one."
            )
        return seconds

    @field_validator("throttle_header")
    @classmethod
    def _header(cls, header: str) -> str:
        if not _HEADER.fullmatch(header):
            raise ValueError(f"{header!r} is not an HTTP header name. Fix: e.g. 'x-api-key'.")
        return header.lower()

    @property
    def machine(self) -> catalog.InstanceType:
        return catalog.get(self.machine_type, cloud="gcp")


@dataclass(frozen=True)
class VersionPlan:
    spec: ModelVersion
    slug: str
    min_nodes: int
    max_nodes: int

    @property
    def version(self) -> str:
        return self.spec.version

    @property
    def weight(self) -> int:
        return self.spec.weight


def plan_tier(  # noqa: PLR0912 - one check per field, top to bottom
    name: str,
    args: InferenceTierArgs,
    services: ProjectServices | None,
    network: Network | None,
    models: DatasetBucket | None,
) -> tuple[list[VersionPlan], GatewayConfig]:
    problems = Problems()
    at = f"{name}."
    found = args.governance.region_problem(args.region, f"{name}.region", cloud="gcp")
    if found:
        problems.items.append(found)
    assert services is not None and network is not None and models is not None
    problems.items.extend(services.missing(*API_SERVICES, where=name))
    machine = args.machine
    if not machine.offered_in(args.region):
        problems.add(
            f"{at}machineType",
            f"{machine.name} is not offered in {args.region} (C2).",
            f"use a region among {list(machine.regions)}, or another machine.",
        )
    if network.region != args.region:
        problems.add(
            f"{at}region",
            f"the network is in {network.region} but the tier in {args.region}.",
            f"use the network's region, {network.region}.",
        )
    elif "inference" not in network.subnetworks:
        problems.add(
            f"{at}network",
            "has no inference tier (S1: serving runs in its own subnet and account).",
            "list the machine type in the network's inferenceMachineTypes.",
        )
    elif machine.offered_in(args.region) and not network.zones(WORKLOAD):
        problems.add(
            f"{at}network",
            "plans no inference zone that offers the tier's machine type (C2).",
            f"add {machine.name} to the network's inferenceMachineTypes.",
        )
    if network.proxy_subnet is None:
        problems.add(
            f"{at}network",
            "has no proxy-only subnet: a regional Envoy-based load balancer (internal or "
            "external managed) needs one in its region and VPC (Load Balancing docs, "
            '"Proxy-only subnets for Envoy-based load balancers").',
            "create the network with proxyOnlySubnet: true.",
        )
    if models.args.kind != "models":
        problems.add(
            f"{at}models",
            f"is a {models.args.kind!r} bucket; the inference account may read models only (S1).",
            "pass the DatasetBucket of kind 'models'.",
        )
    if models.region.lower() != args.region.lower():
        problems.add(
            f"{at}models",
            f"the models bucket is in {models.region}: every VM would copy the model across "
            "regions at boot (D2).",
            f"put the models bucket in {args.region}.",
        )
    versions = _check_versions(name, args, problems)
    check_full_logging(at, args, problems)
    if args.fallback == "previous_version":
        problems.add(
            f"{at}fallback",
            "'previous_version' is not available: the previous version sits behind the same "
            "load balancer, which a VM could reach only by a second trip through it.",
            "keep fallback 'error' and the previous version warm (weight 0, standby 'warm').",
        )
    needs_tls = args.public or args.governance.data_classification in _ENCRYPT_IN_TRANSIT
    if needs_tls and not args.certificate and not args.allow_plaintext_http:
        why = (
            "a public load balancer without a certificate would carry prompts and answers "
            "over the internet in plain HTTP."
            if args.public
            else f"the stack's data is {args.governance.data_classification}, and without a "
            "certificate its prompts and answers would cross the VPC in plain HTTP."
        )
        problems.add(
            f"{at}certificate",
            why,
            "set certificate to a regional SSL certificate, or (an accepted risk) "
            "allowPlaintextHttp: true.",
        )
    if args.certificate:
        match = _CERTIFICATE.match(args.certificate)
        if not match:
            problems.add(
                f"{at}certificate",
                f"{args.certificate!r} is not a regional SSL certificate.",
                "use projects/<p>/regions/<region>/sslCertificates/<name>.",
            )
        elif (match["region"] or match["location"]) != args.region:
            problems.add(
                f"{at}certificate",
                "a regional load balancer uses certificates of its own region only.",
                f"create the certificate in {args.region}.",
            )
    if args.gateway_image is None:
        problems.add(
            f"{at}gatewayImage",
            "no gateway image: private VMs cannot reach a package mirror to install nginx, "
            "so every VM would fail its boot and be recreated, at GPU prices.",
            "mirror nginx into Artifact Registry and set gatewayImage to it by digest.",
        )
    gateway = _gateway(name, args, network, problems)
    problems.raise_if_any()
    return versions, gateway


def _check_versions(name: str, args: InferenceTierArgs, problems: Problems) -> list[VersionPlan]:
    distinct = check_versions(
        args.versions,
        at=f"{name}.versions",
        item=lambda index: f"{name}.versions[{index}]",
        prod=args.governance.environment == "prod",
        routes="a URL map",
        splits="a URL map's weightedBackendServices split traffic by their weights",
        problems=problems,
    )
    plans: list[VersionPlan] = []
    for index, spec, slug in distinct:
        here = f"{name}.versions[{index}]"
        if len(f"{name}-{slug}") > 40:
            problems.add(
                f"{here}.version",
                f"'{name}-{slug}' is too long for the group's instance names.",
                "use a shorter tier name or version.",
            )
        maximum = spec.max_nodes or args.max_nodes
        active_min = spec.min_nodes or args.min_nodes
        if active_min > maximum:
            problems.add(
                f"{here}.minNodes",
                f"{active_min} nodes exceed maxNodes {maximum}.",
                "lower minNodes or raise maxNodes.",
            )
        minimum = active_min if spec.weight > 0 else (1 if spec.standby == "warm" else 0)
        plans.append(VersionPlan(spec, slug, min(minimum, maximum), maximum))
    return plans


def _gateway(name: str, args: InferenceTierArgs, network: Any, problems: Problems) -> GatewayConfig:
    gateway = args.gateway
    port = network.args.gateway_port
    chosen = gateway.model_fields_set
    if "listen_port" in chosen and gateway.listen_port != port:
        problems.add(
            f"{name}.gateway.listenPort",
            f"the network lets the load balancer reach the VMs on port {port} only.",
            "remove gateway.listenPort, or change the network's gatewayPort.",
        )
    if chosen & {"fallback", "previous_upstream"}:
        problems.add(f"{name}.gateway.fallback", "the tier decides it.", "set the tier's fallback.")
    if gateway.listen_address not in ("0.0.0.0", "*"):
        problems.add(
            f"{name}.gateway.listenAddress",
            "the load balancer reaches the gateway on the VM's private address.",
            "remove gateway.listenAddress.",
        )
    data = gateway.model_dump()
    data.update(listen_port=port, fallback="error", previous_upstream=None)
    return GatewayConfig.parse(data, where=f"{name}.gateway")

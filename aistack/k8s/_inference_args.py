"""Arguments of `k8s.InferenceService`, and the plan made from them before any object exists.

Everything a stack can get wrong is checked in one pass, so `pulumi up` fails with one
ConfigError naming every bad field: explicit versions (S7) whose weights sum to 100, an
explicit maximum per version (the cost cap, S3) that the serving namespace's GPU quota can
hold, a serve-tier TeamNamespace and one of its ServiceAccounts (S1), an explicit
request-logging choice with what full logging needs (G2), an approver for every version in
production (G3), a model-quality threshold (G4), and the runtimes whose metrics the alerts
are written for (S2, S5).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from aistack.config import AistackModel, DataClassification, Governance
from aistack.contracts.images import pinned_image
from aistack.contracts.k8s import MAX_REPLICAS, parse_quantity
from aistack.contracts.model_versions import (
    MOVING_LABELS,
    check_full_logging,
    version_slug,
)
from aistack.contracts.serving import MAX_VERSIONS, VersionSpec, check_versions
from aistack.errors import Problems
from aistack.gateway import GatewayConfig

if TYPE_CHECKING:
    from aistack.k8s.team_namespace import TeamNamespace

__all__ = [
    "Autoscaling",
    "IngressSource",
    "InferenceServiceArgs",
    "MAX_REPLICAS",
    "MAX_VERSIONS",
    "MOVING_LABELS",
    "ModelSource",
    "ParentGateway",
    "QualityAlert",
    "ServingVersion",
    "VersionPlan",
    "plan_service",
    "version_slug",
]

# A valid label value too (alphanumeric at both ends), so pods can carry it.
_NAME = r"^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$"
_DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
_HOSTNAME = re.compile(r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_URI = re.compile(
    r"^(?P<scheme>s3|gs)://(?P<bucket>[a-z0-9][a-z0-9._-]{1,221}[a-z0-9])(/[\x21-\x7e]*)?$"
)


def _digest(image: str | None, field: str) -> str | None:
    return None if image is None else pinned_image(image, field)


class ServingVersion(VersionSpec):
    """One deployable model version: its traffic share, its bounds and who approved it."""

    version: str = Field(
        pattern=_NAME,
        description="The immutable version (S7), as stored under the model source, "
        "<uri>/<modelName>/<version>/. 'latest', 'current', 'stable' are refused.",
    )
    weight: int = Field(
        ge=0,
        le=100,
        description="Share of traffic in per cent; all versions' weights sum to 100. 0 "
        "keeps the version deployed without traffic: rollback is a weight change (S6).",
    )
    min_replicas: int | None = Field(
        None, ge=1, description="Replicas kept while it takes traffic; default: the service's."
    )
    max_replicas: int | None = Field(
        None,
        ge=1,
        le=MAX_REPLICAS,
        description="Most replicas of this version (its cost cap); default: the service's.",
    )
    standby: Literal["warm", "zero"] = Field(
        "warm",
        description="At weight 0: 'warm' (default) keeps one replica loaded, so a rollback "
        "takes seconds; 'zero' keeps none (KEDA scales it from zero when traffic returns; "
        "with the HPA, a rollback to it waits for `pulumi up` and a model load).",
    )
    approved_by: str | None = Field(
        None,
        min_length=1,
        max_length=256,
        description="Who approved this version for production (G3), e.g. an e-mail or a "
        "ticket. Required for every version when governance.environment is prod.",
    )


class ModelSource(AistackModel):
    """Where each version's weights are copied from onto the node, before the runtime starts."""

    uri: str = Field(
        description="s3://bucket/prefix or gs://bucket/prefix; version v of model m is "
        "read from <uri>/<m>/<v>/, read-only, by the serving ServiceAccount's cloud identity "
        "(no keys: the team namespace links it, C6)."
    )
    sync_image: str = Field(
        description="Image by digest with the cloud's CLI that copies the model: the AWS "
        "CLI for s3:// (e.g. public.ecr.aws/aws-cli/aws-cli@sha256:...), the Google Cloud "
        "CLI for gs:// (e.g. gcr.io/google.com/cloudsdktool/google-cloud-cli@sha256:...)."
    )
    cache_size: str = Field(
        "200Gi",
        description="Node-local disk for the model (an emptyDir with this sizeLimit, and "
        "an ephemeral-storage request of the same, so the pod lands on a node that has it).",
    )

    @field_validator("uri")
    @classmethod
    def _bucket_uri(cls, uri: str) -> str:
        if not _URI.match(uri):
            raise ValueError(
                f"{uri!r} is not an s3:// or gs:// URI. Fix: give the bucket and prefix the "
                "versions are stored under, e.g. gs://team-models/serving."
            )
        return uri.rstrip("/")

    @field_validator("sync_image")
    @classmethod
    def _pinned(cls, image: str) -> str:
        return _digest(image, "syncImage") or image

    @property
    def scheme(self) -> str:
        return self.uri.split("://", 1)[0]


class Autoscaling(AistackModel):
    """How each version's replicas follow load, between its minimum and its maximum (S3)."""

    kind: Literal["keda", "hpa"] = Field(
        "keda",
        description="'keda' (default): a KEDA ScaledObject on the runtime's queue length "
        "read from Prometheus (needs KEDA and prometheusUrl). 'hpa': an autoscaling/v2 "
        "HorizontalPodAutoscaler on a Pods metric served by a metrics adapter "
        "(prometheus-adapter, or GKE's custom-metrics-stackdriver-adapter).",
    )
    prometheus_url: str | None = Field(
        None,
        pattern=r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~/-]*)?$",
        description="Prometheus query endpoint KEDA reads, e.g. "
        "http://prometheus-operated.monitoring.svc:9090 (for GKE Managed Prometheus, the "
        "frontend UI service). Required with kind 'keda'.",
    )
    target_queue_per_replica: int = Field(
        4,
        ge=1,
        description="Requests waiting in the runtime's queue per replica before another "
        "replica is added. Measure your model and set it.",
    )
    hpa_metric: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9_:|.-]{1,255}$",
        description="kind 'hpa': the metric's name as the adapter serves it, e.g. "
        "'vllm:num_requests_waiting' (prometheus-adapter) or "
        "'prometheus.googleapis.com|vllm:num_requests_waiting|gauge' (GKE).",
    )
    scale_down_window_seconds: int = Field(
        600,
        ge=300,
        le=3600,
        description="How long load must stay low before replicas are removed. At least "
        "300: a replica takes minutes to pull its image and load the model, and a shorter "
        "window removes what the next burst needs again.",
    )
    polling_interval_seconds: int = Field(
        30, ge=5, le=300, description="kind 'keda': how often KEDA queries Prometheus."
    )


class IngressSource(AistackModel):
    """Who may reach the gateway port of the serving pods (S1): one NetworkPolicy peer."""

    cidr: str | None = Field(
        None,
        description="An address range, e.g. a GKE proxy-only subnet or a load balancer's "
        "health-check ranges.",
    )
    namespace: str | None = Field(
        None,
        pattern=_DNS_LABEL,
        description="A namespace whose pods may connect, e.g. the Gateway implementation's.",
    )
    pod_labels: dict[str, str] = Field(
        default_factory=dict,
        description="With namespace: only its pods with these labels.",
    )
    purpose: str = Field(min_length=1, description="Why: recorded in the policy's annotation.")

    @field_validator("cidr")
    @classmethod
    def _network(cls, cidr: str | None) -> str | None:
        if cidr is None:
            return None
        try:
            return str(ipaddress.ip_network(cidr, strict=True))
        except ValueError as error:
            raise ValueError(f"{cidr!r} is not a network. Fix: e.g. 10.129.0.0/23.") from error


class ParentGateway(AistackModel):
    """The Gateway API Gateway the HTTPRoute attaches to (owned by the platform team)."""

    name: str = Field(pattern=_DNS_LABEL)
    namespace: str = Field(pattern=_DNS_LABEL)
    section_name: str | None = Field(
        None, pattern=_DNS_LABEL, description="The listener, e.g. 'https'; default: all."
    )
    gateway_class: str | None = Field(
        None,
        pattern=r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$",
        description="The Gateway's gatewayClassName, when known. A GKE class (gke-l7-*) "
        "gets a HealthCheckPolicy per version Service: GKE's load balancer does not read "
        "the pods' readiness probe and would probe GET / on the serving port, which the "
        "model answers 404, so every endpoint would be unhealthy.",
    )

    @property
    def is_gke(self) -> bool:
        """A GKE Gateway class (GKE docs, "GatewayClass capabilities": gke-l7-*)."""
        return bool(self.gateway_class and self.gateway_class.startswith("gke-l7-"))


class QualityAlert(AistackModel):
    """The model-quality metric the team's evaluator publishes to Prometheus (G4)."""

    threshold: float = Field(
        description="Alert threshold. Required: only the team knows what a bad score is."
    )
    metric: str = Field(
        "aistack_model_quality_score",
        pattern=r"^[a-zA-Z_:][a-zA-Z0-9_:]*$",
        description="Gauge with the labels model and model_version, published by the "
        "team's evaluation job.",
    )
    alarm_when: Literal["below", "above"] = Field(
        "below", description="'below' for scores, 'above' for drift or error measures."
    )
    for_minutes: int = Field(
        180, ge=5, le=7 * 24 * 60, description="How long it must be beyond the threshold."
    )


class InferenceServiceArgs(AistackModel):
    """Arguments of `k8s.InferenceService`; camelCase in Pulumi config, snake_case in Python."""

    governance: Governance
    model_name: str = Field(
        pattern=r"^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$",
        description="The model's name: its prefix under the model source, the name the "
        "runtime serves it under, and the start of every object's name (a DNS label of at "
        "most 40 characters, so '<model>-<version>' fits Kubernetes names).",
    )
    versions: tuple[ServingVersion, ...] = Field(
        min_length=1,
        description=f"Every deployable version, oldest first, with its traffic weight "
        f"(S6, S7); at most {MAX_VERSIONS}, weights summing to 100. With fallback "
        "'previous_version', each version falls back to the one listed before it.",
    )
    image: str = Field(description="Model server image by digest (E1, S2).")
    runtime: Literal["vllm", "triton", "tensorrt-llm"] = Field(
        "vllm",
        description="The optimised runtime in the image (S2): how it is started, its "
        "health path and the metrics the alerts use. 'tensorrt-llm' is served through "
        "Triton's TensorRT-LLM backend on Kubernetes: use 'triton' with that image.",
    )
    runtime_args: tuple[str, ...] = Field(
        (), description="Extra runtime arguments, after the ones aistack sets."
    )
    namespace: str | None = Field(
        None,
        pattern=_DNS_LABEL,
        description="The serving namespace; default: the `team=` TeamNamespace's. Required "
        "without team= (from other languages: a K8sTeamNamespace's namespaceName).",
    )
    service_account: str = Field(
        "server",
        pattern=_DNS_LABEL,
        description="The serve TeamNamespace's ServiceAccount the pods run as.",
    )
    priority_class_name: str | None = Field(
        None,
        max_length=253,
        pattern=r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$",
        description="The pods' PriorityClass, above training's (S1): the scheduler places "
        "serving first and evicts training for it on shared nodes. k8s.TrainingQueue makes "
        "`<clusterQueue>-serving` (`queue.priority_class_names['serving']`). Rule AIS-S1-13 "
        "fails serving pods without one.",
    )
    gpus_per_replica: int = Field(
        1, ge=1, le=16, description="GPUs per replica (the runtime's tensor parallelism)."
    )
    gpu_resource: str = Field("nvidia.com/gpu", description="The device plugin's resource name.")
    cpu: str = Field("8", description="CPU requested per replica (model server).")
    memory: str = Field("64Gi", description="Memory requested and limited per replica.")
    shared_memory: str = Field(
        "16Gi", description="/dev/shm in memory: NCCL between tensor-parallel workers."
    )
    node_labels: dict[str, str] = Field(
        default_factory=dict,
        description="nodeSelector of the GPU serving nodes, e.g. the node pool's labels.",
    )
    tolerations: tuple[dict[str, Any], ...] = Field(
        (),
        description="Tolerations for the GPU nodes' taints, in the Kubernetes shape "
        "({key, operator, value, effect}).",
    )
    model: ModelSource | None = Field(
        None,
        description="Where the weights are copied from; None: the image holds them at modelPath.",
    )
    model_path: str | None = Field(
        None,
        pattern=r"^/[A-Za-z0-9._/-]+$",
        description="Path of the weights inside the runtime container; default "
        "/models/<modelName> (where the copy goes).",
    )
    min_replicas: int = Field(1, ge=1, description="Replicas per version taking traffic.")
    max_replicas: int = Field(
        ge=1,
        le=MAX_REPLICAS,
        description="Most replicas per version: the cost cap (S3). Required, no default.",
    )
    autoscaling: Autoscaling = Field(default_factory=Autoscaling)
    startup_minutes: int = Field(
        30,
        ge=5,
        le=120,
        description="How long a new replica may take to copy the model, pull the images "
        "and answer its health check before Kubernetes restarts it; `pulumi up` waits this "
        "long plus 10 minutes for a Deployment to be ready.",
    )
    request_logging: Literal["none", "metadata", "full"] = Field(
        description="What the gateway logs per request (G2), required: 'none'; 'metadata' "
        "(time, client, path, status, latencies, cache status: no bodies, no keys); 'full' "
        "(metadata plus the request body, i.e. prompts; needs logDataClassification and "
        "logRetentionDays). Logs go to the container's stdout, which the cluster's log "
        "agent ships. Answers are never logged."
    )
    log_data_classification: DataClassification | None = Field(
        None, description="Highest classification of what the logs hold; required with 'full'."
    )
    log_retention_days: int | None = Field(
        None,
        ge=1,
        le=3653,
        description="Days the cluster's log store keeps these logs; required with 'full'. "
        "Recorded on the objects for the log pipeline and auditors: Kubernetes itself "
        "does not keep container logs past the pod.",
    )
    fallback: Literal["error", "previous_version"] = Field(
        "error",
        description="What the gateway answers while its model server is down (G5): "
        "'error' (default) a JSON 503 with Retry-After; 'previous_version' sends the "
        "request to the previous version's Service (the version listed before it).",
    )
    gateway: GatewayConfig = Field(
        default_factory=GatewayConfig,
        description="The nginx gateway sidecar (rate limit, concurrency cap, cache); the "
        "service sets its upstream, paths, logging and fallback.",
    )
    gateway_image: str = Field(
        description="nginx image by digest that runs as non-root, e.g. "
        "nginxinc/nginx-unprivileged@sha256:... (mirrored to your registry)."
    )
    trusted_proxy_cidrs: tuple[str, ...] = Field(
        (),
        description="Ranges of the proxies in front (the Gateway implementation) whose "
        "X-Forwarded-For names the client; without them a client without an API key is "
        "rate limited as the proxy's address.",
    )
    parent_gateway: ParentGateway = Field(
        description="The Gateway the HTTPRoute attaches to; its listener must allow "
        "routes from the serving namespace (allowedRoutes)."
    )
    hostnames: tuple[str, ...] = Field((), description="Hostnames the route answers for.")
    ingress_from: tuple[IngressSource, ...] = Field(
        min_length=1,
        description="Who reaches the gateway port (S1): the Gateway implementation's pods "
        "or ranges. Required: the serve namespace denies all ingress by default.",
    )
    monitoring: Literal["prometheus-operator", "gke-managed-prometheus"] = Field(
        "prometheus-operator",
        description="The monitoring stack: PodMonitor + PrometheusRule, or GKE Managed "
        "Prometheus PodMonitoring + Rules.",
    )
    monitoring_labels: dict[str, str] = Field(
        default_factory=dict,
        description="Labels on the scrape and the rules that the Prometheus selects them by, "
        "e.g. {release: kube-prometheus-stack} (that chart's default selectors).",
    )
    monitoring_namespace: str | None = Field(
        None,
        pattern=_DNS_LABEL,
        description="Namespace of the scrapers, allowed to reach the metrics port; "
        "default: 'monitoring' (Prometheus Operator) or 'gmp-system' (GKE).",
    )
    latency_slo_ms: int = Field(
        gt=0,
        description="p99 latency objective; the latency alert fires above it (S5). Required.",
    )
    error_rate_percent: float = Field(
        1.0, gt=0, le=100, description="5xx share of requests that alerts (S5). Default 1%."
    )
    replica_hourly_cost_usd: float = Field(
        gt=0,
        description="What one replica's GPUs and node share cost per hour (see `aistack "
        "cost`): the cost per 1k requests recording rule divides by it (S5). Required.",
    )
    quality: QualityAlert = Field(description="The model-quality alert (G4), required.")
    alert_labels: dict[str, str] = Field(
        default_factory=dict, description="Extra labels on every alert, for routing."
    )

    @field_validator("image", "gateway_image")
    @classmethod
    def _images_by_digest(cls, image: str, info: Any) -> str:
        return _digest(image, info.field_name) or image

    @field_validator("cpu", "memory", "shared_memory")
    @classmethod
    def _quantity(cls, text: str) -> str:
        try:
            parse_quantity(text)
        except ValueError as error:
            raise ValueError(
                f"{text!r} is not a Kubernetes quantity. Fix: e.g. '8' or '64Gi'."
            ) from error
        return text

    @field_validator("hostnames")
    @classmethod
    def _hostnames(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            if not _HOSTNAME.match(name):
                raise ValueError(f"{name!r} is not a hostname. Fix: e.g. 'llm.example.com'.")
        return names

    @field_validator("trusted_proxy_cidrs")
    @classmethod
    def _networks(cls, cidrs: tuple[str, ...]) -> tuple[str, ...]:
        try:
            return tuple(str(ipaddress.ip_network(cidr, strict=True)) for cidr in cidrs)
        except ValueError as error:
            raise ValueError(f"{error}. Fix: give networks such as 10.129.0.0/23.") from error


# ---- the plan: what each version gets, decided before any object exists -----------------


@dataclass(frozen=True)
class VersionPlan:
    spec: ServingVersion
    slug: str
    #: Replicas the autoscaler keeps and allows; min 0 only for a KEDA standby at zero.
    min_replicas: int
    max_replicas: int
    #: The version this one falls back to (fallback 'previous_version'), or None.
    previous: str | None

    @property
    def surge(self) -> int:
        """Replicas a rolling update adds on top: one for a version taking traffic (its
        pods are removed only after the new ones are Available, maxUnavailable 0), none
        for a standby, which is replaced in place (maxUnavailable 1): it serves nothing
        until a rollback moves weight to it."""
        return 1 if self.spec.weight > 0 else 0


def plan_service(
    name: str, args: InferenceServiceArgs, team: TeamNamespace | None
) -> list[VersionPlan]:
    """One plan per version, or one ConfigError naming every problem."""
    problems = Problems()
    where = name
    versions = args.versions
    check_versions(
        versions,
        at=f"{where}.versions",
        item=lambda index: f"{where}.versions.{index}",
        prod=args.governance.environment == "prod",
        routes="a service",
        splits="the route's backendRefs split traffic by their weights",
        problems=problems,
    )
    if args.runtime == "tensorrt-llm":
        problems.add(
            f"{where}.runtime",
            "'tensorrt-llm' has no Prometheus metrics aistack's alerts and autoscaler are "
            "written for on Kubernetes.",
            "serve the engine through Triton's TensorRT-LLM backend and set runtime: triton.",
        )
    check_full_logging(f"{where}.", args, problems)
    scaling = args.autoscaling
    if scaling.kind == "keda" and scaling.prometheus_url is None:
        problems.add(
            f"{where}.autoscaling.prometheusUrl",
            "is required with kind 'keda': KEDA reads the queue length from Prometheus.",
            "give the Prometheus query URL, or use kind 'hpa' with hpaMetric.",
        )
    if scaling.kind == "hpa" and scaling.hpa_metric is None:
        problems.add(
            f"{where}.autoscaling.hpaMetric",
            "is required with kind 'hpa'.",
            "name the queue metric as your metrics adapter serves it.",
        )
    if args.fallback == "previous_version" and len(versions) < 2:
        problems.add(
            f"{where}.fallback",
            "'previous_version' needs a previous version to fall back to.",
            "list the previous version (weight 0), or use fallback 'error'.",
        )
    for index, source in enumerate(args.ingress_from):
        if (source.cidr is None) == (source.namespace is None):
            problems.add(
                f"{where}.ingressFrom.{index}",
                "needs exactly one of cidr and namespace.",
                "give the proxy's range, or the namespace of its pods.",
            )
        if source.pod_labels and source.namespace is None:
            problems.add(
                f"{where}.ingressFrom.{index}.podLabels",
                "selects pods, which only a namespace has.",
                "add namespace, or drop podLabels.",
            )
    if args.gateway.previous_upstream is not None or args.gateway.fallback != "error":
        problems.add(
            f"{where}.gateway.fallback",
            "is set by the service from its own fallback field.",
            "set fallback on the service, and leave gateway.fallback and "
            "gateway.previousUpstream unset.",
        )

    plans: list[VersionPlan] = []
    previous: str | None = None
    for index, version in enumerate(versions):
        min_replicas = version.min_replicas or args.min_replicas
        max_replicas = version.max_replicas or args.max_replicas
        if version.weight == 0:
            min_replicas = 1 if version.standby == "warm" else 0
        if min_replicas > max_replicas:
            problems.add(
                f"{where}.versions.{index}.minReplicas",
                f"{min_replicas} is above maxReplicas {max_replicas}.",
                "lower minReplicas or raise maxReplicas.",
            )
        plans.append(
            VersionPlan(
                spec=version,
                slug=version_slug(version.version),
                min_replicas=min_replicas,
                max_replicas=max_replicas,
                previous=previous if args.fallback == "previous_version" else None,
            )
        )
        previous = version.version

    if team is not None:
        _check_team(where, args, team, plans, problems)
    elif args.namespace is None:
        problems.add(
            f"{where}.namespace",
            "is required without team=.",
            "pass the serve TeamNamespace as team=, or name its namespace.",
        )
    problems.raise_if_any()
    return plans


def _check_weights_reachable(
    where: str, args: InferenceServiceArgs, team: TeamNamespace, account: Any, problems: Problems
) -> None:
    """The weights' init container reads `model.uri` as the pod's ServiceAccount: it needs
    a cloud identity (no keys are mounted, C6) and an egress rule through the namespace's
    default-deny to the storage API, or it fails and the pods stay in Init."""
    assert args.model is not None
    scheme = args.model.scheme
    if account.identity == "none":
        identity = "gke-workload-identity" if scheme == "gs" else "eks-pod-identity or eks-irsa"
        problems.add(
            f"{where}.serviceAccount",
            f"{args.service_account!r} has no cloud identity, so the weights' sync cannot "
            f"read {args.model.uri}.",
            f"give the TeamNamespace's ServiceAccount identity {identity}, with an account "
            "that may read the weights.",
        )
    if not any(443 in allowed.ports for allowed in team.args.allow_egress):
        problems.add(
            f"{where}.team",
            f"the serving namespace allows no egress on port 443 beyond DNS, so the "
            f"weights' sync cannot reach {args.model.uri} through its default-deny policy.",
            "add allowEgress to the TeamNamespace: the storage API's range (Google APIs "
            "199.36.153.8/30 through Private Google Access, or the VPC endpoints' subnet).",
        )


def _check_team(
    where: str,
    args: InferenceServiceArgs,
    team: TeamNamespace,
    plans: list[VersionPlan],
    problems: Problems,
) -> None:
    if team.args.tier != "serve":
        problems.add(
            f"{where}.team",
            f"is a {team.args.tier!r} TeamNamespace; serving shares no namespace with "
            "training (checklist S1).",
            "pass a TeamNamespace with tier: serve.",
        )
    accounts = {account.name: account for account in team.args.service_accounts}
    if args.service_account not in accounts:
        problems.add(
            f"{where}.serviceAccount",
            f"{args.service_account!r} is not a ServiceAccount of the serving namespace.",
            f"use one of {sorted(accounts) or 'none'}, or add it to the TeamNamespace.",
        )
    elif args.model is not None:
        _check_weights_reachable(where, args, team, accounts[args.service_account], problems)
    if team.args.gpu_resource != args.gpu_resource:
        problems.add(
            f"{where}.gpuResource",
            f"{args.gpu_resource!r} is not the namespace quota's {team.args.gpu_resource!r}.",
            "use the same resource name in both.",
        )
    # A `pulumi up` that changes the pod template rolls every version at once, each live
    # one with a surge replica: the quota must hold that too, or the surge pod is refused
    # (ResourceQuota: 403 exceeded quota), the rollout stalls at maxUnavailable 0 and the
    # up fails at the progress deadline.
    surge = sum(plan.surge for plan in plans)
    floor = (sum(plan.min_replicas for plan in plans) + surge) * args.gpus_per_replica
    # The most GPUs one moment needs: one version at its maximum, the others at their
    # minimum, while they roll.
    ceiling = (
        max(
            plan.max_replicas + sum(other.min_replicas for other in plans if other is not plan)
            for plan in plans
        )
        + surge
    ) * args.gpus_per_replica
    if floor > team.args.gpus:
        problems.add(
            f"{where}.minReplicas",
            f"the versions' minimum replicas, with one surge replica per live version for a "
            f"rolling update, need {floor} GPUs; the namespace's quota allows "
            f"{team.args.gpus}, so the first pod-template change would never finish.",
            "lower minReplicas, or raise the TeamNamespace's gpus.",
        )
    elif ceiling > team.args.gpus:
        problems.add(
            f"{where}.maxReplicas",
            f"one version at its maximum replicas, while the versions roll, needs {ceiling} "
            f"GPUs; the namespace's quota allows {team.args.gpus}, so the autoscaler's cap "
            "can never be reached and scale-ups or rollouts fail at the quota instead.",
            "lower maxReplicas per version, or raise the TeamNamespace's gpus.",
        )

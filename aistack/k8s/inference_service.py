"""`k8s.InferenceService`: a model served from its own namespace behind the aistack gateway,
one Deployment per version, weighted by a Gateway API HTTPRoute.

Per version (`<model>-<version>`, e.g. `chat-1-4-0`):

- a Deployment of the runtime (vLLM or Triton, by digest, S2) with the aistack nginx gateway
  as a sidecar: the same `serving_nginx_conf` an AWS serving node runs (per-client rate
  limit answering 429, the concurrency cap, the body-keyed cache, a JSON 503 or the previous
  version when the model server is down: S3, S4, G5), in a ConfigMap of its own; an init
  container that copies the version's weights from the bucket onto node-local disk with the
  ServiceAccount's cloud identity (no keys); probes that give the model `startupMinutes` to
  load, and `pulumi.com/timeoutSeconds` so `pulumi up` waits as long; Pod Security
  `restricted`; rolling updates that never drop below the running replicas;
- a Service, an autoscaler with an explicit maximum (the cost cap, S3) and a scale-down
  window that outlasts a model load: a KEDA ScaledObject on the runtime's queue length, or an
  HPA on the same metric through a metrics adapter; a PodDisruptionBudget.

Shared: the HTTPRoute whose backend weights are the versions' traffic shares (rollback is a
weight change, S6; every version explicit, S7), a NetworkPolicy that opens the gateway port
to `ingressFrom` and the metrics port to the scrapers only (the serve TeamNamespace denies
everything else, S1), the scrape (PodMonitor or GKE PodMonitoring) and alert rules on
p50/p90/p99 latency, the 5xx ratio, cost per 1k requests (S5) and model quality (G4).
Governance, the request-logging choice (G2) and each version's approver (G3) are recorded in
annotations. docs/components/k8s/inference-service.md has the rest.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_kubernetes as k8s

# Pod labels the serving pods carry (k8s.ImagePolicy requires the version on serving pods)
# and the sidecar's config directory, shared with the rules that read them.
from aistack.contracts.k8s import (
    GATEWAY_CONF_DIR,
    MODEL_NAME_LABEL,
    MODEL_VERSION_LABEL,
    parse_quantity,
)
from aistack.gateway import GatewayConfig
from aistack.gateway.serving import serving_nginx_conf
from aistack.k8s._base import annotations_for, child_opts, label_value, labels_for, stack_id
from aistack.k8s._inference_args import (
    InferenceServiceArgs,
    VersionPlan,
    plan_service,
    version_slug,
)
from aistack.k8s._inference_runtime import (
    MODEL_LABEL,
    RUNTIME_PORT,
    RUNTIMES,
    VERSION_LABEL,
    runtime_args,
)
from aistack.k8s._monitoring_crs import (
    AlertRule,
    GmpEndpoint,
    GmpLabelMapping,
    GmpRuleGroup,
    GmpRulesSpec,
    GmpTargetLabels,
    LabelSelector,
    NamespaceSelector,
    PodMetricsEndpoint,
    PodMonitoringSpec,
    PodMonitorSpec,
    PrometheusRuleSpec,
    RecordingRule,
    RuleGroup,
    render,
)

if TYPE_CHECKING:
    from aistack.k8s.team_namespace import TeamNamespace

__all__ = [
    "GATEWAY_CONF_DIR",
    "InferenceService",
    "InferenceServiceArgs",
    "MODEL_NAME_LABEL",
    "MODEL_VERSION_LABEL",
    "PINNED",
    "rollback_command",
]

TOKEN = "aistack:index:K8sInferenceService"
#: The upstream releases the custom resources are written against (CRDs kept under
#: aistack/scan/data/crds/).
PINNED = {"gateway-api": "v1.6.1", "keda": "v2.20.2"}
_SERVICE_PORT = 80
# A high UID no host account has (checkov CKV_K8S_40); every writable path is a volume.
_RUN_AS = 10001
_HOME = "/home/aistack"
_MODEL_ROOT = "/models"


class InferenceService(pulumi.ComponentResource):
    """A model's serving tier on Kubernetes: versions weighted by an HTTPRoute."""

    args: InferenceServiceArgs
    plans: list[VersionPlan]
    namespace: str
    deployments: dict[str, k8s.apps.v1.Deployment]
    services: dict[str, k8s.core.v1.Service]
    route: k8s.apiextensions.CustomResource
    route_name: str
    alert_names: list[str]

    def __init__(
        self,
        name: str,
        args: InferenceServiceArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        team: TeamNamespace | None = None,
    ) -> None:
        """`team`: the serve-tier k8s.TeamNamespace the service runs in; its namespace,
        ServiceAccount and GPU quota are checked against the versions' bounds."""

        def checks(args: InferenceServiceArgs) -> list[VersionPlan]:
            return plan_service(name, args, team)

        args, plans = InferenceServiceArgs.validate_with(args, checks, where=name)
        super().__init__(TOKEN, name, None, opts)
        self.args, self.plans = args, plans
        if args.namespace is not None:
            self.namespace = args.namespace
        else:  # plan_service made sure one of the two is given
            assert team is not None
            self.namespace = team.args.namespace or team.pulumi_resource_name
        after_team: list[pulumi.Resource] = [team] if team is not None else []
        model = args.model_name
        opts_in = child_opts(self, depends_on=after_team)
        governance = args.governance
        common_annotations = annotations_for(
            governance,
            **{
                "request-logging": args.request_logging,
                "fallback": args.fallback,
                # G4: what the quality alert watches, for whoever reads the object.
                "quality-alert": f"{args.quality.metric} {args.quality.alarm_when} "
                f"{args.quality.threshold:g} for {args.quality.for_minutes}m",
                **(
                    {"log-data-classification": args.log_data_classification}
                    if args.log_data_classification
                    else {}
                ),
                **(
                    {"log-retention-days": str(args.log_retention_days)}
                    if args.log_retention_days
                    else {}
                ),
            },
        )

        def meta(object_name: str, version: str | None = None, **annotations: str) -> Any:
            extra = {"model-name": model, **({"model-version": version} if version else {})}
            return {
                "name": object_name,
                "namespace": self.namespace,
                "labels": labels_for(governance, workload="inference", **extra),
                "annotations": {**common_annotations, **annotations},
            }

        self.deployments, self.services = {}, {}
        for plan in plans:
            version = plan.spec.version
            object_name = f"{model}-{plan.slug}"
            conf = gateway_conf(args, plan)
            config_map = k8s.core.v1.ConfigMap(
                f"{name}-{plan.slug}-gateway",
                metadata=meta(f"{object_name}-gateway", version),
                data={"nginx.conf": conf},
                opts=opts_in,
            )
            service = k8s.core.v1.Service(
                f"{name}-{plan.slug}",
                metadata=meta(object_name, version),
                spec=_untyped(
                    {
                        "type": "ClusterIP",
                        "selector": selector(model, version),
                        "ports": [
                            {
                                "name": "http",
                                "port": _SERVICE_PORT,
                                "targetPort": "http",
                                "protocol": "TCP",
                            }
                        ],
                    }
                ),
                opts=opts_in,
            )
            self.services[version] = service
            depends: list[pulumi.Resource] = [config_map]
            if plan.previous is not None:
                # nginx resolves the previous version's Service name when it starts.
                depends.append(self.services[plan.previous])
            deployment_annotations = {
                "aistack.dev/runtime": args.runtime,
                "aistack.dev/traffic-weight": str(plan.spec.weight),
                # What `aistack cost` prices a replica at, and whether the cache saves replicas.
                "aistack.dev/replica-hourly-cost-usd": f"{args.replica_hourly_cost_usd:g}",
                "aistack.dev/gateway-cache": "on" if args.gateway.cache_enabled else "off",
                "aistack.dev/standby": plan.spec.standby,
                # pulumi-kubernetes waits 10 minutes for a Deployment by default; pulling a
                # GPU image and loading a model takes longer (research gcp-k8s.md §D2).
                "pulumi.com/timeoutSeconds": str((args.startup_minutes + 10) * 60),
            }
            if plan.spec.approved_by:
                deployment_annotations["aistack.dev/approved-by"] = plan.spec.approved_by
            autoscaled = not (args.autoscaling.kind == "hpa" and plan.min_replicas == 0)
            spec = deployment_spec(args, plan, hashlib.sha256(conf.encode()).hexdigest())
            if not autoscaled:
                # An HPA cannot keep 0 replicas (HPAScaleToZero is alpha): a standby at zero
                # under the HPA is a Deployment of 0 until a rollback gives it weight.
                spec["replicas"] = 0
            deployment = k8s.apps.v1.Deployment(
                f"{name}-{plan.slug}",
                metadata=meta(object_name, version, **deployment_annotations),
                spec=_untyped(spec),
                opts=child_opts(self, depends_on=[*after_team, *depends]),
            )
            self.deployments[version] = deployment
            if autoscaled:
                self._autoscaler(name, object_name, plan, meta(object_name, version), deployment)
            k8s.policy.v1.PodDisruptionBudget(
                f"{name}-{plan.slug}-pdb",
                metadata=meta(object_name, version),
                spec=_untyped(
                    {
                        # One replica at a time may be evicted (node upgrades, consolidation);
                        # an unready replica (still loading) never blocks a drain.
                        "maxUnavailable": 1,
                        "selector": {"matchLabels": selector(model, version)},
                        "unhealthyPodEvictionPolicy": "AlwaysAllow",
                    }
                ),
                opts=opts_in,
            )

        self.route_name = model
        self.route = k8s.apiextensions.CustomResource(
            f"{name}-route",
            api_version="gateway.networking.k8s.io/v1",
            kind="HTTPRoute",
            metadata=meta(model),
            spec=route_spec(args, plans),
            opts=child_opts(self, depends_on=[*after_team, *self.services.values()]),
        )
        k8s.networking.v1.NetworkPolicy(
            f"{name}-ingress",
            metadata=meta(
                f"{model}-ingress",
                purpose="; ".join(source.purpose for source in args.ingress_from)
                + "; metrics to the scrapers",
            ),
            spec=_untyped(ingress_policy(args)),
            opts=opts_in,
        )

        def monitored(metadata: dict[str, Any]) -> dict[str, Any]:
            # The Prometheus picks monitors and rules by label (its podMonitorSelector...).
            return {**metadata, "labels": {**metadata["labels"], **args.monitoring_labels}}

        scrape_api, scrape_kind, scrape_spec = scrape(args, self.namespace)
        k8s.apiextensions.CustomResource(
            f"{name}-scrape",
            api_version=scrape_api,
            kind=scrape_kind,
            metadata=monitored(meta(f"{model}-runtime")),
            spec=scrape_spec,
            opts=opts_in,
        )
        rules = alert_rules(args, self.namespace)
        self.alert_names = [rule.alert for rule in rules if isinstance(rule, AlertRule)]
        rules_api, rules_kind, rules_spec = rules_object(args, rules)
        k8s.apiextensions.CustomResource(
            f"{name}-rules",
            api_version=rules_api,
            kind=rules_kind,
            metadata=monitored(meta(f"{model}-serving-alerts")),
            spec=rules_spec,
            opts=opts_in,
        )
        self.register_outputs({"route_name": self.route_name, "alert_names": self.alert_names})

    def rollback_command(self, to_version: str) -> str:
        """The emergency rollback: all traffic to `to_version` now, without `pulumi up`.
        Afterwards set the same weights in the stack's config, or the next `pulumi up`
        puts the old ones back."""
        return rollback_command(self.args, self.namespace, to_version)

    def _autoscaler(
        self,
        name: str,
        object_name: str,
        plan: VersionPlan,
        metadata: Any,
        deployment: k8s.apps.v1.Deployment,
    ) -> None:
        args = self.args
        scaling = args.autoscaling
        behavior = {
            "scaleDown": {
                "stabilizationWindowSeconds": scaling.scale_down_window_seconds,
                "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}],
            },
            "scaleUp": {
                "stabilizationWindowSeconds": 0,
                "policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}],
            },
        }
        opts = child_opts(self, depends_on=[deployment])
        if scaling.kind == "hpa":
            k8s.autoscaling.v2.HorizontalPodAutoscaler(
                f"{name}-{plan.slug}-hpa",
                metadata=metadata,
                spec=_untyped(
                    {
                        "scaleTargetRef": {
                            "apiVersion": "apps/v1",
                            "kind": "Deployment",
                            "name": object_name,
                        },
                        "minReplicas": plan.min_replicas,
                        "maxReplicas": plan.max_replicas,
                        "metrics": [
                            {
                                "type": "Pods",
                                "pods": {
                                    "metric": {"name": scaling.hpa_metric},
                                    "target": {
                                        "type": "AverageValue",
                                        "averageValue": str(scaling.target_queue_per_replica),
                                    },
                                },
                            }
                        ],
                        "behavior": behavior,
                    }
                ),
                opts=opts,
            )
            return
        query = (
            "sum("
            + RUNTIMES[args.runtime].queue.format(
                selector=version_selector(args, self.namespace, plan.spec.version)
            )
            + ")"
        )
        k8s.apiextensions.CustomResource(
            f"{name}-{plan.slug}-scaler",
            api_version="keda.sh/v1alpha1",
            kind="ScaledObject",
            metadata=metadata,
            spec={
                "scaleTargetRef": {"name": object_name},
                "pollingInterval": scaling.polling_interval_seconds,
                # Only scaling to zero waits for cooldownPeriod; the HPA's window does the rest.
                "cooldownPeriod": scaling.scale_down_window_seconds,
                "minReplicaCount": plan.min_replicas,
                # KEDA's default maximum is 100 (keda.sh ScaledObject spec): always explicit.
                "maxReplicaCount": plan.max_replicas,
                "advanced": {"horizontalPodAutoscalerConfig": {"behavior": behavior}},
                "triggers": [
                    {
                        "type": "prometheus",
                        "metadata": {
                            "serverAddress": scaling.prometheus_url,
                            "query": query,
                            "threshold": str(scaling.target_queue_per_replica),
                        },
                    }
                ],
            },
            opts=opts,
        )


# ---- what each object holds (pure functions of the Args, for tests and docs) --------------


def _untyped(document: dict[str, Any]) -> Any:
    """A plain dict where pulumi-kubernetes types its TypedDicts: the shapes are checked by
    kubernetes-validate against the API's schemas (tests/k8s/test_inference_service.py)."""
    return document


def selector(model: str, version: str) -> dict[str, str]:
    return {MODEL_NAME_LABEL: model, MODEL_VERSION_LABEL: label_value(version)}


def version_selector(args: InferenceServiceArgs, namespace: str, version: str) -> str:
    return (
        f'namespace="{namespace}",{MODEL_LABEL}="{args.model_name}",'
        f'{VERSION_LABEL}="{label_value(version)}"'
    )


def gateway_conf(args: InferenceServiceArgs, plan: VersionPlan) -> str:
    """The sidecar's nginx.conf: `args.gateway` with the pod's upstream, writable paths and
    stdout logging, and the previous version's Service as fallback."""
    settings = args.gateway.model_dump(exclude_unset=True)
    # 'auto' is one worker per CPU of the node, not of the container's 2-CPU limit.
    settings.setdefault("worker_processes", 2)
    settings.update(
        listen_address="0.0.0.0",  # noqa: S104 - the pod's own address; NetworkPolicy guards it
        upstream=f"127.0.0.1:{RUNTIME_PORT}",
        run_dir="/run/aistack-gateway",
        temp_dir="/var/lib/aistack-gateway/tmp",
        cache_dir="/var/cache/aistack-gateway",
        log_dir=None,
        worker_user=None,
        fallback="previous_version" if plan.previous else "error",
        previous_upstream=(
            f"{args.model_name}-{version_slug(plan.previous)}:{_SERVICE_PORT}"
            if plan.previous
            else None
        ),
    )
    gateway = GatewayConfig.parse(settings)
    return serving_nginx_conf(
        gateway, request_logging=args.request_logging, trusted_proxies=args.trusted_proxy_cidrs
    )


def _model_path(args: InferenceServiceArgs) -> str:
    return args.model_path or f"{_MODEL_ROOT}/{args.model_name}"


def _restricted(read_only: bool = True) -> dict[str, Any]:
    return {
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "readOnlyRootFilesystem": read_only,
        "runAsNonRoot": True,
        "runAsUser": _RUN_AS,
        "runAsGroup": _RUN_AS,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _sync_command(args: InferenceServiceArgs, version: str) -> list[str]:
    source = args.model  # only called with a model source
    assert source is not None
    origin = f"{source.uri}/{args.model_name}/{version}"
    target = _model_path(args)
    if source.scheme == "s3":
        return ["aws", "s3", "sync", "--only-show-errors", "--no-progress", f"{origin}/", target]
    return ["gcloud", "storage", "rsync", "--recursive", origin, target]


def deployment_spec(args: InferenceServiceArgs, plan: VersionPlan, conf_sha: str) -> dict[str, Any]:
    """The Deployment's spec (without replicas: the autoscaler owns them)."""
    runtime = RUNTIMES[args.runtime]
    model, version = args.model_name, plan.spec.version
    labels = {**labels_for(args.governance, workload="inference"), **selector(model, version)}
    gpus = {args.gpu_resource: str(args.gpus_per_replica)}
    gateway = args.gateway
    disk = f"{_gib(args.model.cache_size) + 2}Gi" if args.model else "2Gi"
    mounts: list[dict[str, Any]] = [
        {"name": "tmp", "mountPath": "/tmp"},  # noqa: S108 - a volume
        {"name": "home", "mountPath": _HOME},
        {"name": "dshm", "mountPath": "/dev/shm"},
    ]
    volumes: list[dict[str, Any]] = [
        {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}},
        {"name": "home", "emptyDir": {"sizeLimit": "1Gi"}},
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": args.shared_memory}},
        {"name": "gateway-conf", "configMap": {"name": f"{model}-{plan.slug}-gateway"}},
        {"name": "gateway-run", "emptyDir": {"medium": "Memory", "sizeLimit": "16Mi"}},
        {"name": "gateway-tmp", "emptyDir": {"sizeLimit": f"{gateway.max_body_kb * 64}Ki"}},
        # Prompts, answers and client keys: in memory, never on the node's disk.
        {
            "name": "gateway-cache",
            "emptyDir": {"medium": "Memory", "sizeLimit": f"{gateway.cache_max_size_mb + 16}Mi"},
        },
    ]
    init_containers: list[dict[str, Any]] = []
    if args.model is not None:
        volumes.append({"name": "model", "emptyDir": {"sizeLimit": args.model.cache_size}})
        mounts.append({"name": "model", "mountPath": _model_path(args), "readOnly": True})
        init_containers.append(
            {
                "name": "model-sync",
                "image": args.model.sync_image,
                "imagePullPolicy": "IfNotPresent",
                "command": _sync_command(args, version),
                "env": [
                    {"name": "HOME", "value": "/tmp"},  # noqa: S108 - a volume
                    {"name": "CLOUDSDK_CONFIG", "value": "/tmp/gcloud"},  # noqa: S108
                ],
                "resources": {
                    "requests": {"cpu": "1", "memory": "1Gi"},
                    "limits": {"cpu": "2", "memory": "1Gi"},
                },
                "securityContext": _restricted(),
                "volumeMounts": [
                    {"name": "model", "mountPath": _model_path(args)},
                    {"name": "tmp", "mountPath": "/tmp"},  # noqa: S108 - a volume
                ],
            }
        )
    probe = {"httpGet": {"path": runtime.health_path, "port": "runtime"}, "timeoutSeconds": 5}
    runtime_ports = [{"name": "runtime", "containerPort": RUNTIME_PORT, "protocol": "TCP"}]
    if runtime.metrics_port != RUNTIME_PORT:
        runtime_ports.append(
            {"name": "metrics", "containerPort": runtime.metrics_port, "protocol": "TCP"}
        )
    runtime_container = {
        "name": "runtime",
        "image": args.image,
        "imagePullPolicy": "IfNotPresent",
        "args": [
            *runtime_args(args.runtime, _model_path(args), model, args.gpus_per_replica),
            *args.runtime_args,
        ],
        "env": [
            {"name": "AISTACK_MODEL_NAME", "value": model},
            {"name": "AISTACK_MODEL_VERSION", "value": version},
            {"name": "HOME", "value": _HOME},
        ],
        "ports": runtime_ports,
        "resources": {
            "requests": {
                "cpu": args.cpu,
                "memory": args.memory,
                "ephemeral-storage": disk,
                **gpus,
            },
            # CPU limited to the request too: a noisy neighbour cannot starve the tokenizer,
            # and the replica's cost is what it asked for.
            "limits": {"cpu": args.cpu, "memory": args.memory, **gpus},
        },
        # The model gets startupMinutes to load; after that a hung server is restarted and
        # a busy one only leaves the Service's endpoints.
        "startupProbe": {
            **probe,
            "periodSeconds": 10,
            "failureThreshold": args.startup_minutes * 6,
        },
        "readinessProbe": {**probe, "periodSeconds": 10, "failureThreshold": 3},
        "livenessProbe": {**probe, "periodSeconds": 30, "failureThreshold": 4},
        "securityContext": _restricted(),
        "volumeMounts": mounts,
    }
    gateway_probe = {
        "httpGet": {"path": gateway.health_path, "port": "http"},
        "periodSeconds": 10,
        "timeoutSeconds": 2,
    }
    gateway_container = {
        "name": "gateway",
        "image": args.gateway_image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["nginx", "-c", f"{GATEWAY_CONF_DIR}/nginx.conf", "-g", "daemon off;"],
        "ports": [{"name": "http", "containerPort": gateway.listen_port, "protocol": "TCP"}],
        "resources": {
            "requests": {"cpu": "500m", "memory": f"{256 + gateway.cache_max_size_mb}Mi"},
            # Two cores hold thousands of proxied connections; nginx needs no more.
            # The in-memory cache counts against the pod's memory.
            "limits": {"cpu": "2", "memory": f"{256 + gateway.cache_max_size_mb}Mi"},
        },
        "readinessProbe": gateway_probe,
        "livenessProbe": gateway_probe,
        # Let the endpoints controller take the pod out of the Service before nginx stops.
        "lifecycle": {"preStop": {"exec": {"command": ["/bin/sh", "-c", "sleep 10"]}}},
        "securityContext": _restricted(),
        "volumeMounts": [
            {"name": "gateway-conf", "mountPath": GATEWAY_CONF_DIR, "readOnly": True},
            {"name": "gateway-run", "mountPath": "/run/aistack-gateway"},
            {"name": "gateway-tmp", "mountPath": "/var/lib/aistack-gateway"},
            {"name": "gateway-cache", "mountPath": "/var/cache/aistack-gateway"},
        ],
    }
    pod_spec: dict[str, Any] = {
        "serviceAccountName": args.service_account,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 60,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": _RUN_AS,
            "runAsGroup": _RUN_AS,
            "fsGroup": _RUN_AS,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [runtime_container, gateway_container],
        "volumes": volumes,
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": selector(model, version)},
            }
        ],
    }
    if init_containers:
        pod_spec["initContainers"] = init_containers
    if args.node_labels:
        pod_spec["nodeSelector"] = dict(args.node_labels)
    if args.tolerations:
        pod_spec["tolerations"] = [dict(t) for t in args.tolerations]
    pod_annotations = {
        # A changed gateway config rolls the pods (a ConfigMap change alone would not).
        "aistack.dev/gateway-config-sha256": conf_sha,
        "aistack.dev/request-logging": args.request_logging,
    }
    if plan.spec.approved_by:
        pod_annotations["aistack.dev/approved-by"] = plan.spec.approved_by
    return {
        "selector": {"matchLabels": selector(model, version)},
        "strategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
        },
        "revisionHistoryLimit": 5,
        "template": {
            "metadata": {"labels": labels, "annotations": pod_annotations},
            "spec": pod_spec,
        },
    }


def route_spec(args: InferenceServiceArgs, plans: list[VersionPlan]) -> dict[str, Any]:
    """The HTTPRoute: one rule, the versions' Services as backends with their weights."""
    parent = args.parent_gateway
    parent_ref: dict[str, Any] = {
        "group": "gateway.networking.k8s.io",
        "kind": "Gateway",
        "name": parent.name,
        "namespace": parent.namespace,
    }
    if parent.section_name:
        parent_ref["sectionName"] = parent.section_name
    gateway = args.gateway
    tries = 2 if args.fallback == "previous_version" else 1
    timeout = (
        tries * (gateway.upstream_timeout_seconds + gateway.upstream_connect_timeout_seconds) + 10
    )
    spec: dict[str, Any] = {
        "parentRefs": [parent_ref],
        "rules": [
            {
                "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                "backendRefs": [
                    {
                        "group": "",
                        "kind": "Service",
                        "name": f"{args.model_name}-{plan.slug}",
                        "port": _SERVICE_PORT,
                        "weight": plan.spec.weight,
                    }
                    for plan in plans
                ],
                # Generation takes long; the implementation's default (often 15 s) would cut
                # answers the gateway still waits for.
                "timeouts": {"request": f"{timeout}s"},
            }
        ],
    }
    if args.hostnames:
        spec["hostnames"] = list(args.hostnames)
    return spec


def rollback_command(args: InferenceServiceArgs, namespace: str, to_version: str) -> str:
    """`kubectl patch` of the HTTPRoute's weights: 100 to `to_version`, 0 to the rest."""
    names = [v.version for v in args.versions]
    if to_version not in names:
        raise ValueError(f"{to_version!r} is not one of the service's versions {names}")
    patch = [
        {
            "op": "replace",
            "path": f"/spec/rules/0/backendRefs/{index}/weight",
            "value": 100 if version == to_version else 0,
        }
        for index, version in enumerate(names)
    ]
    return (
        f"kubectl --namespace {shlex.quote(namespace)} patch httproute "
        f"{shlex.quote(args.model_name)} --type=json "
        f"--patch {shlex.quote(json.dumps(patch, separators=(',', ':')))}"
    )


def ingress_policy(args: InferenceServiceArgs) -> dict[str, Any]:
    peers: list[dict[str, Any]] = []
    for source in args.ingress_from:
        if source.cidr:
            peers.append({"ipBlock": {"cidr": source.cidr}})
        else:
            peer: dict[str, Any] = {
                "namespaceSelector": {
                    "matchLabels": {"kubernetes.io/metadata.name": source.namespace}
                }
            }
            if source.pod_labels:
                peer["podSelector"] = {"matchLabels": dict(source.pod_labels)}
            peers.append(peer)
    runtime = RUNTIMES[args.runtime]
    return {
        "podSelector": {"matchLabels": {MODEL_NAME_LABEL: args.model_name}},
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": peers,
                "ports": [{"protocol": "TCP", "port": args.gateway.listen_port}],
            },
            {
                "from": [
                    {
                        "namespaceSelector": {
                            "matchLabels": {
                                "kubernetes.io/metadata.name": _monitoring_namespace(args)
                            }
                        }
                    }
                ],
                "ports": [{"protocol": "TCP", "port": runtime.metrics_port}],
            },
        ],
    }


def _monitoring_namespace(args: InferenceServiceArgs) -> str:
    if args.monitoring_namespace:
        return args.monitoring_namespace
    return "gmp-system" if args.monitoring == "gke-managed-prometheus" else "monitoring"


def scrape(args: InferenceServiceArgs, namespace: str) -> tuple[str, str, dict[str, Any]]:
    """The runtime's metrics scraped with the model and version as series labels."""
    port = "metrics" if RUNTIMES[args.runtime].metrics_port != RUNTIME_PORT else "runtime"
    select = LabelSelector(match_labels={MODEL_NAME_LABEL: args.model_name})
    if args.monitoring == "gke-managed-prometheus":
        spec = PodMonitoringSpec(
            selector=select,
            endpoints=[GmpEndpoint(port=port, interval="30s")],
            target_labels=GmpTargetLabels(
                metadata=["pod", "container"],
                from_pod=[
                    GmpLabelMapping(from_=MODEL_NAME_LABEL, to=MODEL_LABEL),
                    GmpLabelMapping(from_=MODEL_VERSION_LABEL, to=VERSION_LABEL),
                ],
            ),
        )
        return "monitoring.googleapis.com/v1", "PodMonitoring", render(spec)
    pod_spec = PodMonitorSpec(
        selector=select,
        namespace_selector=NamespaceSelector(match_names=[namespace]),
        pod_metrics_endpoints=[
            PodMetricsEndpoint(port=port, interval="30s", scrape_timeout="10s", honor_labels=False)
        ],
        # Prometheus sanitises the names: aistack.dev/model-version -> aistack_dev_model_version.
        pod_target_labels=[MODEL_NAME_LABEL, MODEL_VERSION_LABEL],
    )
    return "monitoring.coreos.com/v1", "PodMonitor", render(pod_spec)


def alert_rules(args: InferenceServiceArgs, namespace: str) -> list[AlertRule | RecordingRule]:
    """Recording rules per version (latency quantiles, request and error rates, cost per 1k
    requests) and the alerts on them (S5) and on model quality (G4)."""
    runtime = RUNTIMES[args.runtime]
    governance = args.governance
    common = {
        "aistack_stack": stack_id(),
        "aistack_owner": governance.owner,
        "aistack_environment": governance.environment,
        "model": args.model_name,
        **args.alert_labels,
    }
    rules: list[AlertRule | RecordingRule] = []
    for version in args.versions:
        where = version_selector(args, namespace, version.version)
        labels = {"model": args.model_name, "model_version": version.version}
        for q, name in (("0.5", "p50"), ("0.9", "p90"), ("0.99", "p99")):
            rules.append(
                RecordingRule(
                    record=f"aistack:serving_latency_seconds:{name}",
                    expr=runtime.latency.format(selector=where, q=q),
                    labels=labels,
                )
            )
        rules.append(
            RecordingRule(
                record="aistack:serving_requests:rate5m",
                expr=runtime.requests.format(selector=where),
                labels=labels,
            )
        )
        rules.append(
            RecordingRule(
                record="aistack:serving_errors:rate5m",
                expr=runtime.errors.format(selector=where),
                labels=labels,
            )
        )
        replicas = f"count(up{{{where}}} == 1)"
        rules.append(
            RecordingRule(
                record="aistack:serving_cost_per_1k_requests:usd",
                # Replicas x hourly cost, over requests per hour in thousands.
                expr=f"({replicas} * {args.replica_hourly_cost_usd}) / "
                f"(({runtime.requests.format(selector=where)}) * 3600 / 1000)",
                labels=labels,
            )
        )
    model = f'model_version!="",model="{args.model_name}"'
    slo = args.latency_slo_ms / 1000
    error_ratio = args.error_rate_percent / 100
    below = "<" if args.quality.alarm_when == "below" else ">"

    def alert(name: str, expr: str, for_: str, checklist: str, summary: str, why: str) -> None:
        rules.append(
            AlertRule(
                alert=name,
                expr=expr,
                for_=for_,
                labels={
                    **common,
                    "severity": "page" if checklist == "S5" else "ticket",
                    "aistack_alert": label_value(name),
                    "aistack_checklist": checklist,
                },
                annotations={"summary": summary, "description": why},
            )
        )

    alert(
        "AistackServingLatencyHigh",
        f"aistack:serving_latency_seconds:p99{{{model}}} > {slo:g}",
        "10m",
        "S5",
        f"{args.model_name} {{{{ $labels.model_version }}}}: p99 latency above the "
        f"{args.latency_slo_ms} ms objective.",
        "Generation is slower than promised: look at the queue length, the replicas "
        "(at their maximum?) and the GPU utilisation.",
    )
    alert(
        "AistackServingErrorsHigh",
        f"(aistack:serving_errors:rate5m{{{model}}} / aistack:serving_requests:rate5m{{{model}}})"
        f" > {error_ratio:g}",
        "10m",
        "S5",
        f"{args.model_name} {{{{ $labels.model_version }}}}: more than "
        f"{args.error_rate_percent:g}% of requests fail with 5xx.",
        "A failing version: roll back by weight (the service's rollback command) and read "
        "the runtime's logs.",
    )
    quality = args.quality
    quality_expr = (
        f'{quality.metric}{{model="{args.model_name}"}} {below} {quality.threshold:g}'
        f' or absent({quality.metric}{{model="{args.model_name}"}})'
    )
    alert(
        "AistackModelQualityLow",
        quality_expr,
        f"{quality.for_minutes}m",
        "G4",
        f"{args.model_name}: {quality.metric} is {quality.alarm_when} {quality.threshold:g}, "
        "or nobody publishes it.",
        "The model's answers are worse than the team's threshold (or unmeasured): roll back "
        "by weight and check the evaluation job.",
    )
    return rules


def rules_object(
    args: InferenceServiceArgs, rules: list[AlertRule | RecordingRule]
) -> tuple[str, str, dict[str, Any]]:
    if args.monitoring == "gke-managed-prometheus":
        # Rules (namespaced): the serving metrics live in the serving namespace only.
        group = GmpRuleGroup(name=f"aistack-serving-{args.model_name}", interval="1m", rules=rules)
        return "monitoring.googleapis.com/v1", "Rules", render(GmpRulesSpec(groups=[group]))
    prom_group = RuleGroup(name=f"aistack-serving-{args.model_name}", interval="1m", rules=rules)
    return (
        "monitoring.coreos.com/v1",
        "PrometheusRule",
        render(PrometheusRuleSpec(groups=[prom_group])),
    )


def _gib(quantity: str) -> int:
    return max(1, int(parse_quantity(quantity) / (1024**3)))

"""What each object of `k8s.InferenceService` holds: pure functions of the Args (and the
version plan), for the component, the tests and the docs.

The Deployment of a version (the runtime, the gateway sidecar, the weights' init container,
Pod Security `restricted`), the HTTPRoute's weights, the ingress NetworkPolicy, the scrape
and the alert and recording rules (S5, G4), and the rollback command. Nothing here loads
pulumi-kubernetes; kubernetes-validate checks the shapes against the API's schemas
(tests/k8s/test_inference_service.py).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

# Pod labels the serving pods carry (k8s.ImagePolicy requires the version on serving pods)
# and the sidecar's config directory, shared with the rules that read them.
from aistack.contracts.k8s import (
    GATEWAY_CONF_DIR,
    MODEL_NAME_LABEL,
    MODEL_VERSION_LABEL,
    REQUEST_LOGGING_ANNOTATION,
    parse_quantity,
)
from aistack.gateway import GatewayConfig
from aistack.gateway.serving import serving_nginx_conf
from aistack.k8s._base import label_value, labels_for, stack_id
from aistack.k8s._inference_args import InferenceServiceArgs, VersionPlan, version_slug
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

__all__ = [
    "alert_rules",
    "backend_policy_spec",
    "health_check_policy_spec",
    "deployment_spec",
    "gateway_conf",
    "ingress_policy",
    "rollback_command",
    "request_timeout_seconds",
    "route_spec",
    "rules_object",
    "scrape",
    "selector",
    "version_selector",
]

_SERVICE_PORT = 80
# A high UID no host account has (checkov CKV_K8S_40); every writable path is a volume.
_RUN_AS = 10001
_HOME = "/home/aistack"
_MODEL_ROOT = "/models"
_GATEWAY_TEMP = "/var/lib/aistack-gateway"


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
        # The emptyDir's mount point itself: nginx makes each *_temp_path below it with one
        # mkdir(), so a directory between the two would not exist and nginx would not start.
        temp_dir=_GATEWAY_TEMP,
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


def _sync_environment(scheme: str) -> list[dict[str, str]]:
    """A writable HOME (the root is read-only) and, for gcloud only, its config directory."""
    env = [{"name": "HOME", "value": "/tmp"}]  # noqa: S108 - a volume
    if scheme == "gs":
        env.append({"name": "CLOUDSDK_CONFIG", "value": "/tmp/gcloud"})  # noqa: S108
    return env


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
                "env": _sync_environment(args.model.scheme),
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
            {"name": "gateway-tmp", "mountPath": _GATEWAY_TEMP},
            {"name": "gateway-cache", "mountPath": "/var/cache/aistack-gateway"},
        ],
    }
    pod_spec: dict[str, Any] = {
        "serviceAccountName": args.service_account,
        **({"priorityClassName": args.priority_class_name} if args.priority_class_name else {}),
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
        REQUEST_LOGGING_ANNOTATION: args.request_logging,
    }
    if plan.spec.approved_by:
        pod_annotations["aistack.dev/approved-by"] = plan.spec.approved_by
    return {
        "selector": {"matchLabels": selector(model, version)},
        "strategy": {
            "type": "RollingUpdate",
            # A live version keeps serving while it rolls (a surge replica, counted in the
            # quota check); a standby is replaced in place, needing no GPU beyond its own.
            "rollingUpdate": {"maxUnavailable": 1 - plan.surge, "maxSurge": plan.surge},
        },
        "revisionHistoryLimit": 5,
        "template": {
            "metadata": {"labels": labels, "annotations": pod_annotations},
            "spec": pod_spec,
        },
    }


def health_check_policy_spec(args: InferenceServiceArgs, service: str) -> dict[str, Any]:
    """GKE's HealthCheckPolicy for a version's Service (networking.gke.io/v1, CRD of
    GoogleCloudPlatform/gke-gateway-api v1.4.0): the load balancer probes the gateway
    sidecar's health path on its port, as the readiness probe does. Without it GKE probes
    HTTP GET / on the serving port ("If not specified or left empty, a default value of '/'
    is used", `httpHealthCheck.requestPath`), which nginx passes to the model, which answers
    404: every NEG endpoint would be unhealthy and the Gateway would answer 503."""
    gateway = args.gateway
    return {
        "default": {
            "checkIntervalSec": 10,
            "timeoutSec": 2,  # the readiness probe's
            "healthyThreshold": 1,
            "unhealthyThreshold": 3,
            "config": {
                "type": "HTTP",
                "httpHealthCheck": {
                    "portSpecification": "USE_FIXED_PORT",
                    "port": gateway.listen_port,
                    "requestPath": gateway.health_path,
                },
            },
        },
        "targetRef": {"group": "", "kind": "Service", "name": service},
    }


def request_timeout_seconds(args: InferenceServiceArgs) -> int:
    """How long the route lets a request take: longer than the gateway's own wait for the
    model (twice with a fallback to the previous version), so the gateway answers first."""
    gateway = args.gateway
    tries = 2 if args.fallback == "previous_version" else 1
    wait = gateway.upstream_timeout_seconds + gateway.upstream_connect_timeout_seconds
    return int(tries * wait + 10)


def backend_policy_spec(args: InferenceServiceArgs, service: str) -> dict[str, Any]:
    """GKE's GCPBackendPolicy for a version's Service (networking.gke.io/v1, gke-gateway-api
    v1.4.0): the load balancer's backend timeout, which is 30 s unless set ("If the field is
    omitted, a default value (30s) will be used", `timeoutSec`), as long as the route's
    request timeout, so a long generation is not cut at 30 s whether or not the GKE class
    applies the HTTPRoute's `timeouts.request`."""
    return {
        "default": {"timeoutSec": request_timeout_seconds(args)},
        "targetRef": {"group": "", "kind": "Service", "name": service},
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
    timeout = request_timeout_seconds(args)
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

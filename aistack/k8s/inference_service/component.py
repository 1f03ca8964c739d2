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
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_kubernetes as k8s

from aistack.contracts.k8s import GATEWAY_CLASS_ANNOTATION
from aistack.k8s._base import annotations_for, child_opts, labels_for
from aistack.k8s._inference_args import InferenceServiceArgs, VersionPlan, plan_service
from aistack.k8s._inference_runtime import RUNTIMES
from aistack.k8s._monitoring_crs import AlertRule
from aistack.k8s.inference_service.specs import (
    _SERVICE_PORT,
    _untyped,
    alert_rules,
    backend_policy_spec,
    deployment_spec,
    gateway_conf,
    health_check_policy_spec,
    ingress_policy,
    rollback_command,
    route_spec,
    rules_object,
    scrape,
    selector,
    version_selector,
)

if TYPE_CHECKING:
    from aistack.k8s.team_namespace import TeamNamespace

__all__ = ["PINNED", "TOKEN", "InferenceService"]

TOKEN = "aistack:index:K8sInferenceService"
#: The upstream releases the custom resources are written against (CRDs kept under
#: aistack/scan/data/crds/).
PINNED = {"gateway-api": "v1.6.1", "keda": "v2.20.2"}


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
        self._name = name
        if args.namespace is not None:
            self.namespace = args.namespace
        else:  # plan_service made sure one of the two is given
            assert team is not None
            self.namespace = team.args.namespace or team.pulumi_resource_name
        # Everything waits for the team's namespace, quota and ServiceAccount.
        self._after_team: list[pulumi.Resource] = [team] if team is not None else []
        self._common_annotations = self._governance_annotations()
        self.deployments, self.services = {}, {}
        for plan in plans:
            self._serve_version(plan)
        self._route()
        self._ingress()
        self._monitoring()
        self.register_outputs({"route_name": self.route_name, "alert_names": self.alert_names})

    def rollback_command(self, to_version: str) -> str:
        """The emergency rollback: all traffic to `to_version` now, without `pulumi up`.
        Afterwards set the same weights in the stack's config, or the next `pulumi up`
        puts the old ones back."""
        return rollback_command(self.args, self.namespace, to_version)

    # ---- the steps, in the order they run --------------------------------------------------

    def _governance_annotations(self) -> dict[str, str]:
        """What every object records for whoever reads it: governance, the request-logging
        choice (G2), the fallback (G5) and what the quality alert watches (G4)."""
        args = self.args
        return annotations_for(
            args.governance,
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

    def _meta(self, object_name: str, version: str | None = None, **annotations: str) -> Any:
        extra = {
            "model-name": self.args.model_name,
            **({"model-version": version} if version else {}),
        }
        return {
            "name": object_name,
            "namespace": self.namespace,
            "labels": labels_for(self.args.governance, workload="inference", **extra),
            "annotations": {**self._common_annotations, **annotations},
        }

    def _serve_version(self, plan: VersionPlan) -> None:
        """One version: its gateway config, Service, Deployment, autoscaler and disruption
        budget. Versions come in order, so a previous version's Service already exists."""
        args, name, meta = self.args, self._name, self._meta
        model, version = args.model_name, plan.spec.version
        opts_in = child_opts(self, depends_on=self._after_team)
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
        if args.parent_gateway.is_gke:
            k8s.apiextensions.CustomResource(
                f"{name}-{plan.slug}-health-check",
                api_version="networking.gke.io/v1",
                kind="HealthCheckPolicy",
                metadata=meta(object_name, version),
                spec=health_check_policy_spec(args, object_name),
                opts=child_opts(self, depends_on=[*self._after_team, service]),
            )
            k8s.apiextensions.CustomResource(
                f"{name}-{plan.slug}-backend-policy",
                api_version="networking.gke.io/v1",
                kind="GCPBackendPolicy",
                metadata=meta(object_name, version),
                spec=backend_policy_spec(args, object_name),
                opts=child_opts(self, depends_on=[*self._after_team, service]),
            )
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
            opts=child_opts(self, depends_on=[*self._after_team, *depends]),
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

    def _route(self) -> None:
        # The HTTPRoute whose backend weights are the versions' traffic shares (S6).
        model = self.args.model_name
        self.route_name = model
        self.route = k8s.apiextensions.CustomResource(
            f"{self._name}-route",
            api_version="gateway.networking.k8s.io/v1",
            kind="HTTPRoute",
            # The parent's class, for the rules: a GKE Gateway needs a HealthCheckPolicy
            # per backend (AIS-G5-04).
            metadata=self._meta(model, **self._gateway_class_annotation()),
            spec=route_spec(self.args, self.plans),
            opts=child_opts(self, depends_on=[*self._after_team, *self.services.values()]),
        )

    def _gateway_class_annotation(self) -> dict[str, str]:
        gateway_class = self.args.parent_gateway.gateway_class
        return {GATEWAY_CLASS_ANNOTATION: gateway_class} if gateway_class else {}

    def _ingress(self) -> None:
        # The gateway port to `ingressFrom`, the metrics port to the scrapers; the serve
        # TeamNamespace denies everything else (S1).
        args = self.args
        k8s.networking.v1.NetworkPolicy(
            f"{self._name}-ingress",
            metadata=self._meta(
                f"{args.model_name}-ingress",
                purpose="; ".join(source.purpose for source in args.ingress_from)
                + "; metrics to the scrapers",
            ),
            spec=_untyped(ingress_policy(args)),
            opts=child_opts(self, depends_on=self._after_team),
        )

    def _monitoring(self) -> None:
        # The runtime's scrape, and the alert and recording rules on it (S5, G4).
        args, name, model = self.args, self._name, self.args.model_name
        opts_in = child_opts(self, depends_on=self._after_team)

        def monitored(metadata: dict[str, Any]) -> dict[str, Any]:
            # The Prometheus picks monitors and rules by label (its podMonitorSelector...).
            return {**metadata, "labels": {**metadata["labels"], **args.monitoring_labels}}

        scrape_api, scrape_kind, scrape_spec = scrape(args, self.namespace)
        k8s.apiextensions.CustomResource(
            f"{name}-scrape",
            api_version=scrape_api,
            kind=scrape_kind,
            metadata=monitored(self._meta(f"{model}-runtime")),
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
            metadata=monitored(self._meta(f"{model}-serving-alerts")),
            spec=rules_spec,
            opts=opts_in,
        )

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
                # cooldownPeriod applies only to scaling to zero (KEDA ScaledObject spec), so
                # it is rendered only when the floor is 0; the HPA's window does the rest.
                **(
                    {"cooldownPeriod": scaling.scale_down_window_seconds}
                    if plan.min_replicas == 0
                    else {}
                ),
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

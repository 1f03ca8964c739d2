"""`gcp.InferenceTier`: explicit model versions on GPU VMs behind an Envoy-based regional
application load balancer with a Cloud Armor throttle. The Google Cloud twin of
`aws.InferenceTier` (docs/components/gcp/inference-tier.md says why each choice).

Per model version (S7), keyed by the version, never by list position: a regional instance
template (on-demand GPU VMs, shielded, no external IP, OS Login, the inference tier's own
subnet and service account: S1), a regional managed instance group with autohealing on the
gateway's health path, a regional autoscaler (explicit maximum = the cost cap, S3;
scale-in at most one VM per 600 s, longer than a model load) and a regional backend
service. One URL map weights the versions (`weightedBackendServices`, S6): a rollback is a
weight change, and a version at weight 0 keeps one warm VM (`standby: warm`) or none.

Every VM runs the same serve.sh, node scripts and nginx gateway as an AWS serving node
(`serving_nginx_conf`: per-client 429, the concurrency cap, the body-keyed cache, a JSON 503
fallback: S3, S4, G5), the model copied from the models bucket under
gs://<bucket>/<model>/<version>/.

In front: INTERNAL_MANAGED (default) or EXTERNAL_MANAGED (`public`) regional load balancer,
both Envoy-based, using the network's proxy-only subnet; HTTPS with a regional
certificate (required for public or confidential/restricted data unless
`allow_plaintext_http`); a Cloud Armor regional security policy whose throttle answers 429
per client IP or API-key header (S3). Alert policies on p99 backend latency, the 5xx ratio
and model quality, and a dashboard with p50/p90/p99, the error rate and cost per 1k
requests (S5, G4). Request logging is an explicit choice with classification and retention
(G2); prod versions need an approver (G3).
"""

from __future__ import annotations

import json
import warnings
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_gcp as gcp

from aistack.contracts.capacity import CapacityNeed
from aistack.gcp import _inference_node as serving
from aistack.gcp._base import child_opts, labels_for, resource_id_from, scoped_id
from aistack.gcp._inference_args import (
    API_SERVICES,
    DEFAULT_LOG_RETENTION_DAYS,
    SCALE_IN_WINDOW_SECONDS,
    InferenceTierArgs,
    ModelQualityAlert,
    ModelVersion,
    VersionPlan,
    plan_tier,
    version_slug,
)
from aistack.gcp._kms import compute_disk_key
from aistack.gcp._logs import log_bucket_key
from aistack.gcp.network import PROXY_TIER

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"pulumi_gcp(\.|$)")
    _ = gcp.monitoring.AlertPolicy, gcp.monitoring.Dashboard, gcp.compute.RegionUrlMap

if TYPE_CHECKING:
    from aistack.gcp.dataset_bucket import DatasetBucket
    from aistack.gcp.network import Network
    from aistack.gcp.project_services import ProjectServices

__all__ = [
    "InferenceTier",
    "InferenceTierArgs",
    "ModelQualityAlert",
    "ModelVersion",
    "TOKEN",
    "version_slug",
]

TOKEN = "aistack:index:GcpInferenceTier"
WORKLOAD = "inference"
#: Labels the rules read (GCP label keys: lowercase, `-`, `_`).
TIER_LABEL = "aistack-inference-tier"
MODEL_VERSION_LABEL = "aistack-model-version"
WEIGHT_LABEL = "aistack-traffic-weight"
APPROVED_LABEL = "aistack-approved"
REQUEST_LOGGING_LABEL = "aistack-request-logging"
LOG_CLASSIFICATION_LABEL = "aistack-log-data-classification"
FALLBACK_LABEL = "aistack-fallback"
GATEWAY_CACHE_LABEL = "aistack-gateway-cache"
ALERT_KIND_LABEL = "aistack-alert-kind"
#: Cloud Armor: a throttle's exceed action is deny(403|404|429|502); 429 says "slow down"
#: (docs.cloud.google.com/armor/docs/rate-limiting-overview).
THROTTLE_EXCEED_ACTION = "deny(429)"
#: The default rule of every security policy has the lowest priority (Cloud Armor docs,
#: "Security policy overview": 2147483647).
DEFAULT_RULE_PRIORITY = 2147483647
#: Load balancer metrics (Cloud Monitoring, "Google Cloud metrics": loadbalancing): the
#: regional external ALB writes https/external/regional/*, the internal one
#: https/internal/*; both have backend_latencies (ms distribution) and request_count with
#: response_code_class.
LB_METRICS = {
    True: (
        "loadbalancing.googleapis.com/https/external/regional",
        "http_external_regional_lb_rule",
    ),
    False: ("loadbalancing.googleapis.com/https/internal", "internal_http_lb_rule"),
}
QUALITY_METRIC_PREFIX = "custom.googleapis.com/aistack/"
#: Generation can take minutes: the backend timeout bounds one request (S5 alerts earlier).
BACKEND_TIMEOUT_SECONDS = 300


def _ready(network: Any) -> list[pulumi.Resource]:
    """What the tier waits for: the whole network component (its firewall rules and the
    proxy-only subnet) when one is given; a wired stand-in has nothing to wait on."""
    return [network] if isinstance(network, pulumi.Resource) else []


class InferenceTier(pulumi.ComponentResource):
    """Explicit model versions on GPU VMs behind a weighted regional load balancer."""

    args: InferenceTierArgs
    plans: list[VersionPlan]

    def __init__(
        self,
        name: str,
        args: InferenceTierArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        services: ProjectServices | None = None,
        network: Network | None = None,
        models: DatasetBucket | None = None,
        notification_channels: pulumi.Input[list[str]] | None = None,
    ) -> None:
        """`services`: the stack's ProjectServices. `network`: the gcp.Network whose
        inference tier (subnet, service account, zones, gateway port) and proxy-only
        subnet the tier uses. `models`: the DatasetBucket of kind 'models' in the tier's
        region. `notification_channels` may be Outputs (e.g. a BudgetGuard's)."""
        args, (plans, gateway) = InferenceTierArgs.validate_with(
            args,
            lambda a: plan_tier(name, a, services, network, models),
            where=name,
            wiring={"services": services, "network": network, "models": models},
        )
        assert services and network and models
        super().__init__(
            TOKEN,
            name,
            {"region": args.region, "model_name": args.model_name, "public": args.public},
            opts,
        )
        self.args = args
        self.plans = plans
        self._name = name
        self.region = args.region
        self.project = services.project
        self.gateway = gateway
        self._apis = services.enabling(*API_SERVICES)
        self._network = network
        self.zones = tuple(network.zones(WORKLOAD))
        self.scheme = "EXTERNAL_MANAGED" if args.public else "INTERNAL_MANAGED"
        self.log_name = f"aistack-{resource_id_from(name)}"[:100]
        self.labels = labels_for(
            args.governance,
            workload=WORKLOAD,
            **{
                TIER_LABEL: resource_id_from(name)[:63],
                REQUEST_LOGGING_LABEL: args.request_logging,
                FALLBACK_LABEL: args.fallback,
                # The cost estimator reads it: cache hits never reach a GPU.
                GATEWAY_CACHE_LABEL: "on" if gateway.cache_enabled else "off",
                **(
                    {LOG_CLASSIFICATION_LABEL: args.log_data_classification}
                    if args.log_data_classification
                    else {}
                ),
            },
        )
        self.service_account_email = network.service_account(WORKLOAD)
        member = pulumi.Output.concat("serviceAccount:", self.service_account_email)

        # ---- identity: read the model (and nothing else: S1), write logs and metrics ----
        self.model_grant = models.grant_read(member, prefix=args.model_name, name=name)
        self.node_grants = [
            gcp.projects.IAMMember(
                f"{name}-{role.rsplit('.', 1)[-1].lower()}",
                project=self.project,
                role=role,
                member=member,
                opts=child_opts(self, depends_on=self._apis),
            )
            for role in ("roles/logging.logWriter", "roles/monitoring.metricWriter")
        ]

        # ---- the shared pieces: health check, Cloud Armor --------------------------------
        port = gateway.listen_port
        self.health_check = gcp.compute.RegionHealthCheck(
            f"{name}-health",
            project=self.project,
            region=args.region,
            description=f"aistack inference tier {name}: the gateway answers",
            http_health_check=gcp.compute.RegionHealthCheckHttpHealthCheckArgs(
                port=port, request_path=gateway.health_path
            ),
            check_interval_sec=10,
            timeout_sec=5,
            healthy_threshold=2,
            unhealthy_threshold=3,
            log_config=gcp.compute.RegionHealthCheckLogConfigArgs(enable=True),
            opts=child_opts(self, depends_on=self._apis),
        )
        self.security_policy = self._armor()

        # ---- per version: template, group, autoscaler, backend service -------------------
        # One key for every version's boot disks (aistack.gcp._kms.compute_disk_key).
        self.disk_key, self.disk_key_grant = compute_disk_key(
            self,
            name,
            project=self.project,
            region=args.region,
            labels=self.labels,
            depends_on=list(self._apis),
        )
        self.templates: dict[str, gcp.compute.RegionInstanceTemplate] = {}
        self.groups: dict[str, gcp.compute.RegionInstanceGroupManager] = {}
        self.autoscalers: dict[str, gcp.compute.RegionAutoscaler] = {}
        self.backends: dict[str, gcp.compute.RegionBackendService] = {}
        trusted = (network.args.subnet_cidr(PROXY_TIER),)  # where Envoy connects from
        for plan in plans:
            self._serve_version(plan, models, trusted)

        # ---- the load balancer ---------------------------------------------------------
        self.url_map = gcp.compute.RegionUrlMap(
            f"{name}-urlmap",
            project=self.project,
            region=args.region,
            description=f"aistack inference tier {name}: versions by weight (S6)",
            default_route_action=gcp.compute.RegionUrlMapDefaultRouteActionArgs(
                weighted_backend_services=[
                    gcp.compute.RegionUrlMapDefaultRouteActionWeightedBackendServiceArgs(
                        backend_service=self.backends[plan.version].id, weight=plan.weight
                    )
                    for plan in plans
                ],
                timeout=gcp.compute.RegionUrlMapDefaultRouteActionTimeoutArgs(
                    seconds=str(BACKEND_TIMEOUT_SECONDS)
                ),
            ),
            opts=child_opts(self, depends_on=self._apis),
        )
        https = args.certificate is not None
        if args.certificate is not None:
            self.proxy: Any = gcp.compute.RegionTargetHttpsProxy(
                f"{name}-https-proxy",
                project=self.project,
                region=args.region,
                url_map=self.url_map.id,
                ssl_certificates=[args.certificate],
                opts=child_opts(self, depends_on=self._apis),
            )
        else:
            self.proxy = gcp.compute.RegionTargetHttpProxy(
                f"{name}-http-proxy",
                project=self.project,
                region=args.region,
                url_map=self.url_map.id,
                opts=child_opts(self, depends_on=self._apis),
            )
        self.forwarding_rule = gcp.compute.ForwardingRule(
            f"{name}-rule",
            project=self.project,
            region=args.region,
            load_balancing_scheme=self.scheme,
            ip_protocol="TCP",
            port_range="443" if https else "80",
            target=self.proxy.id,
            network=network.network_id,
            # Internal: the address comes from the inference subnet (never the proxy-only
            # one, which holds the proxies' own addresses). External: Google's.
            subnetwork=None if args.public else network.subnet_self_link(WORKLOAD),
            # The regional external ALB is offered in the Standard network tier (Load
            # Balancing docs, "External Application Load Balancer overview") (verify
            # Premium for regional in the current docs).
            network_tier="STANDARD" if args.public else None,
            labels=self.labels,
            # The proxy-only subnet must exist before an Envoy-based forwarding rule.
            opts=child_opts(self, depends_on=[*self._apis, *_ready(network)]),
        )
        self.endpoint = self.forwarding_rule.ip_address.apply(
            lambda ip: f"{'https' if https else 'http'}://{ip}"
        )

        # ---- logs, alerts, dashboard -----------------------------------------------------
        self._logs()
        channels = notification_channels or list(args.notification_channels) or None
        self.alerts = self._alerts(channels)
        self.dashboard = self._dashboard()

        self.register_outputs(
            {
                "endpoint": self.endpoint,
                "scheme": self.scheme,
                "url_map": self.url_map.id,
                "security_policy": self.security_policy.id,
                "versions": {p.version: p.weight for p in plans},
                "groups": {v: g.name for v, g in self.groups.items()},
                "service_account": self.service_account_email,
                "log_bucket": self.log_bucket.id,
                "dashboard": self.dashboard.id,
                "rollback_command": self.rollback_command(),
            }
        )

    # ---- pieces -------------------------------------------------------------------------

    def _armor(self) -> gcp.compute.RegionSecurityPolicy:
        """Cloud Armor throttle per client (S3): a regional policy, because a global one
        cannot attach to a regional backend service (research gcp-k8s.md §D1.12). Security
        policies are available for every external Application Load Balancer and the
        regional internal one (docs.cloud.google.com/armor/docs/security-policy-overview);
        throttles on the internal one in particular: verify (rate-limiting-overview)."""
        args = self.args
        # HTTP_HEADER: keyed on the header (the first 128 bytes of its value); a request
        # without it is counted under ALL (pulumi-gcp RegionSecurityPolicyRuleRateLimitOptions).
        header = args.throttle_header if args.throttle_key == "HTTP_HEADER" else None
        return gcp.compute.RegionSecurityPolicy(
            f"{self._name}-armor",
            project=self.project,
            region=args.region,
            type="CLOUD_ARMOR",
            description=f"aistack inference tier {self._name}: per-client throttle (S3)",
            rules=[
                gcp.compute.RegionSecurityPolicyRuleArgs(
                    priority=1000,
                    action="throttle",
                    description="per-client request rate; 429 beyond it",
                    match=gcp.compute.RegionSecurityPolicyRuleMatchArgs(
                        versioned_expr="SRC_IPS_V1",
                        config=gcp.compute.RegionSecurityPolicyRuleMatchConfigArgs(
                            src_ip_ranges=["*"]
                        ),
                    ),
                    rate_limit_options=gcp.compute.RegionSecurityPolicyRuleRateLimitOptionsArgs(
                        conform_action="allow",
                        exceed_action=THROTTLE_EXCEED_ACTION,
                        rate_limit_threshold=gcp.compute.RegionSecurityPolicyRuleRateLimitOptionsRateLimitThresholdArgs(
                            count=args.throttle_requests,
                            interval_sec=args.throttle_interval_seconds,
                        ),
                        enforce_on_key=args.throttle_key,
                        enforce_on_key_name=header,
                    ),
                ),
                gcp.compute.RegionSecurityPolicyRuleArgs(
                    priority=DEFAULT_RULE_PRIORITY,
                    action="allow",
                    description="default rule",
                    match=gcp.compute.RegionSecurityPolicyRuleMatchArgs(
                        versioned_expr="SRC_IPS_V1",
                        config=gcp.compute.RegionSecurityPolicyRuleMatchConfigArgs(
                            src_ip_ranges=["*"]
                        ),
                    ),
                ),
            ],
            opts=child_opts(self, depends_on=self._apis),
        )

    def _version_labels(self, plan: VersionPlan) -> dict[str, str]:
        return {
            **self.labels,
            MODEL_VERSION_LABEL: plan.slug[:63],
            WEIGHT_LABEL: str(plan.weight),
            APPROVED_LABEL: "true" if plan.spec.approved_by else "false",
        }

    def _serve_version(
        self, plan: VersionPlan, models: DatasetBucket, trusted: tuple[str, ...]
    ) -> None:
        args, name = self.args, self._name
        prefix = f"{name}-{plan.slug}"
        group_name = _group_name(name, plan.slug)
        labels = self._version_labels(plan)
        machine = args.machine

        def script(bucket: str) -> str:
            spec = serving.ServingNode(
                tier=name,
                region=args.region,
                model_name=args.model_name,
                model_version=plan.version,
                models_bucket=bucket,
                runtime=args.runtime,
                image=args.image,
                runtime_args=args.runtime_args,
                gpu_count=machine.gpu_count,
                log_group=self.log_name,
                metrics_namespace=f"{QUALITY_METRIC_PREFIX}{args.quality.metric_name}",
                quality_metric=args.quality.metric_name,
                gateway=self.gateway,
                gateway_image=args.gateway_image,
                request_logging=args.request_logging,
                trusted_proxies=trusted,
                model_load_timeout_seconds=args.boot_timeout_minutes * 60,
            )
            return serving.render_serving_startup_script(spec, instance_group=group_name)

        startup = models.bucket_name.apply(script)
        template = gcp.compute.RegionInstanceTemplate(
            f"{prefix}-template",
            project=self.project,
            region=args.region,
            description=f"aistack inference tier {name}: {args.model_name} {plan.version}",
            machine_type=args.machine_type,
            disks=[
                gcp.compute.RegionInstanceTemplateDiskArgs(
                    boot=True,
                    auto_delete=True,
                    source_image=args.source_image,
                    disk_type="pd-balanced",
                    disk_size_gb=args.boot_disk_gb,
                    # Under the tier's key, as every store of the stack (the model weights
                    # the VM pulled, the gateway's cache).
                    disk_encryption_key=gcp.compute.RegionInstanceTemplateDiskDiskEncryptionKeyArgs(
                        kms_key_self_link=self.disk_key
                    ),
                )
            ],
            network_interfaces=[
                # No access_configs: no external IP (S1).
                gcp.compute.RegionInstanceTemplateNetworkInterfaceArgs(
                    subnetwork=self._network.subnet_self_link(WORKLOAD)
                )
            ],
            scheduling=gcp.compute.RegionInstanceTemplateSchedulingArgs(
                # Serving is on-demand: a preempted VM drops requests mid-answer.
                provisioning_model="STANDARD",
                preemptible=False,
                automatic_restart=True,
                # GPU VMs cannot live-migrate (Compute Engine docs, "GPU host maintenance").
                on_host_maintenance="TERMINATE",
            ),
            shielded_instance_config=gcp.compute.RegionInstanceTemplateShieldedInstanceConfigArgs(
                enable_secure_boot=True, enable_vtpm=True, enable_integrity_monitoring=True
            ),
            service_account=gcp.compute.RegionInstanceTemplateServiceAccountArgs(
                email=self.service_account_email,
                scopes=["https://www.googleapis.com/auth/cloud-platform"],
            ),
            metadata={
                "startup-script": startup,
                "enable-oslogin": "TRUE",
                "block-project-ssh-keys": "TRUE",
                "aistack-model-version": plan.version,
                "aistack-image": args.image,
                **({"aistack-approved-by": plan.spec.approved_by} if plan.spec.approved_by else {}),
            },
            labels=labels,
            opts=child_opts(
                self,
                depends_on=[
                    *self._apis,
                    *_ready(self._network),
                    *self.node_grants,
                    *self.model_grant,
                    self.disk_key_grant,
                ],
            ),
        )
        group = gcp.compute.RegionInstanceGroupManager(
            f"{prefix}-mig",
            name=group_name,
            project=self.project,
            region=args.region,
            base_instance_name=group_name,
            description=f"aistack inference tier {name}: {plan.version}",
            versions=[
                gcp.compute.RegionInstanceGroupManagerVersionArgs(
                    name="primary", instance_template=template.self_link
                )
            ],
            named_ports=[
                gcp.compute.RegionInstanceGroupManagerNamedPortArgs(
                    name="http", port=self.gateway.listen_port
                )
            ],
            distribution_policy_zones=list(self.zones),
            update_policy=gcp.compute.RegionInstanceGroupManagerUpdatePolicyArgs(
                # A new template (a new version's settings) replaces VMs, new ones first.
                type="PROACTIVE",
                minimal_action="REPLACE",
                max_surge_fixed=len(self.zones),
                max_unavailable_fixed=0,
            ),
            auto_healing_policies=gcp.compute.RegionInstanceGroupManagerAutoHealingPoliciesArgs(
                health_check=self.health_check.id,
                # Boot, image pulls, model copy and load before the first verdict.
                initial_delay_sec=args.boot_timeout_minutes * 60,
            ),
            wait_for_instances=False,
            # The autoscaler owns the size.
            opts=child_opts(self, depends_on=self._apis, ignore_changes=["targetSize"]),
        )
        autoscaler = gcp.compute.RegionAutoscaler(
            f"{prefix}-autoscaler",
            project=self.project,
            region=args.region,
            target=group.id,
            autoscaling_policy=gcp.compute.RegionAutoscalerAutoscalingPolicyArgs(
                # The cost cap (S3): never more VMs than this.
                max_replicas=plan.max_nodes,
                min_replicas=plan.min_nodes,
                # Seconds a new VM's metrics are ignored: the model is still loading.
                cooldown_period=args.boot_timeout_minutes * 60,
                load_balancing_utilization=gcp.compute.RegionAutoscalerAutoscalingPolicyLoadBalancingUtilizationArgs(
                    target=0.8
                ),
                # One VM per 10 minutes at most: a model load takes minutes, and scaling
                # in fast and out again thrashes (research gcp-k8s.md §C1).
                scale_in_control=gcp.compute.RegionAutoscalerAutoscalingPolicyScaleInControlArgs(
                    max_scaled_in_replicas=gcp.compute.RegionAutoscalerAutoscalingPolicyScaleInControlMaxScaledInReplicasArgs(
                        fixed=1
                    ),
                    time_window_sec=SCALE_IN_WINDOW_SECONDS,
                ),
            ),
            opts=child_opts(self, depends_on=self._apis),
        )
        backend = gcp.compute.RegionBackendService(
            f"{prefix}-backend",
            project=self.project,
            region=args.region,
            description=f"aistack inference tier {name}: {plan.version}",
            load_balancing_scheme=self.scheme,
            protocol="HTTP",
            port_name="http",
            timeout_sec=BACKEND_TIMEOUT_SECONDS,
            health_checks=self.health_check.id,
            backends=[
                gcp.compute.RegionBackendServiceBackendArgs(
                    group=group.instance_group,
                    # RATE: the autoscaler's load balancing utilization is requests per
                    # second against max_rate_per_instance.
                    balancing_mode="RATE",
                    max_rate_per_instance=args.target_requests_per_node_per_second,
                    capacity_scaler=1.0,
                )
            ],
            # G2: the load balancer's request log follows the tier's choice.
            log_config=gcp.compute.RegionBackendServiceLogConfigArgs(
                enable=args.request_logging != "none", sample_rate=1.0
            ),
            security_policy=self.security_policy.self_link,
            opts=child_opts(self, depends_on=self._apis),
        )
        self.templates[plan.version] = template
        self.groups[plan.version] = group
        self.autoscalers[plan.version] = autoscaler
        self.backends[plan.version] = backend

    def _logs(self) -> None:
        args = self.args
        days = args.log_retention_days or DEFAULT_LOG_RETENTION_DAYS
        bucket_id = scoped_id(f"{resource_id_from(self._name)}-serving-logs", limit=100)
        key_id, key_grant = log_bucket_key(
            self,
            self._name,
            project=self.project,
            region=args.region,
            labels=labels_for(args.governance, workload=WORKLOAD),
            depends_on=self._apis,
        )
        self.log_bucket = gcp.logging.ProjectBucketConfig(
            f"{self._name}-logs",
            project=self.project,
            bucket_id=bucket_id,
            location=args.region,
            retention_days=days,
            description=(
                f"aistack inference tier {self._name}: VM, gateway and load balancer logs; "
                f"request logging {args.request_logging}, classification "
                f"{args.log_data_classification or 'n/a'}"
            )[:1000],
            cmek_settings=gcp.logging.ProjectBucketConfigCmekSettingsArgs(kms_key_name=key_id),
            # Kept on destroy, as every log bucket (aistack.gcp._logs): a deleted one holds
            # its id for 7 days and fails the next `up`; kept, the next `up` adopts it.
            opts=child_opts(self, depends_on=[*self._apis, key_grant], retain_on_delete=True),
        )
        groups = "|".join(_group_name(self._name, p.slug) for p in self.plans)
        self.log_sink = gcp.logging.ProjectSink(
            f"{self._name}-log-sink",
            project=self.project,
            destination=pulumi.Output.concat(
                "logging.googleapis.com/projects/",
                self.project,
                f"/locations/{args.region}/buckets/{bucket_id}",
            ),
            filter=(
                '(resource.type="gce_instance" AND '
                f'labels."compute.googleapis.com/resource_name"=~"^({groups})-") OR '
                f'(resource.type="{LB_METRICS[args.public][1]}" AND '
                f'resource.labels.url_map_name:"{self._name}-urlmap")'
            ),
            unique_writer_identity=True,
            description=f"aistack inference tier {self._name} -> {bucket_id}",
            opts=child_opts(self, depends_on=[self.log_bucket]),
        )

    def _alert(
        self, role: str, documentation: str, condition: dict[str, Any], channels: Any
    ) -> gcp.monitoring.AlertPolicy:
        return gcp.monitoring.AlertPolicy(
            f"{self._name}-{role}",
            project=self.project,
            display_name=f"aistack {self._name}: {role}",
            combiner="OR",
            conditions=[gcp.monitoring.AlertPolicyConditionArgs(**condition)],
            documentation=gcp.monitoring.AlertPolicyDocumentationArgs(
                content=documentation, mime_type="text/markdown"
            ),
            notification_channels=channels,
            user_labels={**self.labels, ALERT_KIND_LABEL: role},
            opts=child_opts(self, depends_on=self._apis),
        )

    def _lb_filter(self, metric: str) -> str:
        prefix, resource = LB_METRICS[self.args.public]
        return (
            f'metric.type="{prefix}/{metric}" AND resource.type="{resource}" AND '
            f'resource.label.url_map_name=starts_with("{self._name}-urlmap")'
        )

    def _alerts(self, channels: Any) -> dict[str, gcp.monitoring.AlertPolicy]:
        args = self.args
        threshold_cls = gcp.monitoring.AlertPolicyConditionConditionThresholdArgs
        agg = gcp.monitoring.AlertPolicyConditionConditionThresholdAggregationArgs
        latency = self._alert(
            "latency-p99",
            f"Tier {self._name}: p99 backend latency above {args.latency_slo_ms} ms for 5 "
            "minutes (S5). Check the versions' groups and the dashboard.",
            {
                "display_name": f"p99 backend latency above {args.latency_slo_ms} ms",
                "condition_threshold": threshold_cls(
                    filter=self._lb_filter("backend_latencies"),
                    comparison="COMPARISON_GT",
                    threshold_value=args.latency_slo_ms,
                    duration="300s",
                    aggregations=[
                        agg(
                            alignment_period="60s",
                            per_series_aligner="ALIGN_PERCENTILE_99",
                            cross_series_reducer="REDUCE_MAX",
                            group_by_fields=["resource.label.backend_target_name"],
                        )
                    ],
                    evaluation_missing_data="EVALUATION_MISSING_DATA_INACTIVE",
                ),
            },
            channels,
        )
        errors = self._alert(
            "error-rate",
            f"Tier {self._name}: more than {args.error_rate_percent}% of requests answered "
            "5xx for 5 minutes (S5). A model server down answers the gateway's JSON 503 (G5).",
            {
                "display_name": f"5xx above {args.error_rate_percent}% of requests",
                # MQL-free ratio: 5xx count over all requests (Cloud Monitoring
                # "ratio" threshold with a denominator filter).
                "condition_threshold": threshold_cls(
                    filter=self._lb_filter("request_count")
                    # response_code_class is an INT64 label (500 for 5xx): compared
                    # unquoted (Monitoring filters) (verify against a real project).
                    + " AND metric.label.response_code_class=500",
                    denominator_filter=self._lb_filter("request_count"),
                    comparison="COMPARISON_GT",
                    threshold_value=args.error_rate_percent / 100,
                    duration="300s",
                    aggregations=[
                        agg(
                            alignment_period="60s",
                            per_series_aligner="ALIGN_RATE",
                            cross_series_reducer="REDUCE_SUM",
                        )
                    ],
                    denominator_aggregations=[
                        gcp.monitoring.AlertPolicyConditionConditionThresholdDenominatorAggregationArgs(
                            alignment_period="60s",
                            per_series_aligner="ALIGN_RATE",
                            cross_series_reducer="REDUCE_SUM",
                        )
                    ],
                    evaluation_missing_data="EVALUATION_MISSING_DATA_INACTIVE",
                ),
            },
            channels,
        )
        quality = args.quality
        metric = f"{QUALITY_METRIC_PREFIX}{quality.metric_name}"
        quality_filter = (
            f'metric.type="{metric}" AND metric.label.tier="{self._name}" AND '
            'resource.type="gce_instance"'
        )
        conditions: dict[str, Any] = {
            "display_name": f"{quality.metric_name} {quality.alert_when} {quality.threshold}",
            "condition_threshold": threshold_cls(
                filter=quality_filter,
                comparison="COMPARISON_LT" if quality.alert_when == "below" else "COMPARISON_GT",
                threshold_value=quality.threshold,
                duration=f"{quality.duration_minutes * 60}s",
                aggregations=[
                    agg(
                        alignment_period=f"{quality.period_minutes * 60}s",
                        per_series_aligner="ALIGN_MEAN",
                        cross_series_reducer="REDUCE_MEAN",
                        group_by_fields=["metric.label.model_version"],
                    )
                ],
                # Silence is not health: a version nobody scores alerts too (G4).
                evaluation_missing_data=(
                    "EVALUATION_MISSING_DATA_ACTIVE"
                    if quality.absent_alerts
                    else "EVALUATION_MISSING_DATA_INACTIVE"
                ),
            ),
        }
        quality_alert = self._alert(
            "model-quality",
            f"Tier {self._name}: {quality.metric_name} {quality.alert_when} "
            f"{quality.threshold} (G4). Roll back by weight: see the rollback command.",
            conditions,
            channels,
        )
        return {"latency": latency, "errors": errors, "quality": quality_alert}

    def _dashboard(self) -> gcp.monitoring.Dashboard:
        """p50/p90/p99 backend latency, the 5xx ratio, VMs per version and the cost per
        1,000 requests: on-demand $/h of the machine x VMs / (requests per hour / 1000)."""
        args = self.args
        prefix, resource = LB_METRICS[args.public]
        price = args.machine.price(args.region)
        lb = (
            f'resource.type="{resource}" '
            f'resource.label.url_map_name=starts_with("{self._name}-urlmap")'
        )
        latency = f'metric.type="{prefix}/backend_latencies" {lb}'
        requests = f'metric.type="{prefix}/request_count" {lb}'
        vms = (
            'metric.type="compute.googleapis.com/instance/uptime" resource.type="gce_instance" '
            f'metadata.user_labels."{TIER_LABEL}"="{self.labels[TIER_LABEL]}"'
        )

        def series(filter_: str, aligner: str, reducer: str = "REDUCE_SUM") -> dict[str, Any]:
            return {
                "timeSeriesFilter": {
                    "filter": filter_,
                    "aggregation": {
                        "alignmentPeriod": "60s",
                        "perSeriesAligner": aligner,
                        "crossSeriesReducer": reducer,
                    },
                }
            }

        latency_chart = {
            "title": "Backend latency p50 / p90 / p99 (ms)",
            "xyChart": {
                "dataSets": [
                    {"timeSeriesQuery": series(latency, f"ALIGN_PERCENTILE_{p}", "REDUCE_MAX")}
                    for p in (50, 90, 99)
                ],
                "thresholds": [{"value": args.latency_slo_ms, "label": "p99 objective"}],
            },
        }
        error_chart = {
            "title": "5xx share of requests",
            "xyChart": {
                "dataSets": [
                    {
                        "timeSeriesQuery": {
                            "timeSeriesFilterRatio": {
                                "numerator": {
                                    "filter": requests + " metric.label.response_code_class=500",
                                    "aggregation": {"alignmentPeriod": "60s",
                                                    "perSeriesAligner": "ALIGN_RATE",
                                                    "crossSeriesReducer": "REDUCE_SUM"},
                                },
                                "denominator": {
                                    "filter": requests,
                                    "aggregation": {"alignmentPeriod": "60s",
                                                    "perSeriesAligner": "ALIGN_RATE",
                                                    "crossSeriesReducer": "REDUCE_SUM"},
                                },
                            }
                        }
                    }
                ],
                "thresholds": [{"value": args.error_rate_percent / 100}],
            },
        }  # fmt: skip
        cost_chart = {
            "title": f"Cost per 1,000 requests (USD; {args.machine_type} at ${price:.2f}/h)",
            "xyChart": {
                "dataSets": [
                    {
                        # PromQL over the Cloud Monitoring metrics: VMs x $/h / (req/h / 1000).
                        "timeSeriesQuery": {
                            "prometheusQuery": (
                                f"(count(compute_googleapis_com:instance_uptime{{"
                                f'monitored_resource="gce_instance",'
                                f"metadata_user_{TIER_LABEL.replace('-', '_')}="
                                f'"{self.labels[TIER_LABEL]}"}}) * {price:.4f}) / '
                                f"(sum(rate({prefix.split('/', 1)[0].replace('.', '_')}:"
                                f"{prefix.split('/', 1)[1].replace('/', '_')}_request_count"
                                f"[5m])) * 3600 / 1000)"
                            )
                        }
                    }
                ]
            },
        }
        vm_chart = {
            "title": "Serving VMs",
            "xyChart": {
                "dataSets": [{"timeSeriesQuery": series(vms, "ALIGN_MEAN", "REDUCE_COUNT")}]
            },
        }
        body = {
            "displayName": f"aistack {self._name}",
            "mosaicLayout": {
                "columns": 12,
                "tiles": [
                    {"xPos": (i % 2) * 6, "yPos": (i // 2) * 4, "width": 6, "height": 4,
                     "widget": w}
                    for i, w in enumerate((latency_chart, error_chart, cost_chart, vm_chart))
                ],
            },
        }  # fmt: skip
        return gcp.monitoring.Dashboard(
            f"{self._name}-dashboard",
            project=self.project,
            dashboard_json=json.dumps(body, sort_keys=True),
            opts=child_opts(self, depends_on=self._apis),
        )

    # ---- what users call -----------------------------------------------------------------

    def rollback_command(self) -> str:
        """How to move traffic between versions: edit the weights in the stack's config and
        `pulumi up` (the URL map's weightedBackendServices change in place)."""
        weights = ", ".join(f"{p.version}={p.weight}" for p in self.plans)
        return (
            f"edit {self._name}.versions[].weight (now {weights}; the weights sum to 100) "
            "and run `pulumi up`: the URL map moves traffic in place, no VM restarts"
        )

    def quota_needs(self) -> list[CapacityNeed]:
        """GPU quota at every version's maximum, plus the update surge (C1)."""
        surge = len(self.zones)
        return [
            CapacityNeed(
                pool=f"{self._name}-{plan.slug}",
                region=self.region,
                machine_types=(self.args.machine_type,),
                max_nodes=plan.max_nodes,
                market="on-demand",
                surge_nodes=surge,
            )
            for plan in self.plans
        ]


def _group_name(name: str, slug: str) -> str:
    """A version's group name, unique in the region across the project's stacks."""
    return scoped_id(f"{resource_id_from(name)}-{slug}", limit=63)

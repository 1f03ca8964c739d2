"""`aws.InferenceTier`: explicit model versions on GPU nodes behind a WAF-guarded load balancer.

Each model version (S7) gets its own launch template, auto scaling group and target group,
keyed by the version, never by list position. One listener forwards to all of them by
weight, so a rollback is a weight change and the previous version stays deployable (S6): a
version at weight 0 keeps one warm node (`standby: warm`) or none (`standby: zero`).

A node runs the model server (vLLM, Triton or TensorRT-LLM, image by digest, S2) on
loopback, with the model copied from the models bucket onto the NVMe disks, behind the
nginx gateway of `aistack.gateway`: per-client rate limits and a concurrency cap (S3), a
cache for repeated inputs (S4) and a JSON 503 when the model is down (G5). A launch
lifecycle hook keeps a node out of its target group until the model answers.

In front: an Application Load Balancer (internal unless asked otherwise, HTTPS when given a
certificate, invalid headers dropped, access logs) with a WAF web ACL (per-IP rate limit,
AWS managed rules, logs). Target tracking on requests per node scales each version between
its bounds; `max_nodes` is the cost cap (S3). Alarms cover p99 latency, the 5xx rate,
unhealthy nodes and model quality (S5, G4); a dashboard adds cost per 1,000 requests.

The nodes use the network's inference subnets and security group and the workload
identity's `inference` role, which may read the models bucket under the model's prefix and
nothing else (S1). Request logging is an explicit choice (G2) and production versions need
an approver (G3). Why each choice: docs/components/inference-tier.md.
"""

from __future__ import annotations

import base64
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_aws as aws

from aistack.aws import _inference_node as serving
from aistack.aws import _perms
from aistack.aws._base import child_opts, policy_output, stack_id, tags_for
from aistack.aws._inference_args import (
    DEFAULT_LOG_RETENTION_DAYS,
    InferenceTierArgs,
    ModelQualityAlarm,
    ModelVersion,
    ServingMachineImage,
    VersionPlan,
    plan_tier,
    version_slug,
)
from aistack.aws._inference_monitoring import (
    ALB_NAMESPACE,
    ERROR_RATE_EXPRESSION,
    VersionMetrics,
    dashboard_body,
)
from aistack.aws._logs import encrypted_log_group
from aistack.aws._node import gpu_launch_template
from aistack.aws.gpu_quota import QuotaNeed

if TYPE_CHECKING:
    from aistack.aws.dataset_bucket import DatasetBucket

__all__ = [
    "InferenceTier",
    "InferenceTierArgs",
    "ModelQualityAlarm",
    "ModelVersion",
    "ServingMachineImage",
    "TOKEN",
    "version_slug",
]

TOKEN = "aistack:index:AwsInferenceTier"
WORKLOAD = "inference"

# Tags policy rules read (mirrored in aistack/policy/rules/s2_serving_runtime.py).
TIER_TAG = "aistack:inference-tier"
MODEL_NAME_TAG = "aistack:model-name"
MODEL_VERSION_TAG = "aistack:model-version"
TRAFFIC_WEIGHT_TAG = "aistack:traffic-weight"
STANDBY_TAG = "aistack:standby"
APPROVED_BY_TAG = "aistack:approved-by"
RUNTIME_TAG = "aistack:runtime"
SERVING_IMAGE_TAG = "aistack:serving-image"
GATEWAY_CACHE_TAG = "aistack:gateway-cache"
REQUEST_LOGGING_TAG = "aistack:request-logging"
LOG_CLASSIFICATION_TAG = "aistack:log-data-classification"
LOG_RETENTION_TAG = "aistack:log-retention-days"
FALLBACK_TAG = "aistack:fallback"
ALARM_KIND_TAG = "aistack:alarm-kind"

#: TLS 1.3 with TLS 1.2 fallback, forward-secret ciphers only.
TLS_POLICY = "ELBSecurityPolicy-TLS13-1-2-2021-06"
#: Instance refresh launches replacements first, up to twice the nodes; GpuQuota counts it.
REFRESH_MAX_HEALTHY_PERCENT = 200
#: On the load balancer when allow_plaintext_http let it serve confidential data over HTTP.
PLAINTEXT_HTTP_TAG = "aistack:plaintext-http"
WAF_MANAGED_RULE_GROUPS = ("AWSManagedRulesCommonRuleSet", "AWSManagedRulesKnownBadInputsRuleSet")
#: Seconds a node may fail health checks right after joining before the group replaces it.
HEALTH_CHECK_GRACE_SECONDS = 120
#: Group metrics the dashboard reads (GroupTotalInstances: every node that bills).
ASG_METRICS = (
    aws.autoscaling.Metric.GROUP_DESIRED_CAPACITY,
    aws.autoscaling.Metric.GROUP_IN_SERVICE_INSTANCES,
    aws.autoscaling.Metric.GROUP_PENDING_INSTANCES,
    aws.autoscaling.Metric.GROUP_TOTAL_INSTANCES,
)


def _ready(network: Any) -> list[pulumi.Resource]:
    """What nodes must wait for: the whole network component when one is given."""
    return [network] if isinstance(network, pulumi.Resource) else []


def _alb_cidrs(network: Any) -> tuple[str, ...]:
    """The load balancer subnets' blocks: the only sources whose X-Forwarded-For is trusted."""
    layout = getattr(network, "plan", None)
    if layout is None:
        return (str(network.cidr_block),) if getattr(network, "cidr_block", None) else ()
    kind = "public" if layout.alb_public else "alb"
    return tuple(layout.cidrs[(kind, zone)] for zone in layout.alb_zones)


def _prefix(name: str) -> str:
    """A name_prefix for load balancer resources (at most six characters, AWS appends
    random ones): their names stop at 32 characters, which logical names would overrun."""
    return (re.sub(r"[^A-Za-z0-9]", "", name)[:5] or "ais") + "-"


def _metric_name(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", "-".join(parts))[:128]


# ---- the component ---------------------------------------------------------------------------


class InferenceTier(pulumi.ComponentResource):
    """Versioned model serving on GPU nodes behind nginx, an ALB and WAF."""

    load_balancer: aws.lb.LoadBalancer
    load_balancer_arn: pulumi.Output[str]
    dns_name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    listener: aws.lb.Listener
    target_groups: dict[str, aws.lb.TargetGroup]
    launch_templates: dict[str, aws.ec2.LaunchTemplate]
    groups: dict[str, aws.autoscaling.Group]
    scaling_policies: dict[str, aws.autoscaling.Policy]
    web_acl: aws.wafv2.WebAcl
    web_acl_arn: pulumi.Output[str]
    log_group_name: pulumi.Output[str]
    waf_log_group_name: pulumi.Output[str]
    dashboard_name: pulumi.Output[str]
    rollback_command: pulumi.Output[str]
    metrics_namespace: str
    image_id: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: InferenceTierArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        network: Any,
        identity: Any,
        models: DatasetBucket,
        logs: DatasetBucket | None = None,
        alarm_topic_arn: pulumi.Input[str] | None = None,
    ) -> None:
        """`alarm_topic_arn` (e.g. `budget.alert_topic_arn`) may be an Output; the args field
        of the same name takes a literal ARN from config."""
        args, (versions, gateway) = InferenceTierArgs.validate_with(
            args,
            lambda valid: plan_tier(name, valid, network, models, logs),
            where=name,
            wiring={"network": network, "identity": identity, "models": models},
        )
        super().__init__(
            TOKEN,
            name,
            {"region": args.region, "model_name": args.model_name, "runtime": args.runtime},
            opts,
        )
        self.args = args
        self.region = args.region
        self._name = name
        self.alarm_topic_arn = alarm_topic_arn or args.alarm_topic_arn
        self.versions = versions
        self.gateway = gateway
        self.metrics_namespace = f"aistack/{stack_id()}/{name}"
        governance = args.governance
        tier_tags: dict[str, str] = {
            TIER_TAG: name,
            MODEL_NAME_TAG: args.model_name,
            RUNTIME_TAG: args.runtime,
            REQUEST_LOGGING_TAG: args.request_logging,
            FALLBACK_TAG: args.fallback,
            LOG_RETENTION_TAG: str(args.log_retention_days or DEFAULT_LOG_RETENTION_DAYS),
        }
        if args.log_data_classification:
            tier_tags[LOG_CLASSIFICATION_TAG] = args.log_data_classification
        self.tags = tags_for(governance, workload=WORKLOAD, **tier_tags)
        self._tier_tags = tier_tags

        role = identity.role(WORKLOAD)
        instance_profile = identity.instance_profile(WORKLOAD)
        # S1: the model's prefix in the models bucket, read-only; nothing else holds data.
        self.models_grant = models.grant_read(role, prefix=f"{args.model_name}/", name=name)

        self.logs_key, self.log_group = encrypted_log_group(
            name,
            self,
            log_group_name=f"/aistack/{stack_id()}/{name}",
            region=args.region,
            governance=governance,
            retention_days=args.log_retention_days or DEFAULT_LOG_RETENTION_DAYS,
            tags=self.tags,
            allow_destroy=args.allow_destroy_logs,
        )
        self.log_group_name = self.log_group.name
        self.image_id = self._resolve_image()

        self.load_balancer = self._load_balancer(network, logs)
        self.load_balancer_arn = self.load_balancer.arn
        self.dns_name = self.load_balancer.dns_name

        self.target_groups = {}
        self.launch_templates = {}
        self.groups = {}
        self.scaling_policies = {}
        trusted = _alb_cidrs(network)
        for plan in versions:
            self._serve_version(plan, network, instance_profile, models, trusted)
        self.listener, self.redirect_listener = self._listeners()
        for plan in versions:
            self._scaling(plan)
        self.node_policy = self._node_policy(role)

        self.web_acl = self._waf()
        self.web_acl_arn = self.web_acl.arn
        self.alarms = self._alarms()
        self.dashboard = self._dashboard()
        self.dashboard_name = self.dashboard.dashboard_name
        self.rollback_command = self._rollback_command()
        scheme = "https" if args.certificate_arn else "http"
        self.endpoint = self.dns_name.apply(lambda dns: f"{scheme}://{dns}")

        self.register_outputs(
            {
                "endpoint": self.endpoint,
                "dns_name": self.dns_name,
                "load_balancer_arn": self.load_balancer_arn,
                "listener_arn": self.listener.arn,
                "internal": not args.public,
                "target_group_arns": {
                    v.version: self.target_groups[v.version].arn for v in versions
                },
                "auto_scaling_group_names": {
                    v.version: self.groups[v.version].name for v in versions
                },
                "versions": {
                    v.version: {
                        "weight": v.weight,
                        "min_nodes": v.min_nodes,
                        "max_nodes": v.max_nodes,
                        "standby": v.spec.standby,
                        "approved_by": v.spec.approved_by,
                        "instance_type": v.offer.name,
                    }
                    for v in versions
                },
                "image_id": self.image_id,
                "web_acl_arn": self.web_acl_arn,
                "log_group_name": self.log_group_name,
                "waf_log_group_name": self.waf_log_group_name,
                "dashboard_name": self.dashboard_name,
                "metrics_namespace": self.metrics_namespace,
                "request_logging": args.request_logging,
                "fallback": args.fallback,
                "rollback_command": self.rollback_command,
            }
        )

    # ---- capacity ---------------------------------------------------------------------------

    def quota_needs(self) -> list[QuotaNeed]:
        """What `aws.GpuQuota` must request: each version at its maximum, On-Demand (C1),
        and its instance refresh surge: at max_healthy_percentage 200 the refresh launches
        every replacement before terminating, up to twice the version's nodes."""
        return [
            QuotaNeed(
                pool=f"{self._name}-v{plan.slug}",
                instance_types=(plan.offer.name,),
                max_nodes=plan.max_nodes,
                market="on-demand",
                surge_nodes=plan.max_nodes * (REFRESH_MAX_HEALTHY_PERCENT - 100) // 100,
            )
            for plan in self.versions
        ]

    def _resolve_image(self) -> pulumi.Output[str]:
        image = self.args.machine_image
        if image.ami_id:
            return pulumi.Output.from_input(image.ami_id)
        return aws.ssm.get_parameter_output(
            name=image.ssm_parameter,
            region=self.region,
            opts=pulumi.InvokeOutputOptions(parent=self),
        ).value

    def _version_tags(self, plan: VersionPlan, **extra: str) -> dict[str, str]:
        version_tags = {
            MODEL_VERSION_TAG: plan.version,
            TRAFFIC_WEIGHT_TAG: str(plan.weight),
            STANDBY_TAG: plan.spec.standby,
            **extra,
        }
        if plan.spec.approved_by:
            version_tags[APPROVED_BY_TAG] = plan.spec.approved_by
        return tags_for(self.args.governance, workload=WORKLOAD, **self._tier_tags, **version_tags)

    def _serve_version(
        self,
        plan: VersionPlan,
        network: Any,
        instance_profile: aws.iam.InstanceProfile,
        models: DatasetBucket,
        trusted: tuple[str, ...],
    ) -> None:
        args, name, gateway = self.args, f"{self._name}-v{plan.slug}", self.gateway
        tags = self._version_tags(plan)
        self.target_groups[plan.version] = aws.lb.TargetGroup(
            f"{name}-tg",
            name_prefix=_prefix(self._name),
            port=gateway.listen_port,
            protocol="HTTP",
            target_type="instance",
            vpc_id=network.vpc_id,
            # Generations differ in length by orders of magnitude: send each request to
            # the node with the fewest in flight, not the next in turn.
            load_balancing_algorithm_type="least_outstanding_requests",
            # Requests in flight on a node leaving the group may finish.
            deregistration_delay=min(3600, gateway.upstream_timeout_seconds),
            health_check=aws.lb.TargetGroupHealthCheckArgs(
                enabled=True,
                path=gateway.health_path,
                port="traffic-port",
                protocol="HTTP",
                matcher="200",
                interval=15,
                timeout=5,
                healthy_threshold=2,
                unhealthy_threshold=3,
            ),
            stickiness=aws.lb.TargetGroupStickinessArgs(type="lb_cookie", enabled=False),
            region=self.region,
            tags=tags,
            opts=child_opts(self),
        )
        node = serving.ServingNode(
            tier=self._name,
            region=self.region,
            model_name=args.model_name,
            model_version=plan.version,
            models_bucket="",  # resolved below
            runtime=args.runtime,
            image=args.image,
            runtime_args=args.runtime_args,
            gpu_count=plan.offer.gpu_count,
            log_group="",  # resolved below
            metrics_namespace=self.metrics_namespace,
            quality_metric=args.quality.metric_name,
            gateway=gateway,
            gateway_image=args.gateway_image,
            request_logging=args.request_logging,
            trusted_proxies=trusted,
            model_load_timeout_seconds=args.boot_timeout_minutes * 60,
        )
        user_data = pulumi.Output.all(models.bucket_name, self.log_group.name).apply(
            lambda values: base64.b64encode(
                serving.render_serving_user_data(
                    replace(node, models_bucket=values[0], log_group=values[1])
                ).encode()
            ).decode()
        )
        # What policy rules read off the template: the image it serves (S2) and whether
        # the gateway caches (S4).
        template_tags = self._version_tags(
            plan,
            **{
                GATEWAY_CACHE_TAG: "on" if gateway.cache_enabled else "off",
                SERVING_IMAGE_TAG: args.image,
            },
        )
        self.launch_templates[plan.version] = template = gpu_launch_template(
            f"{name}-lt",
            parent=self,
            description=f"aistack serving {args.model_name} {plan.version} ({args.runtime})",
            region=self.region,
            image_id=self.image_id,
            instance_type=plan.offer.name,
            instance_profile_arn=instance_profile.arn,
            root_device_name=args.machine_image.root_device_name,
            root_volume_gb=args.root_volume_gb,
            user_data=user_data,
            instance_tags=tags,
            template_tags=template_tags,
            security_group_id=network.security_group_id(WORKLOAD),
            container_metadata_access=args.allow_container_metadata_access,
        )
        self.groups[plan.version] = aws.autoscaling.Group(
            f"{name}-asg",
            min_size=plan.min_nodes,
            max_size=plan.max_nodes,
            desired_capacity=plan.min_nodes,
            vpc_zone_identifiers=network.subnet_ids(WORKLOAD),
            launch_template=aws.autoscaling.GroupLaunchTemplateArgs(
                id=template.id,
                # The version number, not "$Latest": a new template version is then a change
                # of the group, which starts the instance refresh below.
                version=template.latest_version.apply(str),
            ),
            target_group_arns=[self.target_groups[plan.version].arn],
            health_check_type="ELB",
            health_check_grace_period=HEALTH_CHECK_GRACE_SECONDS,
            initial_lifecycle_hooks=[
                aws.autoscaling.GroupInitialLifecycleHookArgs(
                    name=serving.LIFECYCLE_HOOK,
                    lifecycle_transition="autoscaling:EC2_INSTANCE_LAUNCHING",
                    heartbeat_timeout=args.boot_timeout_minutes * 60,
                    # A node that never reports ready is terminated, never put in service.
                    default_result="ABANDON",
                )
            ],
            # Nodes join only once their model answers (the hook): `pulumi up` must not
            # wait for that.
            wait_for_capacity_timeout="0",
            instance_refresh=aws.autoscaling.GroupInstanceRefreshArgs(
                strategy="Rolling",
                preferences=aws.autoscaling.GroupInstanceRefreshPreferencesArgs(
                    # New nodes first: serving capacity never drops during a refresh.
                    min_healthy_percentage=100,
                    max_healthy_percentage=REFRESH_MAX_HEALTHY_PERCENT,
                    instance_warmup=str(HEALTH_CHECK_GRACE_SECONDS),
                ),
            ),
            enabled_metrics=list(ASG_METRICS),
            metrics_granularity=aws.autoscaling.MetricsGranularity.ONE_MINUTE,
            default_instance_warmup=HEALTH_CHECK_GRACE_SECONDS,
            tags=[
                aws.autoscaling.GroupTagArgs(key=key, value=value, propagate_at_launch=True)
                for key, value in sorted(tags.items())
            ],
            region=self.region,
            # Scaling owns the size between deployments.
            opts=child_opts(
                self,
                ignore_changes=["desiredCapacity"],
                # Nodes boot only once their routes and endpoints exist: a node that
                # cannot reach ECR or its model fails its boot and is replaced.
                depends_on=_ready(network),
            ),
        )

    def _scaling(self, plan: VersionPlan) -> None:
        target_group = self.target_groups[plan.version]
        self.scaling_policies[plan.version] = aws.autoscaling.Policy(
            f"{self._name}-v{plan.slug}-scaling",
            autoscaling_group_name=self.groups[plan.version].name,
            policy_type="TargetTrackingScaling",
            estimated_instance_warmup=HEALTH_CHECK_GRACE_SECONDS,
            target_tracking_configuration=aws.autoscaling.PolicyTargetTrackingConfigurationArgs(
                target_value=float(self.args.target_requests_per_node_per_minute),
                predefined_metric_specification=(
                    aws.autoscaling.PolicyTargetTrackingConfigurationPredefinedMetricSpecificationArgs(
                        predefined_metric_type="ALBRequestCountPerTarget",
                        resource_label=pulumi.Output.concat(
                            self.load_balancer.arn_suffix, "/", target_group.arn_suffix
                        ),
                    )
                ),
            ),
            region=self.region,
            # AWS accepts the resource label only once the target group is behind the
            # load balancer, i.e. once the listener forwards to it.
            opts=child_opts(self, depends_on=[self.listener]),
        )

    def _node_policy(self, role: aws.iam.Role) -> aws.iam.RolePolicy:
        group_arns = [group.arn for group in self.groups.values()]
        return aws.iam.RolePolicy(
            f"{self._name}-node",
            role=role.id,
            policy=policy_output(
                {
                    "Sid": "ShipLogs",
                    "Effect": "Allow",
                    "Action": list(_perms.LOGS_WRITE),
                    "Resource": pulumi.Output.concat(self.log_group.arn, ":*"),
                },
                {
                    "Sid": "ReportReadiness",
                    "Effect": "Allow",
                    "Action": [
                        "autoscaling:CompleteLifecycleAction",
                        "autoscaling:SetInstanceHealth",
                    ],
                    "Resource": group_arns,
                },
                {
                    "Sid": "FindOwnGroup",
                    "Effect": "Allow",
                    "Action": "autoscaling:DescribeAutoScalingInstances",
                    # Describe actions of EC2 Auto Scaling support no resource-level
                    # permissions: AWS requires "*". It reveals group names only.
                    "Resource": "*",
                },
                {
                    "Sid": "PublishModelQuality",
                    "Effect": "Allow",
                    "Action": "cloudwatch:PutMetricData",
                    # PutMetricData has no resource-level permissions ("*" is required);
                    # the condition confines it to this tier's namespace (G4).
                    "Resource": "*",
                    "Condition": {"StringEquals": {"cloudwatch:namespace": self.metrics_namespace}},
                },
            ),
            opts=child_opts(self),
        )

    # ---- the front: load balancer, listeners, WAF ---------------------------------------------

    def _load_balancer(self, network: Any, logs: DatasetBucket | None) -> aws.lb.LoadBalancer:
        args = self.args
        access_logs = None
        depends_on: list[pulumi.Resource] = []
        if logs is not None:
            access_logs = aws.lb.LoadBalancerAccessLogsArgs(
                bucket=logs.bucket.id, prefix="alb", enabled=True
            )
            # The load balancer checks at creation that it may write to the bucket.
            depends_on.append(logs.policy)
        return aws.lb.LoadBalancer(
            f"{self._name}-alb",
            name_prefix=_prefix(self._name),
            load_balancer_type="application",
            internal=not args.public,
            subnets=network.alb_subnet_ids,
            security_groups=[network.alb_security_group_id],
            drop_invalid_header_fields=True,
            # Longer than the gateway waits for the model, so a long non-streamed
            # generation is not cut by the load balancer first.
            idle_timeout=min(4000, self.gateway.upstream_timeout_seconds + 30),
            enable_deletion_protection=args.governance.environment == "prod",
            access_logs=access_logs,
            region=self.region,
            # The opt-out is recorded where rule AIS-D5-02 reads it.
            tags={**self.tags, PLAINTEXT_HTTP_TAG: "accepted"}
            if args.allow_plaintext_http and not args.certificate_arn
            else self.tags,
            opts=child_opts(self, depends_on=depends_on),
        )

    def _forward(self) -> aws.lb.ListenerDefaultActionArgs:
        return aws.lb.ListenerDefaultActionArgs(
            type="forward",
            forward=aws.lb.ListenerDefaultActionForwardArgs(
                target_groups=[
                    aws.lb.ListenerDefaultActionForwardTargetGroupArgs(
                        arn=self.target_groups[plan.version].arn, weight=plan.weight
                    )
                    for plan in self.versions
                ],
                # Off: a client pinned to a version would not follow a rollback.
                stickiness=aws.lb.ListenerDefaultActionForwardStickinessArgs(
                    enabled=False, duration=1
                ),
            ),
        )

    def _listeners(self) -> tuple[aws.lb.Listener, aws.lb.Listener | None]:
        args, here = self.args, child_opts(self)
        if not args.certificate_arn:
            listener = aws.lb.Listener(
                f"{self._name}-http",
                load_balancer_arn=self.load_balancer.arn,
                port=80,
                protocol="HTTP",
                default_actions=[self._forward()],
                region=self.region,
                tags=self.tags,
                opts=here,
            )
            return listener, None
        https = aws.lb.Listener(
            f"{self._name}-https",
            load_balancer_arn=self.load_balancer.arn,
            port=443,
            protocol="HTTPS",
            ssl_policy=TLS_POLICY,
            certificate_arn=args.certificate_arn,
            default_actions=[self._forward()],
            region=self.region,
            tags=self.tags,
            opts=here,
        )
        # Same logical name as the plain-HTTP listener: adding a certificate later turns
        # that listener into the redirect in place. Two names would mean creating the new
        # port-80 listener while the old one still holds the port (DuplicateListener).
        redirect = aws.lb.Listener(
            f"{self._name}-http",
            load_balancer_arn=self.load_balancer.arn,
            port=80,
            protocol="HTTP",
            default_actions=[
                aws.lb.ListenerDefaultActionArgs(
                    type="redirect",
                    redirect=aws.lb.ListenerDefaultActionRedirectArgs(
                        protocol="HTTPS", port="443", status_code="HTTP_301"
                    ),
                )
            ],
            region=self.region,
            tags=self.tags,
            opts=here,
        )
        return https, redirect

    def _waf(self) -> aws.wafv2.WebAcl:
        args, name, here = self.args, self._name, child_opts(self)

        def visibility(metric: str) -> aws.wafv2.WebAclRuleVisibilityConfigArgs:
            return aws.wafv2.WebAclRuleVisibilityConfigArgs(
                cloudwatch_metrics_enabled=True,
                metric_name=_metric_name(name, metric),
                sampled_requests_enabled=True,
            )

        rules = [
            aws.wafv2.WebAclRuleArgs(
                name="rate-limit-per-client-ip",
                priority=0,
                action=aws.wafv2.WebAclRuleActionArgs(
                    block=aws.wafv2.WebAclRuleActionBlockArgs(
                        custom_response=aws.wafv2.WebAclRuleActionBlockCustomResponseArgs(
                            response_code=429
                        )
                    )
                ),
                statement=aws.wafv2.WebAclRuleStatementArgs(
                    rate_based_statement=aws.wafv2.WebAclRuleStatementRateBasedStatementArgs(
                        aggregate_key_type="IP",
                        limit=args.waf_rate_limit,
                        evaluation_window_sec=300,
                    )
                ),
                visibility_config=visibility("rate-limit"),
            )
        ]
        for priority, group in enumerate(WAF_MANAGED_RULE_GROUPS, start=1):
            overrides = None
            if group == "AWSManagedRulesCommonRuleSet" and args.waf_count_only_rules:
                waf = aws.wafv2
                override = waf.WebAclRuleStatementManagedRuleGroupStatementRuleActionOverrideArgs
                action = waf.WebAclRuleStatementManagedRuleGroupStatementRuleActionOverrideActionToUseArgs  # noqa: E501
                count = waf.WebAclRuleStatementManagedRuleGroupStatementRuleActionOverrideActionToUseCountArgs  # noqa: E501
                overrides = [
                    override(name=rule_name, action_to_use=action(count=count()))
                    for rule_name in args.waf_count_only_rules
                ]
            rules.append(
                aws.wafv2.WebAclRuleArgs(
                    name=group,
                    priority=priority,
                    override_action=aws.wafv2.WebAclRuleOverrideActionArgs(
                        none=aws.wafv2.WebAclRuleOverrideActionNoneArgs()
                    ),
                    statement=aws.wafv2.WebAclRuleStatementArgs(
                        managed_rule_group_statement=(
                            aws.wafv2.WebAclRuleStatementManagedRuleGroupStatementArgs(
                                name=group, vendor_name="AWS", rule_action_overrides=overrides
                            )
                        )
                    ),
                    visibility_config=visibility(group),
                )
            )
        web_acl = aws.wafv2.WebAcl(
            f"{name}-waf",
            scope="REGIONAL",
            description=f"aistack inference tier {name}: per-IP rate limit, AWS managed rules",
            default_action=aws.wafv2.WebAclDefaultActionArgs(
                allow=aws.wafv2.WebAclDefaultActionAllowArgs()
            ),
            rules=rules,
            visibility_config=aws.wafv2.WebAclVisibilityConfigArgs(
                cloudwatch_metrics_enabled=True,
                metric_name=_metric_name(name, "waf"),
                sampled_requests_enabled=True,
            ),
            region=self.region,
            tags=self.tags,
            opts=here,
        )
        self.web_acl_association = aws.wafv2.WebAclAssociation(
            f"{name}-waf-alb",
            resource_arn=self.load_balancer.arn,
            web_acl_arn=web_acl.arn,
            region=self.region,
            opts=here,
        )
        self._waf_logging(web_acl)
        return web_acl

    def _waf_logging(self, web_acl: aws.wafv2.WebAcl) -> None:
        args, name = self.args, self._name
        # WAF delivers only to log groups whose name starts with aws-waf-logs-.
        self.waf_logs_key, self.waf_log_group = encrypted_log_group(
            f"{name}-waf",
            self,
            log_group_name=f"aws-waf-logs-{stack_id()}-{name}",
            region=self.region,
            governance=args.governance,
            retention_days=args.waf_log_retention_days,
            tags=self.tags,
            allow_destroy=args.allow_destroy_logs,
        )
        self.waf_log_group_name = self.waf_log_group.name
        account = aws.get_caller_identity_output(
            opts=pulumi.InvokeOutputOptions(parent=self)
        ).account_id
        # Written here, for this one group, so AWS does not widen an account-wide policy
        # on its own when logging is switched on.
        self.waf_log_delivery = aws.cloudwatch.LogResourcePolicy(
            f"{name}-waf-log-delivery",
            policy_name=f"aistack-waf-{stack_id()}-{name}"[:255],
            policy_document=policy_output(
                {
                    "Sid": "WafLogDelivery",
                    "Effect": "Allow",
                    "Principal": {"Service": "delivery.logs.amazonaws.com"},
                    "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                    "Resource": pulumi.Output.concat(self.waf_log_group.arn, ":*"),
                    "Condition": {
                        "StringEquals": {"aws:SourceAccount": account},
                        "ArnLike": {
                            "aws:SourceArn": pulumi.Output.concat(
                                "arn:aws:logs:", self.region, ":", account, ":*"
                            )
                        },
                    },
                }
            ),
            region=self.region,
            opts=child_opts(self),
        )
        headers = dict.fromkeys(["authorization", args.gateway.client_key_header.lower()])
        logging_filter = None
        if not args.waf_log_all_requests:
            condition = aws.wafv2.WebAclLoggingConfigurationLoggingFilterFilterConditionArgs
            action = (
                aws.wafv2.WebAclLoggingConfigurationLoggingFilterFilterConditionActionConditionArgs
            )
            logging_filter = aws.wafv2.WebAclLoggingConfigurationLoggingFilterArgs(
                default_behavior="DROP",
                filters=[
                    aws.wafv2.WebAclLoggingConfigurationLoggingFilterFilterArgs(
                        behavior="KEEP",
                        requirement="MEETS_ANY",
                        conditions=[
                            condition(action_condition=action(action=kind))
                            for kind in ("BLOCK", "COUNT")
                        ],
                    )
                ],
            )
        self.waf_logging = aws.wafv2.WebAclLoggingConfiguration(
            f"{name}-waf-logging",
            resource_arn=web_acl.arn,
            log_destination_configs=[self.waf_log_group.arn],
            # API keys travel in these headers; the logs must not become a key store.
            redacted_fields=[
                aws.wafv2.WebAclLoggingConfigurationRedactedFieldArgs(
                    single_header=aws.wafv2.WebAclLoggingConfigurationRedactedFieldSingleHeaderArgs(
                        name=header
                    )
                )
                for header in headers
            ],
            logging_filter=logging_filter,
            region=self.region,
            opts=child_opts(self, depends_on=[self.waf_log_delivery]),
        )

    # ---- monitoring (S5, G4) ----------------------------------------------------------------

    def _alarm(self, label: str, kind: str, **settings: Any) -> aws.cloudwatch.MetricAlarm:
        topic = [self.alarm_topic_arn] if self.alarm_topic_arn else None
        return aws.cloudwatch.MetricAlarm(
            f"{self._name}-{label}",
            alarm_actions=topic,
            ok_actions=topic,
            region=self.region,
            tags={**self.tags, **tags_for(self.args.governance, **{ALARM_KIND_TAG: kind})},
            opts=child_opts(self),
            **settings,
        )

    def _alarms(self) -> dict[str, aws.cloudwatch.MetricAlarm]:
        args, name = self.args, self._name
        lb = {"LoadBalancer": self.load_balancer.arn_suffix}
        alarms = {
            "latency-p99": self._alarm(
                "latency-p99",
                "latency",
                alarm_description=f"{name}: p99 latency above {args.latency_slo_ms} ms for 3 "
                "of 5 minutes (S5).",
                namespace=ALB_NAMESPACE,
                metric_name="TargetResponseTime",
                dimensions=lb,
                extended_statistic="p99",
                period=60,
                evaluation_periods=5,
                datapoints_to_alarm=3,
                comparison_operator="GreaterThanThreshold",
                threshold=args.latency_slo_ms / 1000,
                # No requests, no latency to judge.
                treat_missing_data="notBreaching",
            ),
            "error-rate": self._alarm(
                "error-rate",
                "error-rate",
                alarm_description=f"{name}: 5xx answers above {args.error_rate_percent:g}% of "
                "requests for 3 of 5 minutes (S5).",
                metric_queries=[
                    aws.cloudwatch.MetricAlarmMetricQueryArgs(
                        id="e1",
                        expression=ERROR_RATE_EXPRESSION,
                        label="5xx per cent of requests",
                        return_data=True,
                    ),
                    *(
                        aws.cloudwatch.MetricAlarmMetricQueryArgs(
                            id=metric_id,
                            metric=aws.cloudwatch.MetricAlarmMetricQueryMetricArgs(
                                namespace=ALB_NAMESPACE,
                                metric_name=metric,
                                dimensions=lb,
                                period=60,
                                stat="Sum",
                            ),
                        )
                        for metric_id, metric in (
                            ("m1", "HTTPCode_Target_5XX_Count"),
                            ("m2", "HTTPCode_ELB_5XX_Count"),
                            ("m3", "RequestCount"),
                        )
                    ),
                ],
                evaluation_periods=5,
                datapoints_to_alarm=3,
                comparison_operator="GreaterThanThreshold",
                threshold=args.error_rate_percent,
                treat_missing_data="notBreaching",
            ),
        }
        quality = args.quality
        for plan in self.versions:
            target_group = self.target_groups[plan.version]
            alarms[f"v{plan.slug}-unhealthy"] = self._alarm(
                f"v{plan.slug}-unhealthy",
                "unhealthy-hosts",
                alarm_description=f"{name} {plan.version}: a node fails the gateway health "
                "check (S5). Nodes join only once their model answers, so this is a node "
                "that stopped serving.",
                namespace=ALB_NAMESPACE,
                metric_name="UnHealthyHostCount",
                dimensions={**lb, "TargetGroup": target_group.arn_suffix},
                statistic="Maximum",
                period=60,
                evaluation_periods=5,
                datapoints_to_alarm=3,
                comparison_operator="GreaterThanThreshold",
                threshold=0,
                treat_missing_data="notBreaching",
            )
            if plan.weight == 0:
                continue  # No traffic, nothing to judge the model by.
            alarms[f"v{plan.slug}-quality"] = self._alarm(
                f"v{plan.slug}-quality",
                "model-quality",
                alarm_description=f"{name} {plan.version}: {quality.metric_name} "
                f"{quality.alarm_when} {quality.threshold:g} (G4). Published by the serving "
                f"code to {self.metrics_namespace} with ModelVersion={plan.version}.",
                namespace=self.metrics_namespace,
                metric_name=quality.metric_name,
                dimensions={"ModelVersion": plan.version},
                statistic=quality.statistic,
                period=quality.period_minutes * 60,
                evaluation_periods=quality.evaluation_periods,
                comparison_operator="LessThanThreshold"
                if quality.alarm_when == "below"
                else "GreaterThanThreshold",
                threshold=quality.threshold,
                treat_missing_data=quality.treat_missing_data,
            )
        return alarms

    def _dashboard(self) -> aws.cloudwatch.Dashboard:
        args, versions = self.args, self.versions
        names = [self.groups[plan.version].name for plan in versions]
        suffixes = [self.target_groups[plan.version].arn_suffix for plan in versions]

        def body(values: list[Any]) -> str:
            lb, groups, target_groups = values[0], values[1], values[2]
            return dashboard_body(
                region=self.region,
                load_balancer=lb,
                versions=[
                    VersionMetrics(
                        version=plan.version,
                        weight=plan.weight,
                        target_group=target_groups[i],
                        group_name=groups[i],
                        usd_per_hour=plan.offer.price(self.region),
                    )
                    for i, plan in enumerate(versions)
                ],
                metrics_namespace=self.metrics_namespace,
                quality_metric=args.quality.metric_name,
                latency_slo_ms=args.latency_slo_ms,
                error_rate_percent=args.error_rate_percent,
                title=f"{args.model_name} on {self._name} ({args.runtime})",
            )

        dashboard_name = re.sub(r"[^A-Za-z0-9_-]", "-", f"aistack-{stack_id()}-{self._name}")
        return aws.cloudwatch.Dashboard(
            f"{self._name}-dashboard",
            dashboard_name=dashboard_name[:255],
            dashboard_body=pulumi.Output.all(
                self.load_balancer.arn_suffix,
                pulumi.Output.all(*names),
                pulumi.Output.all(*suffixes),
            ).apply(body),
            region=self.region,
            opts=child_opts(self),
        )

    def _rollback_command(self) -> pulumi.Output[str]:
        """The AWS CLI call that moves all traffic to the previous version at once.

        "Previous" is the first weight-0 version with a warm node, else the first weight-0
        version. Make the same weight change in the stack's config afterwards, or the next
        change of the listener puts the old weights back.
        """
        standby = [p for p in self.versions if p.weight == 0]
        standby.sort(key=lambda p: p.spec.standby != "warm")
        if not standby:
            return pulumi.Output.from_input(
                "no previous version is kept (S6): add one with weight 0 to roll back to."
            )
        target = standby[0]
        arns = [self.target_groups[p.version].arn for p in self.versions]
        group = self.groups[target.version].name
        index = self.versions.index(target)

        def command(values: list[str]) -> str:
            listener, group_name, groups = values[0], values[1], values[2:]
            weights = ",".join(
                f'{{"TargetGroupArn":"{arn}","Weight":{100 if p is target else 0}}}'
                for p, arn in zip(self.versions, groups, strict=True)
            )
            scale = ""
            if target.min_nodes == 0:
                # A zero standby has no node: start one, and move traffic only once it
                # serves. Polled for as long as a boot may take (the `elbv2 wait` waiter
                # gives up after 10 minutes, long before a model is loaded); in a subshell
                # so giving up does not close the operator's shell.
                polls = self.args.boot_timeout_minutes * 2
                healthy = (
                    f"aws elbv2 describe-target-health --region {self.region} "
                    f"--target-group-arn {groups[index]} --query "
                    "'length(TargetHealthDescriptions[?TargetHealth.State==`healthy`])' "
                    "--output text"
                )
                scale = (
                    f"aws autoscaling update-auto-scaling-group --region {self.region} "
                    f"--auto-scaling-group-name {group_name} --min-size 1 && "
                    f'(n=0; until [ "$({healthy})" -ge 1 ]; do n=$((n+1)); '
                    f"if [ $n -gt {polls} ]; then echo 'version {target.version} is not "
                    "healthy: traffic not moved' >&2; exit 1; fi; sleep 30; done) && "
                )
            return (
                f"{scale}aws elbv2 modify-listener --region {self.region} --listener-arn "
                f'{listener} --default-actions \'[{{"Type":"forward","ForwardConfig":'
                f'{{"TargetGroups":[{weights}],"TargetGroupStickinessConfig":'
                '{"Enabled":false}}}]\''
            )

        return pulumi.Output.all(self.listener.arn, group, *arns).apply(command)

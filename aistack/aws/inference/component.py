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
an approver (G3). Why each choice: docs/components/aws/inference-tier.md.
"""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from aistack.aws import _perms
from aistack.aws._base import child_opts, policy_output, stack_id, tags_for
from aistack.aws._logs import encrypted_log_group
from aistack.aws._node import gpu_launch_template
from aistack.aws.inference import front, monitoring
from aistack.aws.inference import node as serving
from aistack.aws.inference.args import DEFAULT_LOG_RETENTION_DAYS, InferenceTierArgs
from aistack.aws.inference.planning import (
    ENCRYPT_IN_TRANSIT,
    TLS_CERTIFICATE,
    TLS_KEY,
    WORKLOAD,
    VersionPlan,
    plan_tier,
)
from aistack.contracts.aws import (
    APPROVED_BY_TAG,
    FALLBACK_TAG,
    GATEWAY_CACHE_TAG,
    LOG_CLASSIFICATION_TAG,
    LOG_RETENTION_TAG,
    MODEL_NAME_TAG,
    MODEL_VERSION_TAG,
    REQUEST_LOGGING_TAG,
    RUNTIME_TAG,
    SERVING_IMAGE_TAG,
    STANDBY_TAG,
    TIER_TAG,
    TRAFFIC_WEIGHT_TAG,
    AwsInstanceProfile,
    AwsRole,
    AwsServingNetwork,
    AwsWorkloadIdentity,
)
from aistack.contracts.capacity import CapacityNeed
from aistack.gateway import GatewayConfig

if TYPE_CHECKING:
    from aistack.aws.dataset_bucket import DatasetBucket

__all__ = [
    "APPROVED_BY_TAG",
    "ASG_METRICS",
    "FALLBACK_TAG",
    "GATEWAY_CACHE_TAG",
    "HEALTH_CHECK_GRACE_SECONDS",
    "InferenceTier",
    "LOG_CLASSIFICATION_TAG",
    "LOG_RETENTION_TAG",
    "MODEL_NAME_TAG",
    "MODEL_VERSION_TAG",
    "REFRESH_MAX_HEALTHY_PERCENT",
    "REQUEST_LOGGING_TAG",
    "RUNTIME_TAG",
    "SERVING_IMAGE_TAG",
    "STANDBY_TAG",
    "TIER_TAG",
    "TOKEN",
    "TRAFFIC_WEIGHT_TAG",
]

TOKEN = "aistack:index:AwsInferenceTier"

#: Instance refresh launches replacements first, up to twice the nodes; GpuQuota counts it.
REFRESH_MAX_HEALTHY_PERCENT = 200
#: Seconds a node may fail health checks right after joining before the group replaces it.
HEALTH_CHECK_GRACE_SECONDS = 120
#: Group metrics the dashboard reads (GroupTotalInstances: every node that bills).
ASG_METRICS = (
    aws.autoscaling.Metric.GROUP_DESIRED_CAPACITY,
    aws.autoscaling.Metric.GROUP_IN_SERVICE_INSTANCES,
    aws.autoscaling.Metric.GROUP_PENDING_INSTANCES,
    aws.autoscaling.Metric.GROUP_TOTAL_INSTANCES,
)


def _ready(network: AwsServingNetwork) -> list[pulumi.Resource]:
    """What nodes must wait for: the whole network component when one is given."""
    return [network] if isinstance(network, pulumi.Resource) else []


def _alb_cidrs(network: AwsServingNetwork) -> tuple[str, ...]:
    """The load balancer subnets' blocks: the only sources whose X-Forwarded-For is trusted."""
    layout = getattr(network, "plan", None)
    if layout is None:
        block = getattr(network, "cidr_block", None)
        return (str(block),) if block else ()
    kind = "public" if layout.alb_public else "alb"
    return tuple(layout.cidrs[(kind, zone)] for zone in layout.alb_zones)


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
        network: AwsServingNetwork | None = None,
        identity: AwsWorkloadIdentity | None = None,
        models: DatasetBucket | None = None,
        logs: DatasetBucket | None = None,
        alarm_topic_arn: pulumi.Input[str] | None = None,
    ) -> None:
        """`alarm_topic_arn` (e.g. `budget.alert_topic_arn`) may be an Output; the args field
        of the same name takes a literal ARN from config."""

        # Everything is checked, and every version planned, before anything exists.
        def checks(valid: InferenceTierArgs) -> tuple[list[VersionPlan], GatewayConfig]:
            # Run only with every wiring keyword given (validate_with checks them first).
            assert network is not None and models is not None
            return plan_tier(name, valid, network, models, logs)

        args, (versions, gateway) = InferenceTierArgs.validate_with(
            args,
            checks,
            where=name,
            wiring={"network": network, "identity": identity, "models": models},
        )
        # validate_with refused any of them missing, naming the keyword.
        assert network is not None and identity is not None and models is not None
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
        # Confidential or restricted data is encrypted on the hop from the load balancer
        # to the node as well (checkov CKV_AWS_378): HTTPS target groups and health checks,
        # the gateway listening with TLS on a certificate the node makes at boot.
        self.target_protocol = (
            "HTTPS" if args.governance.data_classification in ENCRYPT_IN_TRANSIT else "HTTP"
        )
        if self.target_protocol == "HTTPS":
            gateway = gateway.model_copy(
                update={"tls_certificate": TLS_CERTIFICATE, "tls_certificate_key": TLS_KEY}
            )
        self.gateway = gateway
        self.metrics_namespace = f"aistack/{stack_id()}/{name}"
        self._tag_tier()

        role = identity.role(WORKLOAD)
        instance_profile = identity.instance_profile(WORKLOAD)
        # S1: the model's prefix in the models bucket, read-only; nothing else holds data.
        self.models_grant = models.grant_read(role, prefix=f"{args.model_name}/", name=name)
        self._logs()
        self.image_id = self._resolve_image()

        # The load balancer first: each version's target group and scaling refer to it.
        self.load_balancer = front.load_balancer(
            self, name, args, network=network, logs=logs, gateway=gateway, tags=self.tags
        )
        self.load_balancer_arn = self.load_balancer.arn
        self.dns_name = self.load_balancer.dns_name
        self._serve_versions(network, instance_profile, models)
        self.node_policy = self._node_policy(role)
        self._waf()
        self._monitoring()
        self.rollback_command = self._rollback_command()
        scheme = "https" if args.certificate_arn else "http"
        self.endpoint = self.dns_name.apply(lambda dns: f"{scheme}://{dns}")
        self._outputs()

    # ---- the steps, in the order they run ----------------------------------------------------

    def _tag_tier(self) -> None:
        # What policy rules read off every resource of the tier: the model, the runtime and
        # the choices of G2 and G5.
        args = self.args
        tier_tags: dict[str, str] = {
            TIER_TAG: self._name,
            MODEL_NAME_TAG: args.model_name,
            RUNTIME_TAG: args.runtime,
            REQUEST_LOGGING_TAG: args.request_logging,
            FALLBACK_TAG: args.fallback,
            LOG_RETENTION_TAG: str(args.log_retention_days or DEFAULT_LOG_RETENTION_DAYS),
        }
        if args.log_data_classification:
            tier_tags[LOG_CLASSIFICATION_TAG] = args.log_data_classification
        self.tags = tags_for(args.governance, workload=WORKLOAD, **tier_tags)
        self._tier_tags = tier_tags

    def _logs(self) -> None:
        # The nodes' and gateways' logs, kept `log_retention_days` (G2) under their own key.
        args = self.args
        self.logs_key, self.log_group = encrypted_log_group(
            self._name,
            self,
            log_group_name=f"/aistack/{stack_id()}/{self._name}",
            region=args.region,
            governance=args.governance,
            retention_days=args.log_retention_days or DEFAULT_LOG_RETENTION_DAYS,
            tags=self.tags,
            allow_destroy=args.allow_destroy_logs,
        )
        self.log_group_name = self.log_group.name

    def _serve_versions(
        self,
        network: AwsServingNetwork,
        instance_profile: AwsInstanceProfile,
        models: DatasetBucket,
    ) -> None:
        # Every version's nodes, then the listener that forwards to all of them, then each
        # version's scaling, which AWS accepts only once its target group is forwarded to.
        self.target_groups = {}
        self.launch_templates = {}
        self.groups = {}
        self.scaling_policies = {}
        trusted = _alb_cidrs(network)
        for plan in self.versions:
            self._serve_version(plan, network, instance_profile, models, trusted)
        self.listener, self.redirect_listener = front.listeners(
            self,
            self._name,
            self.args,
            load_balancer=self.load_balancer,
            versions=self.versions,
            target_groups=self.target_groups,
            tags=self.tags,
        )
        for plan in self.versions:
            self._scaling(plan)

    def _waf(self) -> None:
        guard = front.waf(
            self, self._name, self.args, load_balancer=self.load_balancer, tags=self.tags
        )
        self.web_acl = guard.web_acl
        self.web_acl_arn = guard.web_acl.arn
        self.web_acl_association = guard.association
        self.waf_logs_key, self.waf_log_group = guard.logs_key, guard.log_group
        self.waf_log_group_name = guard.log_group.name
        self.waf_log_delivery = guard.log_delivery
        self.waf_logging = guard.logging

    def _monitoring(self) -> None:
        # S5 and G4: alarms on latency, errors, unhealthy nodes and model quality; a dashboard.
        self.alarms = monitoring.alarms(
            self,
            self._name,
            self.args,
            load_balancer=self.load_balancer,
            target_groups=self.target_groups,
            versions=self.versions,
            metrics_namespace=self.metrics_namespace,
            tags=self.tags,
            alarm_topic_arn=self.alarm_topic_arn,
        )
        self.dashboard = monitoring.dashboard(
            self,
            self._name,
            self.args,
            load_balancer=self.load_balancer,
            groups=self.groups,
            target_groups=self.target_groups,
            versions=self.versions,
            metrics_namespace=self.metrics_namespace,
        )
        self.dashboard_name = self.dashboard.dashboard_name

    def _outputs(self) -> None:
        args, versions = self.args, self.versions
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

    def quota_needs(self) -> list[CapacityNeed]:
        """What `aws.GpuQuota` must request: each version at its maximum, On-Demand (C1),
        and its instance refresh surge: at max_healthy_percentage 200 the refresh launches
        every replacement before terminating, up to twice the version's nodes."""
        return [
            CapacityNeed(
                pool=f"{self._name}-v{plan.slug}",
                machine_types=(plan.offer.name,),
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
        network: AwsServingNetwork,
        instance_profile: AwsInstanceProfile,
        models: DatasetBucket,
        trusted: tuple[str, ...],
    ) -> None:
        args, name, gateway = self.args, f"{self._name}-v{plan.slug}", self.gateway
        tags = self._version_tags(plan)
        self.target_groups[plan.version] = aws.lb.TargetGroup(
            f"{name}-tg",
            name_prefix=front.lb_name_prefix(self._name),
            port=gateway.listen_port,
            protocol=self.target_protocol,
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
                protocol=self.target_protocol,
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

    def _node_policy(self, role: AwsRole) -> aws.iam.RolePolicy:
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

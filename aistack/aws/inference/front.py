"""The front of `aws.InferenceTier`: the load balancer, its listeners and the WAF.

An Application Load Balancer (internal unless asked otherwise, HTTPS when given a
certificate, invalid headers dropped, access logs) forwards to every version's target group
by weight, so a rollback is a weight change (S6). A WAF web ACL in front limits each client
IP (429, S3), runs AWS's managed rules and logs what it blocks or counts, with the API key
headers redacted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import pulumi
import pulumi_aws as aws

from aistack.aws._base import child_opts, policy_output, stack_id
from aistack.aws._logs import encrypted_log_group
from aistack.aws.inference.args import InferenceTierArgs
from aistack.aws.inference.planning import VersionPlan
from aistack.contracts.aws import PLAINTEXT_HTTP_TAG, AwsServingNetwork
from aistack.gateway import GatewayConfig

if TYPE_CHECKING:
    from aistack.aws.dataset_bucket import DatasetBucket

__all__ = [
    "PLAINTEXT_HTTP_TAG",
    "TLS_POLICY",
    "WAF_MANAGED_RULE_GROUPS",
    "Waf",
    "forward_action",
    "lb_name_prefix",
    "listeners",
    "load_balancer",
    "waf",
]

#: TLS 1.3 with TLS 1.2 fallback, forward-secret ciphers only.
TLS_POLICY = "ELBSecurityPolicy-TLS13-1-2-2021-06"
#: On the load balancer when allow_plaintext_http let it serve confidential data over HTTP.
WAF_MANAGED_RULE_GROUPS = ("AWSManagedRulesCommonRuleSet", "AWSManagedRulesKnownBadInputsRuleSet")


@dataclass(frozen=True)
class Waf:
    """The web ACL, its association with the load balancer, and its logs."""

    web_acl: aws.wafv2.WebAcl
    association: aws.wafv2.WebAclAssociation
    logs_key: aws.kms.Key
    log_group: aws.cloudwatch.LogGroup
    log_delivery: aws.cloudwatch.LogResourcePolicy
    logging: aws.wafv2.WebAclLoggingConfiguration


def lb_name_prefix(name: str) -> str:
    """A name_prefix for load balancer resources (at most six characters, AWS appends
    random ones): their names stop at 32 characters, which logical names would overrun."""
    return (re.sub(r"[^A-Za-z0-9]", "", name)[:5] or "ais") + "-"


def _metric_name(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", "-".join(parts))[:128]


def load_balancer(
    tier: pulumi.Resource,
    name: str,
    args: InferenceTierArgs,
    *,
    network: AwsServingNetwork,
    logs: DatasetBucket | None,
    gateway: GatewayConfig,
    tags: dict[str, str],
) -> aws.lb.LoadBalancer:
    """The Application Load Balancer: internal unless `public`, invalid headers dropped,
    access logs to the stack's logs bucket when given."""
    access_logs = None
    depends_on: list[pulumi.Resource] = []
    if logs is not None:
        access_logs = aws.lb.LoadBalancerAccessLogsArgs(
            bucket=logs.bucket.id, prefix="alb", enabled=True
        )
        # The load balancer checks at creation that it may write to the bucket.
        depends_on.append(logs.policy)
    return aws.lb.LoadBalancer(
        f"{name}-alb",
        name_prefix=lb_name_prefix(name),
        load_balancer_type="application",
        internal=not args.public,
        subnets=network.alb_subnet_ids,
        # Not None: plan_tier refuses a network without one.
        security_groups=[cast(pulumi.Input[str], network.alb_security_group_id)],
        drop_invalid_header_fields=True,
        # Longer than the gateway waits for the model, so a long non-streamed
        # generation is not cut by the load balancer first.
        idle_timeout=min(4000, gateway.upstream_timeout_seconds + 30),
        enable_deletion_protection=args.governance.environment == "prod",
        access_logs=access_logs,
        region=args.region,
        # The opt-out is recorded where rule AIS-D5-02 reads it.
        tags={**tags, PLAINTEXT_HTTP_TAG: "accepted"}
        if args.allow_plaintext_http and not args.certificate_arn
        else tags,
        opts=child_opts(tier, depends_on=depends_on),
    )


def forward_action(
    versions: Sequence[VersionPlan], target_groups: Mapping[str, aws.lb.TargetGroup]
) -> aws.lb.ListenerDefaultActionArgs:
    """One forward to every version's target group, by its weight (S6)."""
    return aws.lb.ListenerDefaultActionArgs(
        type="forward",
        forward=aws.lb.ListenerDefaultActionForwardArgs(
            target_groups=[
                aws.lb.ListenerDefaultActionForwardTargetGroupArgs(
                    arn=target_groups[plan.version].arn, weight=plan.weight
                )
                for plan in versions
            ],
            # Off: a client pinned to a version would not follow a rollback.
            stickiness=aws.lb.ListenerDefaultActionForwardStickinessArgs(enabled=False, duration=1),
        ),
    )


def listeners(
    tier: pulumi.Resource,
    name: str,
    args: InferenceTierArgs,
    *,
    load_balancer: aws.lb.LoadBalancer,
    versions: Sequence[VersionPlan],
    target_groups: Mapping[str, aws.lb.TargetGroup],
    tags: dict[str, str],
) -> tuple[aws.lb.Listener, aws.lb.Listener | None]:
    """The listener that forwards (HTTPS with a certificate, else HTTP), and with a
    certificate the HTTP listener that redirects to it."""
    here = child_opts(tier)
    if not args.certificate_arn:
        listener = aws.lb.Listener(
            f"{name}-http",
            load_balancer_arn=load_balancer.arn,
            port=80,
            protocol="HTTP",
            default_actions=[forward_action(versions, target_groups)],
            region=args.region,
            tags=tags,
            opts=here,
        )
        return listener, None
    https = aws.lb.Listener(
        f"{name}-https",
        load_balancer_arn=load_balancer.arn,
        port=443,
        protocol="HTTPS",
        ssl_policy=TLS_POLICY,
        certificate_arn=args.certificate_arn,
        default_actions=[forward_action(versions, target_groups)],
        region=args.region,
        tags=tags,
        opts=here,
    )
    # Same logical name as the plain-HTTP listener: adding a certificate later turns
    # that listener into the redirect in place. Two names would mean creating the new
    # port-80 listener while the old one still holds the port (DuplicateListener).
    redirect = aws.lb.Listener(
        f"{name}-http",
        load_balancer_arn=load_balancer.arn,
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
        region=args.region,
        tags=tags,
        opts=here,
    )
    return https, redirect


def waf(
    tier: pulumi.Resource,
    name: str,
    args: InferenceTierArgs,
    *,
    load_balancer: aws.lb.LoadBalancer,
    tags: dict[str, str],
) -> Waf:
    """The web ACL in front of the load balancer (a per-IP rate limit answering 429, S3;
    AWS managed rules), and its logs."""
    here = child_opts(tier)

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
            action = (
                waf.WebAclRuleStatementManagedRuleGroupStatementRuleActionOverrideActionToUseArgs
            )  # noqa: E501
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
        region=args.region,
        tags=tags,
        opts=here,
    )
    association = aws.wafv2.WebAclAssociation(
        f"{name}-waf-alb",
        resource_arn=load_balancer.arn,
        web_acl_arn=web_acl.arn,
        region=args.region,
        opts=here,
    )
    logs_key, log_group, log_delivery, logging = _waf_logging(tier, name, args, web_acl, tags)
    return Waf(web_acl, association, logs_key, log_group, log_delivery, logging)


def _waf_logging(
    tier: pulumi.Resource,
    name: str,
    args: InferenceTierArgs,
    web_acl: aws.wafv2.WebAcl,
    tags: dict[str, str],
) -> tuple[
    aws.kms.Key,
    aws.cloudwatch.LogGroup,
    aws.cloudwatch.LogResourcePolicy,
    aws.wafv2.WebAclLoggingConfiguration,
]:
    # WAF delivers only to log groups whose name starts with aws-waf-logs-.
    logs_key, log_group = encrypted_log_group(
        f"{name}-waf",
        tier,
        log_group_name=f"aws-waf-logs-{stack_id()}-{name}",
        region=args.region,
        governance=args.governance,
        retention_days=args.waf_log_retention_days,
        tags=tags,
        allow_destroy=args.allow_destroy_logs,
    )
    account = aws.get_caller_identity_output(
        opts=pulumi.InvokeOutputOptions(parent=tier)
    ).account_id
    partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=tier)).partition
    # Written here, for this one group, so AWS does not widen an account-wide policy
    # on its own when logging is switched on.
    log_delivery = aws.cloudwatch.LogResourcePolicy(
        f"{name}-waf-log-delivery",
        policy_name=f"aistack-waf-{stack_id()}-{name}"[:255],
        policy_document=policy_output(
            {
                "Sid": "WafLogDelivery",
                "Effect": "Allow",
                "Principal": {"Service": "delivery.logs.amazonaws.com"},
                "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                "Resource": pulumi.Output.concat(log_group.arn, ":*"),
                "Condition": {
                    "StringEquals": {"aws:SourceAccount": account},
                    "ArnLike": {
                        "aws:SourceArn": pulumi.Output.format(
                            "arn:{0}:logs:{1}:{2}:*", partition, args.region, account
                        )
                    },
                },
            }
        ),
        region=args.region,
        opts=child_opts(tier),
    )
    headers = dict.fromkeys(["authorization", args.gateway.client_key_header.lower()])
    logging_filter = None
    if not args.waf_log_all_requests:
        condition = aws.wafv2.WebAclLoggingConfigurationLoggingFilterFilterConditionArgs
        action = aws.wafv2.WebAclLoggingConfigurationLoggingFilterFilterConditionActionConditionArgs
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
    logging = aws.wafv2.WebAclLoggingConfiguration(
        f"{name}-waf-logging",
        resource_arn=web_acl.arn,
        log_destination_configs=[log_group.arn],
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
        region=args.region,
        opts=child_opts(tier, depends_on=[log_delivery]),
    )
    return logs_key, log_group, log_delivery, logging

"""`aws.BudgetGuard`: the budgets, the anomaly monitor, the alert topics and their key,
and the kill switch's function, queue, alarm and permissions."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pulumi
import pulumi_aws as aws

from aistack.aws._base import child_opts, policy_output, stateful_opts, tags_for
from aistack.aws._kms import customer_key
from aistack.aws.budget_guard.args import BudgetGuardArgs, _usd, _validate, cost_filter_value
from aistack.aws.budget_guard.kill_switch import (
    _MUTATING_RESOURCES,
    _UNTAGGED_RESOURCE_ACTIONS,
    _handler_permissions,
    handler_code,
)
from aistack.config import STACK_TAG

#: Key administration without use of the key: the services below encrypt and decrypt; no
#: IAM principal can read alert contents through a broad IAM grant.
KEY_ADMIN_ACTIONS = (
    "kms:Create*",
    "kms:Describe*",
    "kms:Enable*",
    "kms:List*",
    "kms:Put*",
    "kms:Update*",
    "kms:Revoke*",
    "kms:Disable*",
    "kms:Get*",
    "kms:Delete*",
    "kms:TagResource",
    "kms:UntagResource",
    "kms:ScheduleKeyDeletion",
    "kms:CancelKeyDeletion",
)
BUDGETS_PRINCIPAL = "budgets.amazonaws.com"
COST_ALERTS_PRINCIPAL = "costalerts.amazonaws.com"
#: CloudWatch alarms of the stack (GPU starvation, serving latency) use the alert topic too.
CLOUDWATCH_PRINCIPAL = "cloudwatch.amazonaws.com"
#: Longest an SQS queue keeps a message: the failed budget event waits two weeks for a human.
_DLQ_RETENTION_SECONDS = 14 * 24 * 3600


class BudgetGuard(pulumi.ComponentResource):
    """Monthly and daily budgets, anomaly alerts and an optional training kill switch."""

    monthly_budget: aws.budgets.Budget
    daily_budget: aws.budgets.Budget
    monthly_budget_name: pulumi.Output[str]
    daily_budget_name: pulumi.Output[str]
    alert_topic_arn: pulumi.Output[str]
    kms_key_arn: pulumi.Output[str]
    anomaly_monitor_arn: pulumi.Output[str]
    anomaly_subscription_arn: pulumi.Output[str]
    kill_switch_topic_arn: pulumi.Output[str] | None
    kill_switch_function_name: pulumi.Output[str] | None
    kill_switch_function_arn: pulumi.Output[str] | None

    def __init__(
        self,
        name: str,
        args: BudgetGuardArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        args = BudgetGuardArgs.validate_with(
            args, lambda valid: _validate(name, valid), where=name
        )[0]

        super().__init__(
            "aistack:index:AwsBudgetGuard",
            name,
            {"region": args.region, "monthlyLimit": args.monthly_limit},
            opts,
        )
        self.args = args
        self.region = args.region
        tags = tags_for(args.governance, workload="cost-control")
        # The value every resource of this stack carries in its stack tag, as tagged.
        self.stack = tags[STACK_TAG]
        identity = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self))
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self))
        account, self._partition = identity.account_id, partition.partition
        # aws-cn and aws-us-gov differ in the service domain too (amazonaws.com.cn).
        self._dns_suffix = partition.dns_suffix
        self._account = account

        kill_fn_name = _physical_name(self.stack, name, "kill-switch", limit=64)
        # A prefix, not a fixed name: the group is kept on `pulumi destroy`, and a fixed name
        # would make the next `pulumi up` fail with ResourceAlreadyExistsException. The key
        # policy exists before the group, so it names the prefix.
        kill_log_group = f"/aws/lambda/{kill_fn_name}-"
        kill_log_group_arns = pulumi.Output.format(
            "arn:{0}:logs:{1}:{2}:log-group:{3}*",
            self._partition,
            args.region,
            account,
            kill_log_group,
        )

        # The role exists before the key, whose policy names it (for the dead-letter queue).
        self.kill_switch_role: aws.iam.Role | None = None
        if args.kill_switch:
            self.kill_switch_role = aws.iam.Role(
                f"{name}-kill-switch-role",
                description=f"aistack budget kill switch for stack {self.stack}",
                assume_role_policy=policy_output(
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "lambda.amazonaws.com"},
                        "Action": "sts:AssumeRole",
                    }
                ),
                tags=tags,
                opts=child_opts(self),
            )

        # One key for the topics, the kill switch's logs and its dead-letter queue. It
        # outlives the stack only when it encrypts retained logs: a topic's messages are
        # gone within hours.
        key_opts = (
            stateful_opts(self, args.governance, allow_destroy=args.allow_destroy_with_logs)
            if args.kill_switch
            else child_opts(self)
        )
        self.kms_key = customer_key(
            f"{name}-key",
            description=f"aistack budget alerts {self.stack}/{name}",
            policy=self._key_policy(
                kill_log_group_arns if args.kill_switch else None,
                self.kill_switch_role.arn if self.kill_switch_role is not None else None,
            ),
            region=args.region,
            tags=tags,
            opts=key_opts,
        )
        self.kms_key_arn = self.kms_key.arn

        self.alert_topic, self.alert_topic_policy = self._topic(
            f"{name}-alerts",
            tags,
            publishers=(BUDGETS_PRINCIPAL, COST_ALERTS_PRINCIPAL, CLOUDWATCH_PRINCIPAL),
        )
        self.alert_topic_arn = self.alert_topic.arn
        self.email_subscriptions: list[aws.sns.TopicSubscription] = []
        if args.subscribe_emails_to_topic:
            for email in args.alert_emails:
                # Named by address, not position: removing one must not re-create the rest
                # (each re-created subscription needs confirming again).
                self.email_subscriptions.append(
                    aws.sns.TopicSubscription(
                        f"{name}-alerts-{_slug(email)}",
                        topic=self.alert_topic.arn,
                        protocol="email",
                        endpoint=email,
                        region=args.region,
                        opts=child_opts(self),
                    )
                )

        self.kill_switch_topic: aws.sns.Topic | None = None
        self.kill_switch_topic_arn = None
        self.kill_switch_function: aws.lambda_.Function | None = None
        self.kill_switch_function_name = None
        self.kill_switch_function_arn = None
        topic_policies = [self.alert_topic_policy]
        if args.kill_switch:
            # A topic of its own, fed by nothing but the monthly 100 % ACTUAL notification:
            # the 50/80 % and forecast alerts can never reach the Lambda.
            self.kill_switch_topic, kill_policy = self._topic(
                f"{name}-kill-switch-topic", tags, publishers=(BUDGETS_PRINCIPAL,)
            )
            self.kill_switch_topic_arn = self.kill_switch_topic.arn
            topic_policies.append(kill_policy)
            self._kill_switch(name, kill_fn_name, kill_log_group, tags)

        self.cost_allocation_tag: aws.costexplorer.CostAllocationTag | None = None
        if args.activate_cost_allocation_tag:
            # AWS lists a tag key for activation only once it has appeared in billing data,
            # up to 24 hours after the first resource carrying it exists. On a new account
            # the first `pulumi up` can fail here; run it again the next day. Retained on
            # delete: the tag is account-wide and other stacks' budgets filter on it.
            self.cost_allocation_tag = aws.costexplorer.CostAllocationTag(
                f"{name}-cost-allocation-tag",
                tag_key=STACK_TAG,
                status="Active",
                opts=child_opts(self, retain_on_delete=True),
            )

        # Budgets do not wait for the tag activation: they can exist (reporting $0) before
        # it, so a first run on a new account still gets them. They wait for the topic
        # policies, as AWS checks at creation that Budgets may publish to the topics.
        budget_opts = child_opts(self, depends_on=topic_policies)
        cost_filters = [
            aws.budgets.BudgetCostFilterArgs(
                name="TagKeyValue", values=[cost_filter_value(self.stack)]
            )
        ]
        # Gross spend: credits and refunds must not hide a runaway training job.
        cost_types = aws.budgets.BudgetCostTypesArgs(include_credit=False, include_refund=False)
        self.monthly_budget = aws.budgets.Budget(
            f"{name}-monthly",
            name=_physical_name(self.stack, name, "monthly", limit=100),
            budget_type="COST",
            time_unit="MONTHLY",
            limit_amount=_usd(args.monthly_limit),
            limit_unit="USD",
            cost_filters=cost_filters,
            cost_types=cost_types,
            notifications=self._monthly_notifications(),
            tags=tags,
            opts=budget_opts,
        )
        self.daily_budget = aws.budgets.Budget(
            f"{name}-daily",
            name=_physical_name(self.stack, name, "daily", limit=100),
            budget_type="COST",
            time_unit="DAILY",
            limit_amount=_usd(args.effective_daily_limit()),
            limit_unit="USD",
            cost_filters=cost_filters,
            cost_types=cost_types,
            # AWS Budgets has no forecast for daily budgets: actual only.
            notifications=[self._notification("ACTUAL", args.daily_actual_threshold)],
            tags=tags,
            opts=budget_opts,
        )
        self.monthly_budget_name = self.monthly_budget.name
        self.daily_budget_name = self.daily_budget.name

        self._anomaly_detection(name, tags)

        outputs: dict[str, Any] = {
            "monthly_budget_name": self.monthly_budget_name,
            "daily_budget_name": self.daily_budget_name,
            "alert_topic_arn": self.alert_topic_arn,
            "kms_key_arn": self.kms_key_arn,
            "anomaly_monitor_arn": self.anomaly_monitor_arn,
            "anomaly_subscription_arn": self.anomaly_subscription_arn,
            "cost_filter": cost_filter_value(self.stack),
            "kill_switch": args.kill_switch,
        }
        if args.kill_switch:
            outputs |= {
                "kill_switch_topic_arn": self.kill_switch_topic_arn,
                "kill_switch_function_name": self.kill_switch_function_name,
                "kill_switch_function_arn": self.kill_switch_function_arn,
            }
        self.register_outputs(outputs)

    # ---- budgets -------------------------------------------------------------------------

    def _notification(
        self, kind: str, threshold: float, topic: pulumi.Output[str] | None = None
    ) -> aws.budgets.BudgetNotificationArgs:
        return aws.budgets.BudgetNotificationArgs(
            comparison_operator="GREATER_THAN",
            threshold=threshold,
            threshold_type="PERCENTAGE",
            notification_type=kind,
            # Mailed directly too: needs no confirmation, and survives a broken topic.
            subscriber_email_addresses=list(self.args.alert_emails),
            subscriber_sns_topic_arns=[topic if topic is not None else self.alert_topic.arn],
        )

    def _monthly_notifications(self) -> list[aws.budgets.BudgetNotificationArgs]:
        notifications = []
        for threshold in self.args.monthly_actual_thresholds:
            # AWS allows one SNS topic per notification: with the kill switch on, the 100 %
            # ACTUAL alert goes to the kill switch's topic instead of the alert topic. The
            # addresses still get it directly.
            topic = (
                self.kill_switch_topic.arn
                if self.kill_switch_topic is not None and threshold == 100
                else None
            )
            notifications.append(self._notification("ACTUAL", threshold, topic))
        notifications.append(self._notification("FORECASTED", self.args.monthly_forecast_threshold))
        return notifications

    # ---- anomaly detection ---------------------------------------------------------------

    def _anomaly_detection(self, name: str, tags: dict[str, str]) -> None:
        args = self.args
        self.anomaly_monitor: aws.costexplorer.AnomalyMonitor | None = None
        if args.anomaly_monitor_arn:
            self.anomaly_monitor_arn = pulumi.Output.from_input(args.anomaly_monitor_arn)
        else:
            # CUSTOM on the stack tag, not DIMENSIONAL/SERVICE: AWS allows one dimensional
            # monitor per dimension per account (many accounts already have the default
            # one), and a service monitor would report other teams' spikes too.
            self.anomaly_monitor = aws.costexplorer.AnomalyMonitor(
                f"{name}-anomaly-monitor",
                name=_physical_name(self.stack, name, limit=1024),
                monitor_type="CUSTOM",
                monitor_specification=json.dumps(
                    {"Tags": {"Key": STACK_TAG, "Values": [self.stack], "MatchOptions": ["EQUALS"]}}
                ),
                tags=tags,
                opts=child_opts(
                    self,
                    depends_on=[self.cost_allocation_tag] if self.cost_allocation_tag else [],
                ),
            )
            self.anomaly_monitor_arn = self.anomaly_monitor.arn

        if args.anomaly_frequency == "IMMEDIATE":
            subscribers = [
                aws.costexplorer.AnomalySubscriptionSubscriberArgs(
                    type="SNS", address=self.alert_topic.arn
                )
            ]
        else:
            subscribers = [
                aws.costexplorer.AnomalySubscriptionSubscriberArgs(type="EMAIL", address=email)
                for email in args.alert_emails
            ]
        expression = aws.costexplorer.AnomalySubscriptionThresholdExpressionArgs
        dimension = aws.costexplorer.AnomalySubscriptionThresholdExpressionDimensionArgs
        self.anomaly_subscription = aws.costexplorer.AnomalySubscription(
            f"{name}-anomaly-subscription",
            name=_physical_name(self.stack, name, "anomalies", limit=1024),
            frequency=args.anomaly_frequency,
            monitor_arn_lists=[self.anomaly_monitor_arn],
            subscribers=subscribers,
            threshold_expression=expression(
                dimension=dimension(
                    key="ANOMALY_TOTAL_IMPACT_ABSOLUTE",
                    match_options=["GREATER_THAN_OR_EQUAL"],
                    values=[_usd(args.anomaly_threshold_usd)],
                )
            ),
            tags=tags,
            opts=child_opts(self, depends_on=[self.alert_topic_policy]),
        )
        self.anomaly_subscription_arn = self.anomaly_subscription.arn

    # ---- topics and key ------------------------------------------------------------------

    def _topic(
        self, name: str, tags: dict[str, str], *, publishers: tuple[str, ...]
    ) -> tuple[aws.sns.Topic, aws.sns.TopicPolicy]:
        topic = aws.sns.Topic(
            name,
            kms_master_key_id=self.kms_key.arn,
            region=self.region,
            tags=tags,
            opts=child_opts(self),
        )
        arn = topic.arn
        statements: list[object] = []
        for principal in publishers:
            condition: dict[str, Any] = {"StringEquals": {"aws:SourceAccount": self._account}}
            if principal == BUDGETS_PRINCIPAL:
                condition["ArnLike"] = {
                    "aws:SourceArn": pulumi.Output.format(
                        "arn:{0}:budgets::{1}:*", self._partition, self._account
                    )
                }
            statements.append(
                {
                    "Sid": "Publish" + principal.split(".")[0].title(),
                    "Effect": "Allow",
                    "Principal": {"Service": principal},
                    "Action": "SNS:Publish",
                    "Resource": arn,
                    "Condition": condition,
                }
            )
        statements.append(
            {
                "Sid": "DenyInsecureTransport",
                "Effect": "Deny",
                "Principal": "*",
                # A Deny: the broader its actions, the less can happen without TLS.
                "Action": "SNS:*",
                "Resource": arn,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            }
        )
        policy = aws.sns.TopicPolicy(
            f"{name}-policy",
            arn=arn,
            policy=policy_output(*statements),
            region=self.region,
            opts=child_opts(self),
        )
        return topic, policy

    def _key_policy(
        self,
        log_group_arns: pulumi.Output[str] | None,
        kill_switch_role_arn: pulumi.Output[str] | None,
    ) -> pulumi.Output[str]:
        account, partition = self._account, self._partition
        statements: list[object] = [
            {
                "Sid": "AccountAdministersKey",
                "Effect": "Allow",
                "Principal": {
                    "AWS": pulumi.Output.format("arn:{0}:iam::{1}:root", partition, account)
                },
                "Action": list(KEY_ADMIN_ACTIONS),
                # In a key policy "*" is this key and nothing else.
                "Resource": "*",
            },
            {
                "Sid": "CostAlertsEncryptMessages",
                "Effect": "Allow",
                "Principal": {
                    "Service": [BUDGETS_PRINCIPAL, COST_ALERTS_PRINCIPAL, CLOUDWATCH_PRINCIPAL]
                },
                "Action": ["kms:GenerateDataKey*", "kms:Decrypt"],
                "Resource": "*",
                "Condition": {"StringEquals": {"aws:SourceAccount": account}},
            },
        ]
        if log_group_arns is not None:
            statements.append(
                {
                    "Sid": "LogsEncryptKillSwitchLogs",
                    "Effect": "Allow",
                    "Principal": {
                        "Service": pulumi.Output.format(
                            "logs.{0}.{1}", self.region, self._dns_suffix
                        )
                    },
                    "Action": [
                        "kms:Encrypt*",
                        "kms:Decrypt*",
                        "kms:ReEncrypt*",
                        "kms:GenerateDataKey*",
                        "kms:Describe*",
                    ],
                    "Resource": "*",
                    "Condition": {
                        "ArnLike": {"kms:EncryptionContext:aws:logs:arn": log_group_arns}
                    },
                }
            )
        if kill_switch_role_arn is not None:
            statements.append(
                {
                    # Lambda sends a failed event to the dead-letter queue with the
                    # function's role, and the function publishes its report to the alert
                    # topic: SQS and SNS then need the key for the role, and only they.
                    "Sid": "KillSwitchWritesDeadLettersAndReports",
                    "Effect": "Allow",
                    "Principal": {"AWS": kill_switch_role_arn},
                    "Action": ["kms:GenerateDataKey", "kms:Decrypt"],
                    "Resource": "*",
                    "Condition": {
                        "StringEquals": {
                            "kms:ViaService": [
                                pulumi.Output.format(
                                    "{0}.{1}.{2}", service, self.region, self._dns_suffix
                                )
                                for service in ("sqs", "sns")
                            ]
                        }
                    },
                }
            )
        return policy_output(*statements)

    # ---- kill switch ---------------------------------------------------------------------

    def _kill_switch(
        self,
        name: str,
        function_name: str,
        log_group_prefix: str,
        tags: dict[str, str],
    ) -> None:
        args = self.args
        assert self.kill_switch_topic is not None and self.kill_switch_role is not None
        # Created before the function so Lambda never creates it itself, unencrypted and
        # kept forever.
        self.kill_switch_log_group = aws.cloudwatch.LogGroup(
            f"{name}-kill-switch-logs",
            name_prefix=log_group_prefix,
            retention_in_days=args.kill_switch_log_retention_days,
            kms_key_id=self.kms_key.arn,
            skip_destroy=not args.allow_destroy_with_logs,
            region=args.region,
            tags=tags,
            opts=stateful_opts(self, args.governance, allow_destroy=args.allow_destroy_with_logs),
        )
        # Where a budget event goes when every attempt failed (Lambda retries an SNS
        # invocation twice): kept two weeks, and the Errors alarm below says it happened.
        self.kill_switch_dead_letters = aws.sqs.Queue(
            f"{name}-kill-switch-dead-letters",
            kms_master_key_id=self.kms_key.arn,
            message_retention_seconds=_DLQ_RETENTION_SECONDS,
            region=args.region,
            tags=tags,
            opts=child_opts(self),
        )
        self.kill_switch_policy = aws.iam.RolePolicy(
            f"{name}-kill-switch-permissions",
            role=self.kill_switch_role.id,
            policy=self._kill_switch_policy(
                self.kill_switch_log_group.arn, self.kill_switch_dead_letters.arn
            ),
            opts=child_opts(self),
        )
        self.kill_switch_function = aws.lambda_.Function(
            f"{name}-kill-switch",
            name=function_name,
            description=f"Scale stack {self.stack}'s training capacity to zero at 100 % of "
            "its monthly budget",
            runtime="python3.12",
            handler="budget_guard.handler",
            code=handler_code(),
            role=self.kill_switch_role.arn,
            dead_letter_config=aws.lambda_.FunctionDeadLetterConfigArgs(
                target_arn=self.kill_switch_dead_letters.arn
            ),
            timeout=120,
            memory_size=256,
            environment=aws.lambda_.FunctionEnvironmentArgs(
                variables={
                    "AISTACK_STACK": self.stack,
                    "AISTACK_DRY_RUN": "true" if args.kill_switch_dry_run else "false",
                    # What was stopped goes to the alert topic the team reads.
                    "AISTACK_REPORT_TOPIC_ARN": self.alert_topic.arn,
                }
            ),
            logging_config=aws.lambda_.FunctionLoggingConfigArgs(
                log_format="Text", log_group=self.kill_switch_log_group.name
            ),
            region=args.region,
            tags=tags,
            # The role's permissions must exist before the first invocation can use them.
            opts=child_opts(self, depends_on=[self.kill_switch_log_group, self.kill_switch_policy]),
        )
        self.kill_switch_function_name = self.kill_switch_function.name
        self.kill_switch_function_arn = self.kill_switch_function.arn
        # A kill switch that fails must not fail silently: any failed run (each retry
        # counts) alarms on the alert topic, which the team's addresses read.
        self.kill_switch_errors_alarm = aws.cloudwatch.MetricAlarm(
            f"{name}-kill-switch-errors",
            alarm_description=f"The budget kill switch of stack {self.stack} failed: training "
            "may still be running past the budget. See the function's log group; the failed "
            "event is kept in the dead-letter queue.",
            namespace="AWS/Lambda",
            metric_name="Errors",
            dimensions={"FunctionName": self.kill_switch_function.name},
            statistic="Sum",
            period=60,
            evaluation_periods=1,
            threshold=1,
            comparison_operator="GreaterThanOrEqualToThreshold",
            # No invocation is no error: the kill switch runs once a month at most.
            treat_missing_data="notBreaching",
            alarm_actions=[self.alert_topic.arn],
            region=args.region,
            tags=tags,
            opts=child_opts(self),
        )
        self.kill_switch_permission = aws.lambda_.Permission(
            f"{name}-kill-switch-invoke",
            action="lambda:InvokeFunction",
            function=self.kill_switch_function.name,
            principal="sns.amazonaws.com",
            source_arn=self.kill_switch_topic.arn,
            region=args.region,
            opts=child_opts(self),
        )
        self.kill_switch_subscription = aws.sns.TopicSubscription(
            f"{name}-kill-switch-subscription",
            topic=self.kill_switch_topic.arn,
            protocol="lambda",
            endpoint=self.kill_switch_function.arn,
            region=args.region,
            opts=child_opts(self, depends_on=[self.kill_switch_permission]),
        )

    def _kill_switch_policy(
        self, log_group_arn: pulumi.Output[str], dead_letter_arn: pulumi.Output[str]
    ) -> pulumi.Output[str]:
        discovery, mutating, previous_size_tag = _handler_permissions()
        tagging = [a for a in mutating if a.endswith(("Tags", "TagResource"))]
        untagged = [a for a in mutating if a in _UNTAGGED_RESOURCE_ACTIONS]
        stopping = [a for a in mutating if a not in tagging and a not in untagged]

        def arns(actions: list[str]) -> list[pulumi.Output[str]]:
            templates = sorted({t for action in actions for t in _MUTATING_RESOURCES[action]})
            return [
                pulumi.Output.format(
                    "arn:{0}:" + template.format(region=self.region, account="{1}"),
                    self._partition,
                    self._account,
                )
                for template in templates
            ]

        on_this_stack = {"StringEquals": {f"aws:ResourceTag/{STACK_TAG}": self.stack}}
        return policy_output(
            {
                "Sid": "DiscoverTrainingCapacity",
                "Effect": "Allow",
                "Action": discovery,
                # Describe* and batch:ListJobs support no resource-level permissions: IAM
                # requires "*" for them. They only read.
                "Resource": "*",
            },
            {
                # Job queues qualify by the stack tag alone: a queue feeding a training
                # compute environment need not carry the workload tag (see the handler).
                "Sid": "StopThisStacksCapacity",
                "Effect": "Allow",
                "Action": stopping,
                "Resource": arns(stopping),
                "Condition": on_this_stack,
            },
            {
                # Jobs carry no stack tag to condition on; the handler terminates only the
                # jobs of the stack's own queues.
                "Sid": "TerminateThisStacksJobs",
                "Effect": "Allow",
                "Action": untagged,
                "Resource": arns(untagged),
            },
            {
                "Sid": "RecordPreviousSizes",
                "Effect": "Allow",
                "Action": tagging,
                "Resource": arns(tagging),
                # Only the previous-size tag: the role cannot move a resource into or out of
                # the stack by rewriting its stack tag.
                "Condition": {
                    **on_this_stack,
                    "ForAllValues:StringEquals": {"aws:TagKeys": [previous_size_tag]},
                },
            },
            {
                "Sid": "WriteOwnLogs",
                "Effect": "Allow",
                "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                "Resource": pulumi.Output.concat(log_group_arn, ":*"),
            },
            {
                "Sid": "KeepFailedEvents",
                "Effect": "Allow",
                "Action": "sqs:SendMessage",
                "Resource": dead_letter_arn,
            },
            {
                "Sid": "ReportWhatStopped",
                "Effect": "Allow",
                "Action": "sns:Publish",
                "Resource": self.alert_topic.arn,
            },
        )


def _physical_name(*parts: str, limit: int) -> str:
    """A readable, deterministic AWS name unique to this stack and component."""
    text = re.sub(r"[^A-Za-z0-9_-]+", "-", "-".join(parts)).strip("-")
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    return f"{text[: limit - 9]}-{digest}"


def _slug(email: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", email.lower()).strip("-")

"""BudgetGuard: stack-scoped monthly and daily budgets, anomaly alerts, encrypted TLS-only
topics and an opt-in kill switch wired to the 100 % actual alert only."""

import fnmatch
import json

import pytest

from aistack import aws as aistack_aws
from aistack.aws.budget_guard import KILL_SWITCH_HANDLER
from aistack.aws.lambdas.budget_guard import (
    DISCOVERY_ACTIONS,
    MUTATING_ACTIONS,
    PREVIOUS_SIZE_TAG,
    REQUIRED_ACTIONS,
)
from aistack.errors import ConfigError
from tests._harness.shared_graphs import shared

from .conftest import GOVERNANCE, run_in_us_east_1

# engine.run's project and stack: the stack tag every resource carries.
STACK = "aistack-dev"
BUDGET = "aws:budgets/budget:Budget"
TOPIC = "aws:sns/topic:Topic"
FUNCTION = "aws:lambda/function:Function"


def _args(governance, **overrides):
    return {
        "governance": governance,
        "region": "us-east-1",
        "monthlyLimit": 1000,
        "alertEmails": ["ml-team@example.com", "finance@example.com"],
        **overrides,
    }


def _guard(run, governance, **overrides):
    return run(lambda: aistack_aws.BudgetGuard("guard", _args(governance, **overrides)))


def _shared_guard(**overrides):
    # `_guard(run, governance, ...)` for a module-scoped fixture (`run` and `governance` are
    # per test).
    return shared(
        run_in_us_east_1(
            lambda: aistack_aws.BudgetGuard("guard", _args(dict(GOVERNANCE), **overrides))
        )
    )


@pytest.fixture(scope="module")
def default_guard():
    """The default guard, built once for the tests that only read it."""
    with _shared_guard() as graph:
        yield graph


@pytest.fixture(scope="module")
def kill_switch_guard():
    """The guard with its kill switch, built once for the tests that only read it."""
    with _shared_guard(killSwitch=True) as graph:
        yield graph


def _one(graph, token):
    found = graph.of_type(token)
    assert len(found) == 1, f"expected one {token}, found {len(found)}"
    return found[0]


def _notifications(budget):
    return {(n["notificationType"], n["threshold"]): n for n in budget.inputs["notifications"]}


def _statements(resource):
    return {s["Sid"]: s for s in json.loads(resource.inputs["policy"])["Statement"]}


def test_monthly_budget_alerts_on_actual_50_80_100_and_forecast_100(default_guard):
    graph = default_guard
    monthly = graph.named("guard-monthly")
    topic_arn = graph.named("guard-alerts").outputs["arn"]
    assert monthly.inputs["budgetType"] == "COST"
    assert monthly.inputs["timeUnit"] == "MONTHLY"
    assert (monthly.inputs["limitAmount"], monthly.inputs["limitUnit"]) == ("1000", "USD")
    notifications = _notifications(monthly)
    assert set(notifications) == {
        ("ACTUAL", 50),
        ("ACTUAL", 80),
        ("ACTUAL", 100),
        ("FORECASTED", 100),
    }
    for notification in notifications.values():
        assert notification["comparisonOperator"] == "GREATER_THAN"
        assert notification["thresholdType"] == "PERCENTAGE"
        assert notification["subscriberSnsTopicArns"] == [topic_arn]
        assert notification["subscriberEmailAddresses"] == [
            "ml-team@example.com",
            "finance@example.com",
        ]


def test_daily_budget_defaults_to_a_thirtieth_rounded_up_and_alerts_at_100(
    run, governance, default_guard
):
    graph = default_guard
    daily = graph.named("guard-daily")
    assert daily.inputs["budgetType"] == "COST"
    assert daily.inputs["timeUnit"] == "DAILY"
    assert daily.inputs["limitAmount"] == "34"  # 1000 / 30 = 33.33, rounded up
    assert set(_notifications(daily)) == {("ACTUAL", 100)}
    explicit = _guard(run, governance, dailyLimit=50.5, dailyActualThreshold=90)
    assert explicit.named("guard-daily").inputs["limitAmount"] == "50.5"
    assert set(_notifications(explicit.named("guard-daily"))) == {("ACTUAL", 90)}


def test_both_budgets_are_scoped_to_the_stack_by_its_cost_allocation_tag(default_guard):
    graph = default_guard
    for budget in graph.of_type(BUDGET):
        assert budget.inputs["costFilters"] == [
            {"name": "TagKeyValue", "values": [f"user:aistack:stack${STACK}"]}
        ]
        # Gross spend: credits must not hide a runaway job.
        assert budget.inputs["costTypes"]["includeCredit"] is False
    assert {b.inputs["name"] for b in graph.of_type(BUDGET)} == {
        f"{STACK}-guard-monthly",
        f"{STACK}-guard-daily",
    }


def test_custom_thresholds_are_used_sorted(run, governance):
    graph = _guard(run, governance, monthlyActualThresholds=[90, 25], monthlyForecastThreshold=80)
    assert set(_notifications(graph.named("guard-monthly"))) == {
        ("ACTUAL", 25),
        ("ACTUAL", 90),
        ("FORECASTED", 80),
    }


def test_the_stack_tag_is_activated_for_cost_allocation_and_survives_destroy(
    run, governance, default_guard
):
    graph = default_guard
    tag = _one(graph, "aws:costexplorer/costAllocationTag:CostAllocationTag")
    assert tag.inputs == {"tagKey": "aistack:stack", "status": "Active"}
    # Account-wide: destroying one stack must not switch off other stacks' budgets.
    assert tag.retain_on_delete is True
    off = _guard(run, governance, activateCostAllocationTag=False)
    assert off.of_type("aws:costexplorer/costAllocationTag:CostAllocationTag") == []


def test_anomaly_monitor_watches_the_stack_tag_and_reports_daily_above_the_threshold(
    run, governance
):
    graph = _guard(run, governance, anomalyThresholdUsd=250)
    monitor = _one(graph, "aws:costexplorer/anomalyMonitor:AnomalyMonitor")
    assert monitor.inputs["monitorType"] == "CUSTOM"
    assert json.loads(monitor.inputs["monitorSpecification"]) == {
        "Tags": {"Key": "aistack:stack", "Values": [STACK], "MatchOptions": ["EQUALS"]}
    }
    subscription = _one(graph, "aws:costexplorer/anomalySubscription:AnomalySubscription")
    assert subscription.inputs["frequency"] == "DAILY"
    assert subscription.inputs["monitorArnLists"] == [monitor.outputs["arn"]]
    assert subscription.inputs["thresholdExpression"] == {
        "dimension": {
            "key": "ANOMALY_TOTAL_IMPACT_ABSOLUTE",
            "matchOptions": ["GREATER_THAN_OR_EQUAL"],
            "values": ["250"],
        }
    }
    # DAILY digests go by e-mail only; AWS refuses SNS subscribers for them.
    assert subscription.inputs["subscribers"] == [
        {"type": "EMAIL", "address": "ml-team@example.com"},
        {"type": "EMAIL", "address": "finance@example.com"},
    ]


def test_immediate_anomaly_alerts_go_to_the_alert_topic(run, governance):
    graph = _guard(run, governance, anomalyFrequency="IMMEDIATE")
    subscription = _one(graph, "aws:costexplorer/anomalySubscription:AnomalySubscription")
    assert subscription.inputs["frequency"] == "IMMEDIATE"
    assert subscription.inputs["subscribers"] == [
        {"type": "SNS", "address": graph.named("guard-alerts").outputs["arn"]}
    ]
    assert graph.named("guard-alerts-policy").urn in subscription.dependencies


def test_an_existing_monitor_can_be_subscribed_to_instead(run, governance):
    arn = "arn:aws:ce::123456789012:anomalymonitor/0f1e2d3c-aaaa-bbbb-cccc-123456789abc"
    graph = _guard(run, governance, anomalyMonitorArn=arn)
    assert graph.of_type("aws:costexplorer/anomalyMonitor:AnomalyMonitor") == []
    subscription = _one(graph, "aws:costexplorer/anomalySubscription:AnomalySubscription")
    assert subscription.inputs["monitorArnLists"] == [arn]


def test_alert_topic_is_encrypted_with_a_key_budgets_and_cost_alerts_may_use(default_guard):
    graph = default_guard
    key = _one(graph, "aws:kms/key:Key")
    topic = _one(graph, TOPIC)
    assert topic.inputs["kmsMasterKeyId"] == key.outputs["arn"]
    assert key.inputs["enableKeyRotation"] is True
    statements = _statements(key)
    services = statements["CostAlertsEncryptMessages"]
    assert set(services["Principal"]["Service"]) == {
        "budgets.amazonaws.com",
        "costalerts.amazonaws.com",
        "cloudwatch.amazonaws.com",  # the stack's alarms publish to the same topic
    }
    assert services["Action"] == ["kms:GenerateDataKey*", "kms:Decrypt"]
    assert services["Condition"] == {"StringEquals": {"aws:SourceAccount": "123456789012"}}
    admin = statements["AccountAdministersKey"]
    assert admin["Principal"] == {"AWS": "arn:aws:iam::123456789012:root"}
    assert "kms:*" not in admin["Action"] and "kms:Decrypt" not in admin["Action"]
    assert "LogsEncryptKillSwitchLogs" not in statements  # no logs without the kill switch


def test_topic_policy_lets_only_budgets_cost_alerts_and_alarms_publish_and_denies_plain_http(
    default_guard,
):
    graph = default_guard
    topic = graph.named("guard-alerts")
    policy = graph.named("guard-alerts-policy")
    assert policy.inputs["arn"] == topic.outputs["arn"]
    statements = json.loads(policy.inputs["policy"])["Statement"]
    allows = [s for s in statements if s["Effect"] == "Allow"]
    assert {s["Principal"]["Service"] for s in allows} == {
        "budgets.amazonaws.com",
        "costalerts.amazonaws.com",
        "cloudwatch.amazonaws.com",
    }
    for statement in allows:
        assert statement["Action"] == "SNS:Publish"
        assert statement["Resource"] == topic.outputs["arn"]
        assert statement["Condition"]["StringEquals"] == {"aws:SourceAccount": "123456789012"}
    budgets = next(s for s in allows if s["Principal"]["Service"] == "budgets.amazonaws.com")
    assert budgets["Condition"]["ArnLike"] == {"aws:SourceArn": "arn:aws:budgets::123456789012:*"}
    (deny,) = [s for s in statements if s["Effect"] == "Deny"]
    assert deny["Principal"] == "*"
    assert deny["Action"] == "SNS:*"
    assert deny["Resource"] == topic.outputs["arn"]
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_budgets_wait_for_the_topic_policy_that_lets_them_publish(default_guard):
    graph = default_guard
    policy_urn = graph.named("guard-alerts-policy").urn
    for budget in graph.of_type(BUDGET):
        assert policy_urn in budget.dependencies


def test_each_address_is_subscribed_to_the_alert_topic_by_email(run, governance, default_guard):
    graph = default_guard
    topic_arn = graph.named("guard-alerts").outputs["arn"]
    subscriptions = graph.of_type("aws:sns/topicSubscription:TopicSubscription")
    assert {(s.name, s.inputs["protocol"], s.inputs["endpoint"]) for s in subscriptions} == {
        ("guard-alerts-ml-team-example-com", "email", "ml-team@example.com"),
        ("guard-alerts-finance-example-com", "email", "finance@example.com"),
    }
    assert all(s.inputs["topic"] == topic_arn for s in subscriptions)
    quiet = _guard(run, governance, subscribeEmailsToTopic=False)
    assert quiet.of_type("aws:sns/topicSubscription:TopicSubscription") == []


def test_kill_switch_is_off_by_default(default_guard):
    graph = default_guard
    assert graph.of_type(FUNCTION) == []
    assert graph.of_type("aws:iam/role:Role") == []
    assert graph.of_type("aws:cloudwatch/logGroup:LogGroup") == []
    assert len(graph.of_type(TOPIC)) == 1
    key = _one(graph, "aws:kms/key:Key")
    assert key.retain_on_delete is False  # encrypts nothing that outlives the stack


def test_kill_switch_deploys_the_handler_for_this_stack(run, governance, kill_switch_guard):
    graph = kill_switch_guard
    function = _one(graph, FUNCTION)
    assert function.inputs["runtime"] == "python3.12"
    assert function.inputs["handler"] == "budget_guard.handler"
    topic = next(t for t in graph.of_type("aws:sns/topic:Topic") if "alerts" in t.name)
    assert function.inputs["environment"]["variables"] == {
        "AISTACK_STACK": STACK,
        "AISTACK_DRY_RUN": "false",
        # What was stopped goes to the topic the team's addresses read.
        "AISTACK_REPORT_TOPIC_ARN": topic.outputs["arn"],
    }
    assert function.inputs["timeout"] == 120
    # No reserved concurrency: new accounts, whose concurrency quota is 10, cannot reserve any.
    assert "reservedConcurrentExecutions" not in function.inputs
    # The engine records assets as what they hold: one file, the handler itself.
    assert function.inputs["code"] == {
        "archive": {"budget_guard.py": {"path": str(KILL_SWITCH_HANDLER)}}
    }
    assert KILL_SWITCH_HANDLER.is_file()
    role = _one(graph, "aws:iam/role:Role")
    assert function.inputs["role"] == role.outputs["arn"]
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert trust == [
        {
            "Effect": "Allow",
            "Principal": {"Service": "lambda.amazonaws.com"},
            "Action": "sts:AssumeRole",
        }
    ]
    dry = _guard(run, governance, killSwitch=True, killSwitchDryRun=True)
    assert _one(dry, FUNCTION).inputs["environment"]["variables"]["AISTACK_DRY_RUN"] == "true"


def test_kill_switch_logs_go_to_a_retained_encrypted_log_group_of_its_own(
    run, governance, kill_switch_guard
):
    graph = kill_switch_guard
    function = _one(graph, FUNCTION)
    logs = _one(graph, "aws:cloudwatch/logGroup:LogGroup")
    key = _one(graph, "aws:kms/key:Key")
    # Kept on destroy, so named from a prefix: a fixed name would make the next `pulumi up`
    # fail with ResourceAlreadyExistsException. Lambda writes to whichever group its
    # logging_config names (Lambda API Reference, LoggingConfig.LogGroup).
    assert "name" not in logs.inputs
    assert logs.inputs["namePrefix"] == f"/aws/lambda/{function.inputs['name']}-"
    assert logs.inputs["skipDestroy"] is True
    assert function.inputs["loggingConfig"]["logGroup"] == logs.outputs["name"]
    assert logs.outputs["name"].startswith(logs.inputs["namePrefix"])
    assert logs.urn in function.dependencies
    assert logs.inputs["retentionInDays"] == 365
    assert logs.inputs["kmsKeyId"] == key.outputs["arn"]
    assert logs.retain_on_delete is True and key.retain_on_delete is True
    logs_key = _statements(key)["LogsEncryptKillSwitchLogs"]
    assert logs_key["Principal"] == {"Service": "logs.us-east-1.amazonaws.com"}
    pattern = logs_key["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"]
    assert pattern == (
        "arn:aws:logs:us-east-1:123456789012:log-group:" + logs.inputs["namePrefix"] + "*"
    )
    assert fnmatch.fnmatchcase(logs.outputs["arn"], pattern)
    prod = _guard(run, {**governance, "environment": "prod"}, killSwitch=True)
    assert _one(prod, "aws:cloudwatch/logGroup:LogGroup").protect is True


def test_only_the_monthly_100_percent_actual_alert_reaches_the_kill_switch(kill_switch_guard):
    graph = kill_switch_guard
    alert_arn = graph.named("guard-alerts").outputs["arn"]
    kill_topic = graph.named("guard-kill-switch-topic")
    kill_arn = kill_topic.outputs["arn"]
    assert kill_topic.inputs["kmsMasterKeyId"] == _one(graph, "aws:kms/key:Key").outputs["arn"]
    wired = [
        (budget.name, n["notificationType"], n["threshold"])
        for budget in graph.of_type(BUDGET)
        for n in budget.inputs["notifications"]
        if kill_arn in n["subscriberSnsTopicArns"]
    ]
    assert wired == [("guard-monthly", "ACTUAL", 100)]
    # The others keep going to people, through the alert topic.
    for key, notification in _notifications(graph.named("guard-monthly")).items():
        if key != ("ACTUAL", 100):
            assert notification["subscriberSnsTopicArns"] == [alert_arn]
    assert _notifications(graph.named("guard-monthly"))[("ACTUAL", 100)][
        "subscriberEmailAddresses"
    ] == ["ml-team@example.com", "finance@example.com"]
    # Only Budgets may publish to the kill switch's topic; anomalies never stop training.
    statements = json.loads(graph.named("guard-kill-switch-topic-policy").inputs["policy"])
    allows = [s for s in statements["Statement"] if s["Effect"] == "Allow"]
    assert [s["Principal"] for s in allows] == [{"Service": "budgets.amazonaws.com"}]
    assert any(
        s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        for s in statements["Statement"]
    )


def test_the_kill_switch_topic_invokes_the_lambda_and_only_it_may(kill_switch_guard):
    graph = kill_switch_guard
    function = _one(graph, FUNCTION)
    kill_arn = graph.named("guard-kill-switch-topic").outputs["arn"]
    subscription = graph.named("guard-kill-switch-subscription")
    assert subscription.inputs["topic"] == kill_arn
    assert subscription.inputs["protocol"] == "lambda"
    assert subscription.inputs["endpoint"] == function.outputs["arn"]
    permission = _one(graph, "aws:lambda/permission:Permission")
    assert permission.inputs["action"] == "lambda:InvokeFunction"
    assert permission.inputs["principal"] == "sns.amazonaws.com"
    assert permission.inputs["sourceArn"] == kill_arn
    assert permission.inputs["function"] == function.outputs["name"]


def test_kill_switch_role_may_change_only_this_stacks_resources(kill_switch_guard):
    graph = kill_switch_guard
    policy = _one(graph, "aws:iam/rolePolicy:RolePolicy")
    assert policy.inputs["role"] == _one(graph, "aws:iam/role:Role").id
    statements = _statements(policy)
    mutating = {a for actions in MUTATING_ACTIONS.values() for a in actions}
    discovery = {a for actions in DISCOVERY_ACTIONS.values() for a in actions}
    for statement in statements.values():
        actions = (
            set(statement["Action"])
            if isinstance(statement["Action"], list)
            else {statement["Action"]}
        )
        assert not any(a == "*" or a.endswith(":*") for a in actions), statement
        if actions & mutating and statement["Sid"] != "TerminateThisStacksJobs":
            assert statement["Condition"]["StringEquals"] == {
                "aws:ResourceTag/aistack:stack": STACK
            }, statement["Sid"]
            assert "*" not in statement["Resource"]
        if statement["Resource"] == "*":
            # Only the read-only Describe/List calls, which IAM cannot scope to resources.
            assert actions == discovery
    # batch:ListJobs supports no resource-level permission (Service Authorization Reference,
    # "Actions defined by AWS Batch": no resource type for ListJobs), so it is under "*".
    assert "batch:ListJobs" in statements["DiscoverTrainingCapacity"]["Action"]
    # Jobs carry no stack tag (propagateTags tags the ECS task, not the job), so TerminateJob
    # cannot be conditioned on it; it is held to this account's and region's jobs, and the
    # handler picks the jobs through the stack's queues.
    terminate = statements["TerminateThisStacksJobs"]
    assert terminate["Action"] == ["batch:TerminateJob"]
    assert terminate["Resource"] == ["arn:aws:batch:us-east-1:123456789012:job/*"]
    assert "Condition" not in terminate
    # Each action on its own resource type only.
    stopping = statements["StopThisStacksCapacity"]
    assert set(stopping["Resource"]) == {
        "arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:*:autoScalingGroupName/*",
        "arn:aws:batch:us-east-1:123456789012:compute-environment/*",
        "arn:aws:batch:us-east-1:123456789012:job-queue/*",
        "arn:aws:ec2:us-east-1:123456789012:instance/*",
    }
    tagging = statements["RecordPreviousSizes"]
    assert tagging["Condition"]["ForAllValues:StringEquals"] == {"aws:TagKeys": [PREVIOUS_SIZE_TAG]}
    assert "arn:aws:batch:us-east-1:123456789012:job-queue/*" not in tagging["Resource"]
    granted = {
        a
        for s in statements.values()
        for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])
        if not a.startswith(("logs:", "sqs:"))
    }
    assert granted == {a for actions in REQUIRED_ACTIONS.values() for a in actions}
    logs = statements["WriteOwnLogs"]
    log_group = _one(graph, "aws:cloudwatch/logGroup:LogGroup")
    assert logs["Resource"] == log_group.outputs["arn"] + ":*"
    assert set(logs["Action"]) == {"logs:CreateLogStream", "logs:PutLogEvents"}
    dead_letters = statements["KeepFailedEvents"]
    assert dead_letters["Action"] == "sqs:SendMessage"
    assert dead_letters["Resource"] == _one(graph, "aws:sqs/queue:Queue").outputs["arn"]


def test_a_failed_kill_switch_keeps_its_event_in_an_encrypted_dead_letter_queue(kill_switch_guard):
    # SNS invokes Lambda asynchronously; after the two retries Lambda drops the event unless
    # the function has a dead-letter queue or an on-failure destination, which it writes with
    # the function's own role (AWS Lambda Developer Guide, "Asynchronous invocation":
    # "Dead-letter queues"). checkov CKV_AWS_116 asks for the same.
    graph = kill_switch_guard
    function = _one(graph, FUNCTION)
    queue = _one(graph, "aws:sqs/queue:Queue")
    key = _one(graph, "aws:kms/key:Key")
    role = _one(graph, "aws:iam/role:Role")
    assert function.inputs["deadLetterConfig"] == {"targetArn": queue.outputs["arn"]}
    assert queue.inputs["kmsMasterKeyId"] == key.outputs["arn"]
    assert queue.inputs["messageRetentionSeconds"] == 14 * 24 * 3600  # SQS's longest
    # Lambda checks at CreateFunction that the role may send to the queue.
    assert _one(graph, "aws:iam/rolePolicy:RolePolicy").urn in function.dependencies
    # With a customer key, the sender needs GenerateDataKey and Decrypt on it (Amazon SQS
    # Developer Guide, "Key management": permissions for producers): granted to the kill
    # switch's role, and only through SQS.
    use = _statements(key)["KillSwitchWritesDeadLettersAndReports"]
    assert use["Principal"] == {"AWS": role.outputs["arn"]}
    assert use["Action"] == ["kms:GenerateDataKey", "kms:Decrypt"]
    # ... and through SNS, for its report to the (encrypted) alert topic.
    assert use["Condition"] == {
        "StringEquals": {
            "kms:ViaService": ["sqs.us-east-1.amazonaws.com", "sns.us-east-1.amazonaws.com"]
        }
    }
    # The key policy names the role, so the role exists first (KMS refuses an unknown
    # principal with MalformedPolicyDocumentException).
    assert role.urn in key.dependencies


def test_every_failed_kill_switch_run_alarms_on_the_alert_topic(kill_switch_guard, default_guard):
    graph = kill_switch_guard
    function = _one(graph, FUNCTION)
    alarm = _one(graph, "aws:cloudwatch/metricAlarm:MetricAlarm")
    assert alarm.name == "guard-kill-switch-errors"
    # Lambda publishes Errors per function in AWS/Lambda (AWS Lambda Developer Guide, "Types
    # of metrics for Lambda functions"); each failed attempt counts one.
    assert (alarm.inputs["namespace"], alarm.inputs["metricName"]) == ("AWS/Lambda", "Errors")
    assert alarm.inputs["dimensions"] == {"FunctionName": function.outputs["name"]}
    assert alarm.inputs["statistic"] == "Sum"
    assert alarm.inputs["threshold"] == 1
    assert alarm.inputs["comparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert alarm.inputs["treatMissingData"] == "notBreaching"
    assert alarm.inputs["alarmActions"] == [graph.named("guard-alerts").outputs["arn"]]
    assert graph.of_type("aws:sqs/queue:Queue") != []
    off = default_guard
    assert off.of_type("aws:cloudwatch/metricAlarm:MetricAlarm") == []
    assert off.of_type("aws:sqs/queue:Queue") == []


def test_every_taggable_resource_carries_the_governance_tags(kill_switch_guard):
    graph = kill_switch_guard
    untaggable = {
        "aws:costexplorer/costAllocationTag:CostAllocationTag",
        "aws:sns/topicPolicy:TopicPolicy",
        "aws:sns/topicSubscription:TopicSubscription",
        "aws:iam/rolePolicy:RolePolicy",
        "aws:lambda/permission:Permission",
    }
    for resource in graph.resources:
        if resource.is_component or resource.type in untaggable:
            continue
        tags = resource.inputs.get("tags") or {}
        assert tags.get("aistack:stack") == STACK, resource.name
        assert tags.get("aistack:owner") == "ml-platform", resource.name
        assert tags.get("aistack:workload") != "training", resource.name  # never self-stop
    component = graph.named("guard")
    assert component.type == "aistack:index:AwsBudgetGuard"
    assert all(r.parent == component.urn for r in graph.resources if r is not component)


def _refused(run, governance, **overrides) -> ConfigError:
    errors = []

    def program():
        try:
            aistack_aws.BudgetGuard("guard", _args(governance, **overrides))
        except ConfigError as error:
            errors.append(error)

    graph = run(program)
    assert graph.resources == [], "nothing may register before validation passes"
    assert errors, "expected a ConfigError"
    return errors[0]


@pytest.mark.parametrize("limit", [0, -10])
def test_a_budget_of_zero_or_less_is_refused(run, governance, limit):
    error = _refused(run, governance, monthlyLimit=limit)
    assert error.fields == ["guard.monthlyLimit"]


def test_a_bad_email_address_is_refused_naming_it(run, governance):
    error = _refused(run, governance, alertEmails=["ml-team@example.com", "finance-at-example"])
    assert error.fields == ["guard.alertEmails"]
    assert "finance-at-example" in str(error)
    assert _refused(run, governance, alertEmails=[]).fields == ["guard.alertEmails"]
    twice = _refused(run, governance, alertEmails=["a@example.com", "A@example.com"])
    assert "twice" in str(twice)


def test_a_region_outside_the_allowed_regions_is_refused(run, governance):
    error = _refused(run, governance, region="eu-west-1")
    assert error.fields == ["guard.region"]
    assert "C4" in str(error)


def test_thresholds_that_all_alert_too_late_or_repeat_are_refused(run, governance):
    late = _refused(run, governance, monthlyActualThresholds=[110, 150])
    assert late.fields == ["guard.monthlyActualThresholds"]
    assert "100" in str(late)
    twice = _refused(run, governance, monthlyActualThresholds=[80, 80])
    assert twice.fields == ["guard.monthlyActualThresholds"]


def test_inconsistent_settings_are_all_reported_at_once(run, governance):
    error = _refused(
        run,
        governance,
        region="eu-west-1",
        dailyLimit=2000,
        monthlyActualThresholds=[50, 80],
        killSwitch=True,
    )
    assert set(error.fields) == {
        "guard.region",
        "guard.dailyLimit",
        "guard.monthlyActualThresholds",
    }
    dry = _refused(run, governance, killSwitchDryRun=True)
    assert dry.fields == ["guard.killSwitchDryRun"]


def test_unknown_keys_and_bad_retention_are_refused(governance):
    with pytest.raises(ConfigError) as caught:
        aistack_aws.BudgetGuardArgs.parse(
            _args(governance, killSwitchLogRetentionDays=42, monthlyLimitEur=5), where="guard"
        )
    assert {"guard.killSwitchLogRetentionDays", "guard.monthlyLimitEur"} <= set(caught.value.fields)


def test_small_budgets_keep_the_default_daily_limit_within_the_monthly_one(governance):
    args = aistack_aws.BudgetGuardArgs.parse(_args(governance, monthlyLimit=0.5))
    assert args.effective_daily_limit() == 0.5


def test_the_old_limit_names_are_deprecated_aliases(governance):
    """monthlyLimitUsd/dailyLimitUsd became monthlyLimit/dailyLimit, the names gcp.BudgetGuard
    uses too; the old ones still work for a release, with a warning, and never beside the
    new ones."""
    old = {**_args(governance), "monthlyLimitUsd": 900, "dailyLimitUsd": 40}
    old.pop("monthlyLimit")
    with pytest.warns(DeprecationWarning, match="monthlyLimitUsd is deprecated"):
        args = aistack_aws.BudgetGuardArgs.parse(old)
    assert (args.monthly_limit, args.daily_limit) == (900, 40)
    with pytest.raises(ConfigError, match="dailyLimitUsd and dailyLimit are both given"):
        aistack_aws.BudgetGuardArgs.parse(
            {**_args(governance), "dailyLimitUsd": 40, "dailyLimit": 40}
        )

"""Rules for C3 (budgets, anomaly alerts, alert topics): compliant and violating stacks."""

import json

import pulumi_aws as aws

from aistack import aws as aistack_aws

GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "research-1234",
    "allowedRegions": ["us-east-1"],
}


def _guard(**overrides):
    return aistack_aws.BudgetGuard(
        "guard",
        {
            "governance": GOVERNANCE,
            "region": "us-east-1",
            "monthlyLimit": 1000,
            "alertEmails": ["ml-team@example.com"],
            **overrides,
        },
    )


def _notification(kind, threshold, threshold_type="PERCENTAGE", topic=None):
    return aws.budgets.BudgetNotificationArgs(
        comparison_operator="GREATER_THAN",
        threshold=threshold,
        threshold_type=threshold_type,
        notification_type=kind,
        subscriber_email_addresses=None if topic else ["ml-team@example.com"],
        subscriber_sns_topic_arns=[topic] if topic else None,
    )


def _budget(name, time_unit, *notifications, limit="1000"):
    return aws.budgets.Budget(
        name,
        budget_type="COST",
        time_unit=time_unit,
        limit_amount=limit,
        limit_unit="USD",
        notifications=list(notifications),
    )


# ---- AIS-C3-01: monthly and daily budgets ------------------------------------------------


def test_c3_01_budget_guard_complies(verdicts):
    result = verdicts("AIS-C3-01", _guard)
    assert result == {"guard-monthly": "compliant", "guard-daily": "compliant"}


def test_c3_01_hand_written_budgets_with_absolute_thresholds_comply(verdicts):
    def program():
        _budget(
            "monthly",
            "MONTHLY",
            _notification("ACTUAL", 900, "ABSOLUTE_VALUE"),
            _notification("FORECASTED", 100),
        )
        _budget("daily", "DAILY", _notification("ACTUAL", 120), limit="40")

    assert verdicts("AIS-C3-01", program) == {"monthly": "compliant", "daily": "compliant"}


def test_c3_01_aws_stack_without_budgets_violates(verdicts):
    assert verdicts("AIS-C3-01", lambda: aws.s3.Bucket("raw")) == {"": "non-compliant"}


def test_c3_01_monthly_budget_without_forecast_or_timely_actual_violates(verdicts):
    def program():
        # Actual only above the limit, and no forecast: nobody hears before the overrun.
        _budget("monthly", "MONTHLY", _notification("ACTUAL", 120))
        _budget("daily", "DAILY", _notification("ACTUAL", 100))

    result = verdicts("AIS-C3-01", program)
    assert result == {"monthly": "non-compliant", "daily": "compliant"}


def test_c3_01_missing_daily_budget_violates(verdicts):
    def program():
        _budget("monthly", "MONTHLY", _notification("ACTUAL", 80), _notification("FORECASTED", 100))
        _budget("daily", "DAILY", _notification("FORECASTED", 100))  # no ACTUAL alert

    result = verdicts("AIS-C3-01", program)
    assert result == {"monthly": "compliant", "daily": "non-compliant"}


def test_c3_01_does_not_apply_to_a_stack_without_aws_resources(verdicts):
    assert verdicts("AIS-C3-01", lambda: None) == {"": "not-applicable"}


# ---- AIS-C3-02: anomaly subscription ----------------------------------------------------


def test_c3_02_budget_guard_complies_and_the_rule_is_advisory(verdicts):
    from aistack import policy

    result = verdicts("AIS-C3-02", _guard)
    assert result == {"guard-anomaly-subscription": "compliant"}
    rule = next(r for r in policy.all_rules() if r.id == "AIS-C3-02")
    assert rule.severity == "advisory"


def test_c3_02_weekly_subscription_violates(verdicts):
    def program():
        monitor = aws.costexplorer.AnomalyMonitor(
            "services", monitor_type="DIMENSIONAL", monitor_dimension="SERVICE"
        )
        aws.costexplorer.AnomalySubscription(
            "weekly",
            frequency="WEEKLY",
            monitor_arn_lists=[monitor.arn],
            subscribers=[
                aws.costexplorer.AnomalySubscriptionSubscriberArgs(
                    type="EMAIL", address="ml-team@example.com"
                )
            ],
        )

    assert verdicts("AIS-C3-02", program) == {"weekly": "non-compliant"}


def test_c3_02_aws_stack_without_anomaly_subscription_violates(verdicts):
    def program():
        _budget("monthly", "MONTHLY", _notification("ACTUAL", 80))

    assert verdicts("AIS-C3-02", program) == {"": "non-compliant"}


# ---- AIS-C3-03: alert topics ------------------------------------------------------------


def test_c3_03_budget_guard_topics_comply(verdicts):
    result = verdicts("AIS-C3-03", lambda: _guard(killSwitch=True))
    assert result == {"guard-alerts": "compliant", "guard-kill-switch-topic": "compliant"}


def test_c3_03_unencrypted_topic_without_tls_deny_violates(verdicts):
    def program():
        topic = aws.sns.Topic("alerts")
        aws.sns.TopicPolicy(
            "alerts-policy",
            arn=topic.arn,
            policy=topic.arn.apply(
                lambda arn: json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Principal": {"Service": "budgets.amazonaws.com"},
                                "Action": "SNS:Publish",
                                "Resource": arn,
                            }
                        ],
                    }
                )
            ),
        )
        _budget("monthly", "MONTHLY", _notification("ACTUAL", 80, topic=topic.arn))

    assert verdicts("AIS-C3-03", program) == {"alerts": "non-compliant"}


def test_c3_03_topic_on_the_aws_managed_key_violates_even_when_tls_only(verdicts):
    def program():
        topic = aws.sns.Topic("alerts", kms_master_key_id="alias/aws/sns")
        aws.sns.TopicPolicy(
            "alerts-policy",
            arn=topic.arn,
            policy=topic.arn.apply(
                lambda arn: json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Deny",
                                "Principal": "*",
                                "Action": "SNS:Publish",
                                "Resource": arn,
                                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                            }
                        ],
                    }
                )
            ),
        )
        monitor = aws.costexplorer.AnomalyMonitor(
            "services", monitor_type="DIMENSIONAL", monitor_dimension="SERVICE"
        )
        aws.costexplorer.AnomalySubscription(
            "now",
            frequency="IMMEDIATE",
            monitor_arn_lists=[monitor.arn],
            subscribers=[
                aws.costexplorer.AnomalySubscriptionSubscriberArgs(type="SNS", address=topic.arn)
            ],
        )

    assert verdicts("AIS-C3-03", program) == {"alerts": "non-compliant"}


def test_c3_03_topics_not_carrying_cost_alerts_are_not_concerned(verdicts):
    assert verdicts("AIS-C3-03", lambda: aws.sns.Topic("other")) == {"": "not-applicable"}

"""`aws.BudgetGuard`'s arguments: limits, thresholds, addresses and the kill switch's
settings, and the cross-field checks made before anything is created."""

from __future__ import annotations

import math
import re
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from aistack.config import STACK_TAG, AistackModel, Governance
from aistack.contracts.budget import RENAMED_LIMITS, renamed_fields
from aistack.errors import Problems

#: The retention periods CloudWatch Logs accepts.
LOG_RETENTION_DAYS = frozenset(
    {1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557}
    | {2922, 3288, 3653}
)
#: AWS Budgets: one SNS topic and at most 10 e-mail subscribers per notification, and at
#: most 10 notifications per budget (one of the monthly budget's is the forecast).
MAX_EMAILS = 10
MAX_ACTUAL_THRESHOLDS = 9
# Mirrors AWS's own pattern for Cost Anomaly Detection subscribers, so an address AWS would
# refuse is refused here, before anything is created.
_EMAIL = re.compile(r"^[A-Za-z0-9.!#$%&'*+=?^_`{|}~/-]+@[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$")
_MONITOR_ARN = re.compile(r"^arn:aws[a-z-]*:ce::\d{12}:anomalymonitor/[-a-zA-Z0-9/:_]+$")

Percent = Annotated[float, Field(gt=0)]


def cost_filter_value(stack: str) -> str:
    """The Budgets `TagKeyValue` filter for a stack: `user:<tag key>$<tag value>`."""
    return f"user:{STACK_TAG}${stack}"


class BudgetGuardArgs(AistackModel):
    """What a stack may spend, who hears about it, and whether training stops at the limit."""

    governance: Governance
    region: str = Field(
        description="Region of the alert topics, their key and the kill switch. The kill "
        "switch stops training capacity in this region only, so use the training region. "
        "Must be in governance.allowed_regions (C4). Budgets and anomaly detection are "
        "global and take no region. Explicit: never the provider's default."
    )
    monthly_limit: float = Field(
        gt=0,
        description="Monthly budget for the stack in USD (the budgets' unit). Required: a "
        "budget is the first cost control (C3). Was monthlyLimitUsd (still accepted, "
        "deprecated).",
    )
    daily_limit: float | None = Field(
        None,
        gt=0,
        description="Daily budget in USD. Default: the monthly limit / 30, rounded up to a "
        "whole dollar, so a day at the monthly pace is just inside it. Was dailyLimitUsd "
        "(still accepted, deprecated).",
    )
    alert_emails: tuple[str, ...] = Field(
        min_length=1,
        max_length=MAX_EMAILS,
        description="Who is told (1-10 addresses; AWS Budgets sends to at most 10 per "
        "alert). Budgets mail them directly; their SNS topic subscriptions must be confirmed "
        "from the mail AWS sends.",
    )
    monthly_actual_thresholds: tuple[Percent, ...] = Field(
        (50, 80, 100),
        min_length=1,
        max_length=MAX_ACTUAL_THRESHOLDS,
        description="Percentages of the monthly limit at which actual spend alerts. Default "
        "50/80/100: halfway, time to act, limit reached. At least one must be <= 100.",
    )
    monthly_forecast_threshold: Percent = Field(
        100,
        description="Alert when the month's forecast passes this percentage of the limit. "
        "Default 100: warned while there is still time to avoid the overrun.",
    )
    daily_actual_threshold: Percent = Field(
        100, description="Percentage of the daily limit at which a day's spend alerts."
    )
    kill_switch: bool = Field(
        False,
        description="Deploy a Lambda that scales the stack's training capacity (tagged "
        "aistack:workload=training) to zero when actual spend reaches 100 % of the monthly "
        "limit. Off by default: it stops running jobs, so a team opts in knowingly.",
    )
    kill_switch_dry_run: bool = Field(
        False,
        description="The kill switch only logs what it would stop. For trying it out; "
        "needs kill_switch.",
    )
    kill_switch_log_retention_days: int = Field(
        365,
        description="Days the kill switch's logs are kept. Default a year: they are the "
        "record of why training stopped, and tiny.",
    )
    anomaly_threshold_usd: float = Field(
        100,
        gt=0,
        description="Report a cost anomaly when its total impact reaches this many USD. "
        "Default 100: below that a GPU stack's daily noise drowns the signal.",
    )
    anomaly_frequency: Literal["DAILY", "IMMEDIATE"] = Field(
        "DAILY",
        description="DAILY: one e-mail digest a day to alert_emails. IMMEDIATE: each anomaly "
        "as it is found, to the alert topic (AWS sends IMMEDIATE only through SNS).",
    )
    anomaly_monitor_arn: str | None = Field(
        None,
        pattern=_MONITOR_ARN.pattern,
        description="Subscribe to this existing anomaly monitor instead of creating one on "
        "the stack tag. For AWS Organizations member accounts, where only the management "
        "account may create tag monitors.",
    )
    activate_cost_allocation_tag: bool = Field(
        True,
        description="Activate the aistack:stack cost allocation tag, which the budgets and "
        "the monitor filter on. Set false where the management account activates it (only "
        "it may, in an AWS Organization).",
    )
    subscribe_emails_to_topic: bool = Field(
        True,
        description="Also subscribe alert_emails to the alert topic, so what only the topic "
        "carries (IMMEDIATE anomalies) reaches them. Once confirmed, budget alerts arrive "
        "twice (direct and via SNS); set false to get them once.",
    )
    allow_destroy_with_logs: bool = Field(
        False,
        description="Let `pulumi destroy` delete the kill switch's log group and key. Off: "
        "both are retained (and protected in prod), they are the audit trail.",
    )

    @model_validator(mode="before")
    @classmethod
    def _old_limit_names(cls, data: object) -> object:
        return renamed_fields(data, RENAMED_LIMITS, component="aws.BudgetGuard")

    @field_validator("alert_emails")
    @classmethod
    def _emails_are_addresses(cls, emails: tuple[str, ...]) -> tuple[str, ...]:
        bad = [email for email in emails if not _EMAIL.fullmatch(email)]
        if bad:
            raise ValueError(
                f"not e-mail addresses: {bad}. Fix: use addresses like 'ml-team@example.com'."
            )
        folded = [email.lower() for email in emails]
        if len(set(folded)) != len(folded):
            raise ValueError("an address is listed twice. Fix: list each address once.")
        return emails

    @field_validator("monthly_actual_thresholds")
    @classmethod
    def _thresholds_alert_in_time(cls, thresholds: tuple[float, ...]) -> tuple[float, ...]:
        if len(set(thresholds)) != len(thresholds):
            raise ValueError(
                "a threshold is listed twice; AWS Budgets refuses duplicate notifications. "
                "Fix: list each percentage once."
            )
        if min(thresholds) > 100:
            raise ValueError(
                "every threshold is above 100 %, so nobody hears before the limit is passed "
                "(checklist C3). Fix: include a threshold of 100 or less, e.g. [50, 80, 100]."
            )
        return tuple(sorted(thresholds))

    @field_validator("kill_switch_log_retention_days")
    @classmethod
    def _retention_is_accepted(cls, days: int) -> int:
        if days not in LOG_RETENTION_DAYS:
            raise ValueError(
                f"CloudWatch Logs does not accept a retention of {days} days. Fix: use one of "
                f"{sorted(LOG_RETENTION_DAYS)}."
            )
        return days

    def effective_daily_limit(self) -> float:
        """`daily_limit`, or its default: the monthly limit / 30 rounded up."""
        if self.daily_limit is not None:
            return self.daily_limit
        # Capped for budgets under 30 USD a month, where a whole dollar could exceed it.
        return min(float(math.ceil(self.monthly_limit / 30)), self.monthly_limit)


def _validate(name: str, args: BudgetGuardArgs) -> None:
    """Cross-field checks pydantic cannot express per field; all problems at once."""
    problems = Problems()

    def field(attribute: str) -> str:
        return f"{name}.{to_camel(attribute)}"

    region_problem = args.governance.region_problem(args.region, field("region"))
    if region_problem:
        problems.items.append(region_problem)
    daily = args.effective_daily_limit()
    if daily > args.monthly_limit:
        problems.add(
            field("daily_limit"),
            f"the daily limit ({_usd(daily)} USD) is above the monthly limit "
            f"({_usd(args.monthly_limit)} USD), so the daily alert could never come first.",
            "lower dailyLimit (or leave it unset for monthly / 30).",
        )
    if args.kill_switch and 100 not in args.monthly_actual_thresholds:
        problems.add(
            field("monthly_actual_thresholds"),
            "the kill switch fires on the monthly budget's 100 % ACTUAL alert, which these "
            "thresholds do not include.",
            "add 100 to monthlyActualThresholds, or turn killSwitch off.",
        )
    if args.kill_switch_dry_run and not args.kill_switch:
        problems.add(
            field("kill_switch_dry_run"),
            "a dry run of the kill switch was asked for, but the kill switch is off.",
            "set killSwitch: true to deploy it in dry-run mode, or drop killSwitchDryRun.",
        )
    problems.raise_if_any()


def _usd(amount: float) -> str:
    """`1000.0` -> `"1000"`, `33.5` -> `"33.5"`: how Budgets and Cost Explorer print money."""
    return f"{amount:.2f}".rstrip("0").rstrip(".")

"""AIS-C3-01: the stack has a monthly and a daily COST budget that alert before the limit."""

from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule

BUDGET = "aws:budgets/budget:Budget"


def spend_alerts(budget: Resource, kind: str) -> list[float]:
    """Thresholds (as % of the limit) of `budget`'s `kind` alerts that reach somebody."""
    limit = _number(budget.inputs.get("limitAmount"))
    found = []
    for notification in budget.inputs.get("notifications") or []:
        if (
            notification.get("notificationType") != kind
            or notification.get("comparisonOperator") != "GREATER_THAN"
            or not (
                notification.get("subscriberEmailAddresses")
                or notification.get("subscriberSnsTopicArns")
            )
        ):
            continue
        threshold = _number(notification.get("threshold"))
        if threshold is None:
            continue
        if notification.get("thresholdType") == "ABSOLUTE_VALUE":
            if not limit:
                continue
            threshold = threshold / limit * 100
        found.append(threshold)
    return sorted(found)


def _number(value: Any) -> float | None:  # noqa: ANN401 - any recorded value; float() decides
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _percent(values: list[float]) -> str:
    return "/".join(f"{value:g}" for value in values) + " %"


@rule(
    id="AIS-C3-01",
    checklist=["C3"],
    info="A monthly COST budget alerts on actual spend at or below 100 % and on the forecast; "
    "a DAILY COST budget alerts on actual spend.",
    why="GPU spend runs away in hours: a monthly total seen on the invoice is weeks late. "
    "The forecast warns while the overrun can still be avoided, the daily budget catches a "
    "runaway day before it becomes a runaway month.",
    fix="Use aws.BudgetGuard, or add aws.budgets.Budget resources: budget_type COST, "
    "time_unit MONTHLY with ACTUAL notifications (e.g. 50/80/100 %) and a FORECASTED one, "
    "and time_unit DAILY with an ACTUAL notification, each with subscribers.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    # Only AWS stacks are concerned; a GCP-only program has no AWS budget to hold.
    if not any(resource.type.startswith("aws:") for resource in graph.resources):
        return
    cost = [b for b in graph.of_type(BUDGET) if b.inputs.get("budgetType") == "COST"]
    monthly = [b for b in cost if b.inputs.get("timeUnit") == "MONTHLY"]
    daily = [b for b in cost if b.inputs.get("timeUnit") == "DAILY"]

    good_monthly = []
    for budget in monthly:
        actual = [t for t in spend_alerts(budget, "ACTUAL") if t <= 100]
        forecast = spend_alerts(budget, "FORECASTED")
        if actual and forecast:
            good_monthly.append((budget, actual, forecast))
    if good_monthly:
        for budget, actual, forecast in good_monthly:
            yield ok(
                budget,
                f"monthly COST budget alerts on actual spend at {_percent(actual)} and on "
                f"the forecast at {_percent(forecast)}.",
            )
    elif monthly:
        for budget in monthly:
            missing = []
            if not [t for t in spend_alerts(budget, "ACTUAL") if t <= 100]:
                missing.append("an ACTUAL alert at or below 100 %")
            if not spend_alerts(budget, "FORECASTED"):
                missing.append("a FORECASTED alert")
            yield fail(budget, "monthly COST budget lacks " + " and ".join(missing) + ".")
    else:
        yield fail(None, "no monthly COST budget: overspend shows first on the invoice.")

    good_daily = [(b, spend_alerts(b, "ACTUAL")) for b in daily if spend_alerts(b, "ACTUAL")]
    if good_daily:
        for budget, actual in good_daily:
            yield ok(budget, f"daily COST budget alerts on actual spend at {_percent(actual)}.")
    elif daily:
        for budget in daily:
            yield fail(budget, "daily COST budget has no ACTUAL alert with a subscriber.")
    else:
        yield fail(None, "no daily COST budget: a runaway day is seen only in the month's total.")

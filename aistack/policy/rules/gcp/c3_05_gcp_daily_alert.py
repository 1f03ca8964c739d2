"""AIS-C3-05: a GCP budget's updates feed a function computing the daily spend, and a
log-based alert policy mails its daily-limit entry."""

from collections.abc import Iterator

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import ALERT_POLICY, BILLING_BUDGET, functions_on_topic, is_gcp

#: The structured log event the budget guard function writes (aistack/gcp/functions).
DAILY_EVENT = "daily_limit_exceeded"


def _alerting_policies(graph: StackGraph, function_name: str) -> list[Resource]:
    found = []
    for policy in graph.of_type(ALERT_POLICY):
        if policy.inputs.get("enabled") is False or not policy.inputs.get("notificationChannels"):
            continue
        for condition in policy.inputs.get("conditions") or []:
            log_filter = str((condition.get("conditionMatchedLog") or {}).get("filter", ""))
            if f'service_name="{function_name}"' in log_filter and DAILY_EVENT in log_filter:
                found.append(policy)
    return found


@rule(
    id="AIS-C3-05",
    checklist=["C3"],
    info="A GCP budget's Pub/Sub updates trigger a function that keeps the day's spend "
    "against a daily limit, and a log-based alert policy with notification channels "
    "reports the day the limit is crossed.",
    why="Google Cloud has no daily budget (a budget's period is a month, quarter or "
    "year), so a runaway day shows only as a threshold of the month, days later. The "
    "budget's updates carry the month's running total several times a day: the day's "
    "spend is their difference.",
    fix="Use gcp.BudgetGuard (dailyLimitUsd), or trigger a function from the budget's "
    "all_updates_rule topic and alert on the entry it logs when a day passes the limit.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    if not is_gcp(graph):
        return
    budgets = graph.of_type(BILLING_BUDGET)
    if not budgets:
        yield fail(None, "no billing budget, so no daily alert.")
    for budget in budgets:
        topic = (budget.inputs.get("allUpdatesRule") or {}).get("pubsubTopic")
        if not topic:
            yield fail(budget, "budget publishes no updates to Pub/Sub: nothing sees the day.")
            continue
        functions = [
            f
            for f in functions_on_topic(graph, topic)
            if (f.get("serviceConfig", "environmentVariables") or {}).get("AISTACK_DAILY_LIMIT")
        ]
        if not functions:
            yield fail(budget, "no function with a daily limit reads the budget's updates.")
            continue
        alerted = [
            f for f in functions if _alerting_policies(graph, str(f.outputs.get("name", "")))
        ]
        if not alerted:
            yield fail(budget, "no alert policy with channels reports the daily-limit entry.")
        else:
            limit = alerted[0].get("serviceConfig", "environmentVariables")["AISTACK_DAILY_LIMIT"]
            yield ok(budget, f"daily spend computed from the updates; alert at {limit}.")

"""AIS-C3-04: a GCP stack has a monthly budget on its project, gross of credits, that
alerts on actual spend by 100 % and on the forecast, to someone."""

import re
from collections.abc import Iterator

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import BILLING_BUDGET, is_gcp

# Budget API BudgetFilter.projects: "projects/{project_number}"; an id is stored back as
# the number, so a program that writes an id diffs for ever (research §D1.11).
_PROJECT_NUMBER = re.compile(r"projects/\d+")


def _problems(budget: Resource) -> list[str]:
    problems = []
    budget_filter = budget.inputs.get("budgetFilter") or {}
    projects = budget_filter.get("projects") or []
    if not projects:
        problems.append("no project filter (it counts the whole billing account)")
    elif not all(_PROJECT_NUMBER.fullmatch(str(p)) for p in projects):
        problems.append("projects named by id, not 'projects/<NUMBER>'")
    if budget_filter.get("calendarPeriod", "MONTH") != "MONTH" or budget_filter.get("customPeriod"):
        problems.append("a period other than the calendar month")
    if budget_filter.get("creditTypesTreatment") != "EXCLUDE_ALL_CREDITS":
        problems.append("credits not excluded (they hide spend)")
    rules = budget.inputs.get("thresholdRules") or []
    actual = [
        float(r.get("thresholdPercent", 0))
        for r in rules
        if r.get("spendBasis", "CURRENT_SPEND") == "CURRENT_SPEND"
    ]
    if not any(0 < t <= 1.0 for t in actual):
        problems.append("no actual-spend threshold at or below 1.0 (100 %)")
    if not any(r.get("spendBasis") == "FORECASTED_SPEND" for r in rules):
        problems.append("no FORECASTED_SPEND threshold")
    updates = budget.inputs.get("allUpdatesRule") or {}
    if not (updates.get("pubsubTopic") or updates.get("monitoringNotificationChannels")):
        problems.append("no Pub/Sub topic or notification channel")
    return problems


@rule(
    id="AIS-C3-04",
    checklist=["C3"],
    info="A GCP stack has a monthly billing budget on its project number, credits "
    "excluded, with an actual-spend threshold at or below 100 % and a forecast threshold, "
    "sent to a topic or notification channels.",
    why="GPU spend runs away in hours. Credits (free trial, committed-use, promotions) "
    "hide spend until they run out; a budget on the billing account instead of the "
    "project mixes every team; the forecast warns while the overrun can still be avoided.",
    fix="Use gcp.BudgetGuard, or a gcp.billing.Budget with budget_filter.projects="
    "['projects/<NUMBER>'], credit_types_treatment EXCLUDE_ALL_CREDITS, threshold_rules "
    "e.g. 0.5/0.8/1.0 and 1.0 FORECASTED_SPEND, and an all_updates_rule.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    # Only GCP stacks are concerned; an AWS stack's budget is AIS-C3-01's.
    if not is_gcp(graph):
        return
    budgets = graph.of_type(BILLING_BUDGET)
    if not budgets:
        yield fail(None, "no billing budget: overspend shows first on the invoice.")
    for budget in budgets:
        problems = _problems(budget)
        if problems:
            yield fail(budget, "budget has " + "; ".join(problems) + ".")
        else:
            yield ok(budget, "monthly budget on the project, gross, actual and forecast alerts.")

"""AIS-C3-02 (advisory): a cost anomaly subscription reports at least daily."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule

ANOMALY_SUBSCRIPTION = "aws:costexplorer/anomalySubscription:AnomalySubscription"
TIMELY = ("DAILY", "IMMEDIATE")


@rule(
    id="AIS-C3-02",
    checklist=["C3"],
    severity="advisory",
    info="A Cost Anomaly Detection subscription with DAILY or IMMEDIATE frequency exists.",
    why="Budgets alert on totals; anomaly detection notices a spend pattern change (a "
    "forgotten GPU node, a loop writing to S3) the day after it starts, well before a "
    "threshold falls. Advisory, not mandatory: in an AWS Organization anomaly monitoring "
    "is often run centrally from the management account, invisible to this stack, and the "
    "budgets of AIS-C3-01 already meet C3.",
    fix="Use aws.BudgetGuard, or add an aws.costexplorer.AnomalyMonitor and an "
    "aws.costexplorer.AnomalySubscription with frequency DAILY (EMAIL subscribers) or "
    "IMMEDIATE (an SNS subscriber).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    if not any(resource.type.startswith("aws:") for resource in graph.resources):
        return
    subscriptions = graph.of_type(ANOMALY_SUBSCRIPTION)
    if not subscriptions:
        yield fail(None, "no cost anomaly subscription: spikes surface only at a budget threshold.")
    for subscription in subscriptions:
        frequency = subscription.inputs.get("frequency")
        if frequency not in TIMELY:
            yield fail(
                subscription,
                f"frequency {frequency}: an anomaly reported weekly has been billed for a week.",
            )
        elif not subscription.inputs.get("monitorArnLists"):
            yield fail(subscription, "watches no anomaly monitor.")
        elif not subscription.inputs.get("subscribers"):
            yield fail(subscription, "has no subscribers.")
        else:
            yield ok(subscription, f"{frequency} anomaly reports reach their subscribers.")

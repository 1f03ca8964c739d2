"""AIS-T2-01: an interrupted run comes back by itself."""

from aistack.policy import fail, ok, rule
from aistack.policy._training import training_groups, training_job_definitions


@rule(
    id="AIS-T2-01",
    checklist=["T2"],
    info="Job definitions retry when the host was reclaimed (and only then); Spot training "
    "groups rebalance capacity.",
    why="Resuming from the last checkpoint should need nobody awake at 2 a.m.; retrying an "
    "application error only burns GPU hours.",
    fix="Retry strategy with attempts > 1, RETRY on status reason 'Host EC2*', EXIT otherwise "
    "(aws.TrainingPool); capacityRebalance on Spot groups.",
)
def check(graph):
    for job in training_job_definitions(graph):
        strategy = job.inputs.get("retryStrategy") or {}
        rules = strategy.get("evaluateOnExits") or []
        retries_host = any(
            r.get("action", "").upper() == "RETRY" and "Host EC2" in r.get("onStatusReason", "")
            for r in rules
        )
        if strategy.get("attempts", 1) > 1 and retries_host:
            yield ok(job, f"{strategy['attempts']} attempts when a host is reclaimed.")
        else:
            yield fail(job, "an interrupted job is not retried automatically.")
    for group in training_groups(graph):
        distribution = (group.inputs.get("mixedInstancesPolicy") or {}).get(
            "instancesDistribution"
        ) or {}
        spot = distribution.get("onDemandPercentageAboveBaseCapacity", 100) < 100
        if spot and not group.inputs.get("capacityRebalance"):
            yield fail(group, "Spot group without capacity rebalancing.")
        else:
            yield ok(group, "replaces reclaimed capacity.")

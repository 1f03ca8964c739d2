"""AIS-T2-01: an interrupted run comes back by itself."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.aws_training import training_groups, training_job_definitions


@rule(
    id="AIS-T2-01",
    checklist=["T2"],
    info="Job definitions retry when the host was reclaimed (and only then); Spot training "
    "groups rebalance capacity.",
    why="Resuming from the last checkpoint should need nobody awake at 2 a.m.; retrying an "
    "application error only burns GPU hours.",
    fix="Retry strategy with attempts > 1, RETRY on status reason 'Host EC2*' (and exit code "
    "138, the spot watch's SIGUSR1) before the catch-all EXIT (aws.TrainingPool); "
    "capacityRebalance on Spot groups.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for job in training_job_definitions(graph):
        strategy = job.inputs.get("retryStrategy") or {}
        rules = strategy.get("evaluateOnExits") or []
        # Batch applies the first rule that matches, so a RETRY after a catch-all never runs.
        catch_all = next(
            (
                index
                for index, r in enumerate(rules)
                if "*" in (r.get("onReason"), r.get("onStatusReason"), r.get("onExitCode"))
            ),
            len(rules),
        )
        retries_host = any(
            r.get("action", "").upper() == "RETRY" and "Host EC2" in r.get("onStatusReason", "")
            for r in rules[:catch_all]
        )
        if strategy.get("attempts", 1) > 1 and retries_host:
            yield ok(job, f"{strategy['attempts']} attempts when a host is reclaimed.")
        elif any(r.get("action", "").upper() == "RETRY" for r in rules[catch_all:]):
            yield fail(job, "a RETRY rule comes after the catch-all, which matches first.")
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

"""AIS-T3-01: every training pool has a GPU-starvation alarm."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import tags
from aistack.queries.aws_training import COMPUTE_ENVIRONMENT, training_groups


@rule(
    id="AIS-T3-01",
    checklist=["T3"],
    info="An alarm fires when a pool's GPUs are under-used while nodes run.",
    why="GPU starvation by the data pipeline is the usual inefficiency: paid GPUs waiting "
    "on input.",
    fix="Use aws.TrainingPool (alarm `<pool>-gpu-starvation`), or alarm on "
    "nvidia_smi_utilization_gpu below a threshold for the pool.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    alarms = [
        a
        for a in graph.of_type("aws:cloudwatch/metricAlarm:MetricAlarm")
        if a.inputs.get("metricName") == "nvidia_smi_utilization_gpu"
        and a.inputs.get("comparisonOperator") == "LessThanThreshold"
        and a.inputs.get("statistic") == "Average"
    ]
    pools_alarmed = {tags(a).get("aistack:pool") for a in alarms}
    capacity = [*graph.of_type(COMPUTE_ENVIRONMENT), *training_groups(graph)]
    for resource in capacity:
        pool = tags(resource).get("aistack:pool")
        if pool and pool in pools_alarmed:
            yield ok(resource, f"starvation alarm on pool {pool}.")
        else:
            yield fail(resource, "no alarm on GPU starvation for this capacity.")

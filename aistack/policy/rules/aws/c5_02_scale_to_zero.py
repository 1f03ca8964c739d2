"""AIS-C5-02: training capacity idles at zero and has something that takes it there."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import tags
from aistack.queries.aws_training import COMPUTE_ENVIRONMENT, training_groups


@rule(
    id="AIS-C5-02",
    checklist=["C5"],
    info="Batch compute environments have minimum 0 vCPUs; training auto scaling groups "
    "have minimum 0 and an idle alarm that scales them to zero.",
    why="An idle GPU node costs the same as a busy one; capacity must fall to zero by itself.",
    fix="Set computeResources.minVcpus to 0 (aws.TrainingPool does), or give the group "
    "minSize 0 and an alarm on GPU utilisation with a scale-to-zero policy.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for compute in graph.of_type(COMPUTE_ENVIRONMENT):
        minimum = (compute.inputs.get("computeResources") or {}).get("minVcpus", 0)
        if minimum:
            yield fail(compute, f"keeps {minimum} vCPUs running when the queue is empty.")
        else:
            yield ok(compute, "idles at 0 vCPUs.")
    alarms = graph.of_type("aws:cloudwatch/metricAlarm:MetricAlarm")
    policies = graph.of_type("aws:autoscaling/policy:Policy")
    for group in training_groups(graph):
        name = group.outputs.get("name") or group.id
        to_zero = {
            p.outputs.get("arn")
            for p in policies
            if p.inputs.get("autoscalingGroupName") == name
            and p.inputs.get("adjustmentType") == "ExactCapacity"
            and p.inputs.get("scalingAdjustment") == 0
        }
        wired = any(set(a.inputs.get("alarmActions") or []) & to_zero for a in alarms)
        if group.inputs.get("minSize", 0):
            yield fail(group, f"keeps {group.inputs['minSize']} nodes at minimum.")
        elif not wired:
            yield fail(group, "no alarm scales it to zero when its GPUs are idle.")
        else:
            yield ok(
                group,
                f"minimum 0; idle alarm scales pool {tags(group).get('aistack:pool')} to zero.",
            )

"""AIS-C5-09: managed instance groups of GPU VMs start at zero VMs."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import AUTOSCALERS, training_gpu_groups


@rule(
    id="AIS-C5-09",
    checklist=["C5"],
    info="Managed instance groups of GPU VMs have target size 0 and no autoscaler minimum above 0.",
    why="A group keeps its target size: a GPU group created at 2 bills two GPU VMs from "
    "the first `pulumi up` until someone resizes it, used or not. At 0, VMs exist only "
    "while runs need them (created per run, deleted by the idle watchdog).",
    fix="Create the group with target_size 0 and ignore changes to it, as gcp.TrainingPool "
    "does; with an autoscaler, set min_num_replicas 0.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    autoscalers = [r for r in graph.resources if r.type in AUTOSCALERS]
    for group, _template in training_gpu_groups(graph):
        size = group.inputs.get("targetSize")
        minimum = [
            (a.inputs.get("autoscalingPolicy") or {}).get("minReplicas", 0)
            for a in autoscalers
            if str(a.inputs.get("target"))
            in {str(group.outputs.get("id")), str(group.outputs.get("selfLink"))}
        ]
        if size not in (0, None) or any(int(m or 0) > 0 for m in minimum):
            yield fail(group, f"starts with {size} GPU VM(s) and keeps them while idle.")
        elif size is None and not minimum:
            yield fail(group, "no target size: the group is created with one VM.")
        else:
            yield ok(group, "starts at 0 GPU VMs.")

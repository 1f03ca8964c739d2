"""AIS-C5-11: a GPU training group without an autoscaler grows only through run commands
that refuse a run beyond the pool's cap, and starts within it.

gcp.TrainingPool's group has no autoscaler: nothing in Compute Engine bounds its size, and
each `gcloud compute instance-groups managed create-instance` adds a VM to it. The cap is
therefore a check in the recorded run command (`submit_command`): it sets
`AISTACK_MAX_NODES=<maxNodes>`, reads the group's target size and stops before anything is
created unless the size is below the cap. An autoscaler, where a group has one, bounds the
group by its `maxNumReplicas` instead (Compute API, AutoscalingPolicy.maxNumReplicas: "The
maximum number of instances that the autoscaler can scale out to").
"""

import re
from collections.abc import Iterator

from aistack.contracts.gcp import MAX_NODES_VARIABLE
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import AUTOSCALERS, run_commands, training_gpu_groups

_CAP = re.compile(rf"\b{MAX_NODES_VARIABLE}=(\d+)\b")
#: The comparison that lets a run through only below the cap.
_GUARD = f'-lt "${MAX_NODES_VARIABLE}"'


def capped_at(command: str) -> int | None:
    """The cap a run command enforces before it creates the VM, or None: the variable set,
    and the size compared with it, both before the create-instance call."""
    create = command.find("create-instance")
    cap = _CAP.search(command)
    guard = command.find(_GUARD)
    if create < 0 or not cap or guard < 0 or not cap.start() < guard < create:
        return None
    return int(cap.group(1))


def _targets(target: str, group: Resource) -> bool:
    """Whether an autoscaler's `target` (the group's id, `projects/<p>/regions/<r>/
    instanceGroupManagers/<name>`, or its self link) is `group`."""
    link = str(group.outputs.get("selfLink") or "")
    return target in {link, str(group.outputs.get("id"))} or bool(
        link and link.endswith(f"/{target}")
    )


@rule(
    id="AIS-C5-11",
    checklist=["C5"],
    info="GPU training groups without an autoscaler start at or below their cap and are "
    "grown only by run commands that refuse a run beyond it.",
    why="A managed instance group without an autoscaler has no maximum: every "
    "create-instance adds a GPU VM, so a loop or a crowded week of submits bills past the "
    "pool's maxNodes (and past the GPU quota filed for it, where that quota is larger).",
    fix="Start runs with gcp.TrainingPool's submit_command (it reads the group's target "
    f"size and refuses at maxNodes), or put the same check ({MAX_NODES_VARIABLE}=<cap> and "
    f'[ "$SIZE" {_GUARD} ]) before your own create-instance.',
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    targets = [
        str(a.inputs["target"])
        for a in graph.resources
        if a.type in AUTOSCALERS and a.inputs.get("target")
    ]
    for group, _template in training_gpu_groups(graph):
        if any(_targets(target, group) for target in targets):
            continue  # The autoscaler's maximum bounds it (AIS-C5-09 judges its minimum).
        commands = run_commands(graph, group)
        caps = [cap for cap in map(capped_at, commands) if cap is not None]
        size = int(group.inputs.get("targetSize") or 0)
        if not commands:
            yield fail(group, "no recorded run command, so nothing says how far it may grow.")
        elif len(caps) < len(commands):
            yield fail(group, "a run command creates VMs without checking the group's size.")
        elif size > min(caps):
            yield fail(group, f"starts with {size} VMs, above its cap of {min(caps)}.")
        else:
            yield ok(group, f"every run command refuses a run beyond {min(caps)} VMs.")

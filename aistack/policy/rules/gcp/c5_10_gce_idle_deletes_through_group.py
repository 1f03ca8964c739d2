"""AIS-C5-10: an idle GPU VM in a managed instance group deletes itself through the group."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import gpu_groups, node_environment


@rule(
    id="AIS-C5-10",
    checklist=["C5"],
    info="GPU VMs of a managed instance group run the idle watchdog set to delete them "
    "through that group.",
    why="A VM that shuts itself down inside a managed instance group is recreated: the "
    "group keeps its target size (research gcp-k8s.md §A C5). Deleting the VM through "
    "the group (instanceGroupManagers.deleteInstances) also lowers the target, so the "
    "idle VM stays gone.",
    fix="Boot the VMs with aistack.node.render_startup_script with scheduler 'mig' and "
    "instance_group set to the group's name (gcp.TrainingPool).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for group, template in gpu_groups(graph):
        env = node_environment(template)
        name = str(group.inputs.get("name") or group.outputs.get("name") or "")
        if env.get("AISTACK_SCHEDULER") != "mig":
            yield fail(group, "its VMs run no idle watchdog that deletes through the group.")
        elif env.get("AISTACK_INSTANCE_GROUP") != name:
            yield fail(
                group,
                f"the watchdog deletes through {env.get('AISTACK_INSTANCE_GROUP')!r}, not "
                f"{name!r}.",
            )
        else:
            yield ok(group, "idle VMs delete themselves through the group.")

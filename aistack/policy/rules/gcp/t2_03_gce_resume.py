"""AIS-T2-03: a preempted training VM comes back by itself and resumes from its checkpoint.

When a VM of a managed instance group stops running or fails its health check, autohealing
recreates it, with its name and its per-instance (stateful) metadata, so the run comes back
as itself (cloud.google.com/compute/docs/instance-groups/preserved-state, "How autohealing
handles preserved state"). The aistack node bootstrap then pulls the last flushed
checkpoint from AISTACK_CHECKPOINT_URI into AISTACK_CHECKPOINT_DIR before the trainer
starts. A regional group must not redistribute proactively: that deletes instances to
rebalance zones, and a deleted instance loses its stateful metadata
(.../configuring-stateful-migs, limitations: "set the redistribution type to NONE").
"""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import node_environment, training_gpu_groups


@rule(
    id="AIS-T2-03",
    checklist=["T2"],
    info="GPU training groups autoheal on a health check, and their VMs restore the last "
    "checkpoint from Cloud Storage at boot.",
    why="Resuming from the last checkpoint should need nobody awake at 2 a.m.: the group "
    "replaces the VM, the boot restores the checkpoint, the run goes on as itself.",
    fix="Give the group auto_healing_policies with a health check (regional groups: "
    "update_policy.instance_redistribution_type NONE), and boot the VMs with "
    "aistack.node.render_startup_script with a gs:// checkpoint_uri (gcp.TrainingPool does "
    "both).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for group, template in training_gpu_groups(graph):
        healing = group.inputs.get("autoHealingPolicies") or {}
        if isinstance(healing, list):
            healing = healing[0] if healing and isinstance(healing[0], dict) else {}
        env = node_environment(template)
        restores = env.get("AISTACK_CHECKPOINT_URI", "").startswith("gs://") and bool(
            env.get("AISTACK_CHECKPOINT_DIR")
        )
        regional = group.type.endswith(":RegionInstanceGroupManager")
        policy = group.inputs.get("updatePolicy") or {}
        redistribution = policy.get("instanceRedistributionType") or "PROACTIVE"
        if not healing.get("healthCheck"):
            yield fail(group, "no autohealing: a hung or failed VM is not replaced.")
        elif regional and redistribution != "NONE":
            yield fail(
                group,
                f"instance redistribution {redistribution}: rebalancing zones deletes a run's "
                "VM and its stateful metadata.",
            )
        elif not restores:
            yield fail(group, "its VMs restore no checkpoint at boot: a replaced VM starts over.")
        else:
            yield ok(group, "replaced VMs restore the last checkpoint and resume.")

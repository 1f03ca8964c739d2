"""AIS-T1-04: Spot GPU instance templates delete a preempted VM and flush checkpoints first."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import gpu_templates, node_environment


@rule(
    id="AIS-T1-04",
    checklist=["T1"],
    info="Spot GPU instance templates end a preempted VM with DELETE and run a spot watch "
    "that flushes checkpoints to Cloud Storage on the notice.",
    why="A Spot VM gets about 30 seconds between the preemption notice and its end. STOP "
    "keeps the VM and its disks billed and needs someone to restart it; DELETE lets the "
    "managed instance group create a fresh VM, which resumes only from a checkpoint that "
    "reached the bucket before the VM went (Compute Engine docs, 'Spot VMs': "
    "instance/preempted turns TRUE).",
    fix="Set scheduling.instance_termination_action = 'DELETE' and boot the VMs with "
    "aistack.node.render_startup_script with a gs:// checkpoint_uri (gcp.TrainingPool).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in gpu_templates(graph):
        scheduling = template.inputs.get("scheduling") or {}
        spot = scheduling.get("provisioningModel") == "SPOT" or scheduling.get("preemptible")
        if not spot:
            continue
        env = node_environment(template)
        action = scheduling.get("instanceTerminationAction") or "STOP"
        flush = env.get("AISTACK_CHECKPOINT_URI", "").startswith("gs://") or bool(
            env.get("AISTACK_CHECKPOINT_FLUSH_CMD")
        )
        if action != "DELETE":
            yield fail(template, f"a preempted VM is ended with {action}, not DELETE.")
        elif not flush:
            yield fail(template, "no spot watch flushes checkpoints on the preemption notice.")
        else:
            yield ok(template, "preempted VMs flush checkpoints, then are deleted and replaced.")

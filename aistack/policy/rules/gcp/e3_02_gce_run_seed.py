"""AIS-E3-02: every run started in a GPU training group carries its random seed.

A run in a managed instance group (gcp.TrainingPool, mig) is one VM created in the group
with the run's settings as per-instance (stateful) metadata, which the group sets again
when autohealing recreates the VM
(cloud.google.com/compute/docs/instance-groups/preserved-state). The recorded way of
starting a run is the create-instance command among the stack's or a component's outputs
(gcp.TrainingPool's `submit_command`); without one nothing in the stack passes a seed.
"""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import run_commands, stateful_metadata_keys, training_gpu_groups

SEED_KEY = "aistack-seed"


@rule(
    id="AIS-E3-02",
    checklist=["E3"],
    info=f"GPU training groups have a recorded run command that sets {SEED_KEY} as "
    "per-instance metadata of the run's VM.",
    why="Without the seed a run cannot be repeated, even where GPUs allow determinism; as "
    "stateful metadata it survives the VM's replacement after a preemption.",
    fix="Start runs with gcp.TrainingPool's submit_command (RUN_ID and SEED set), or export "
    f"your own create-instance command with --stateful-metadata={SEED_KEY}=<seed>.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for group, _template in training_gpu_groups(graph):
        commands = run_commands(graph, group)
        if not commands:
            yield fail(group, "no recorded command starts a run in the group: no seed reaches it.")
        elif all(SEED_KEY in stateful_metadata_keys(c) for c in commands):
            yield ok(group, f"every run VM carries its seed ({SEED_KEY}).")
        else:
            yield fail(group, f"a run command sets no {SEED_KEY} on the run's VM.")

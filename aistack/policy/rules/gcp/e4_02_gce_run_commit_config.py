"""AIS-E4-02: every run started in a GPU training group carries its commit and config hash.

As AIS-E3-02: the run's VM gets them as per-instance (stateful) metadata from the recorded
create-instance command (gcp.TrainingPool's `submit_command`).
"""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import run_commands, stateful_metadata_keys, training_gpu_groups

KEYS = ("aistack-code-commit", "aistack-config-hash")


@rule(
    id="AIS-E4-02",
    checklist=["E4"],
    info="GPU training groups have a recorded run command that sets aistack-code-commit "
    "and aistack-config-hash on the run's VM.",
    why="A checkpoint without the code and config that wrote it is an artefact nobody can rebuild.",
    fix="Start runs with gcp.TrainingPool's submit_command, or set both keys with "
    "--stateful-metadata in your create-instance command.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for group, _template in training_gpu_groups(graph):
        commands = run_commands(graph, group)
        if not commands:
            yield fail(group, "no recorded command starts a run: no commit or config reaches it.")
            continue
        missing = sorted({k for c in commands for k in KEYS if k not in stateful_metadata_keys(c)})
        if missing:
            yield fail(group, "a run command does not set " + ", ".join(missing) + ".")
        else:
            yield ok(group, "every run VM carries its commit and config hash.")

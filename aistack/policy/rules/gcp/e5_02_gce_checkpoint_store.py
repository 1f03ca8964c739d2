"""AIS-E5-02: GPU training VMs checkpoint to a versioned GCS bucket of the stack, and each
run's manifest (commit, config hash) is written beside its checkpoints."""

import re
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import (
    GCS_BUCKET,
    bucket_name,
    node_environment,
    run_commands,
    training_gpu_groups,
)


def _manifest_written(command: str, uri: str) -> bool:
    """The command copies a manifest naming commit and config under the checkpoint URI."""
    under = re.search(rf"{re.escape(uri.rstrip('/'))}/\S*manifest\.json", command)
    return bool(under) and "code_commit" in command and "config_hash" in command


@rule(
    id="AIS-E5-02",
    checklist=["E5"],
    info="GPU training templates flush checkpoints to a versioned GCS bucket of this stack "
    "(AISTACK_CHECKPOINT_URI), and the group's run command writes the run's manifest with "
    "commit and config hash under it.",
    why="Checkpoints on a VM's local SSD die with it; checkpoints without their commit and "
    "config cannot be resumed or explained. Versioning keeps an overwritten checkpoint "
    "recoverable.",
    fix="Pass the checkpoints gcp.DatasetBucket to gcp.TrainingPool and start runs with its "
    "submit_command.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    buckets = {bucket_name(b): b for b in graph.of_type(GCS_BUCKET)}
    for group, template in training_gpu_groups(graph):
        uri = node_environment(template).get("AISTACK_CHECKPOINT_URI", "")
        name = uri.removeprefix("gs://").split("/", 1)[0] if uri.startswith("gs://") else ""
        bucket = buckets.get(name)
        if bucket is None or not bucket.get("versioning", "enabled"):
            yield fail(
                template,
                f"checkpoint URI {uri or '(none)'} is not a versioned bucket of this stack.",
            )
        elif not any(_manifest_written(c, uri) for c in run_commands(graph, group)):
            yield fail(
                template, "no run command writes a manifest (commit, config) beside checkpoints."
            )
        else:
            yield ok(template, f"checkpoints to {uri}, each run's manifest beside them.")

"""AIS-T1-01: training runs checkpoint to durable storage, and flush on a Spot notice."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.aws_training import (
    environment,
    training_job_definitions,
    training_templates,
    user_data,
)


@rule(
    id="AIS-T1-01",
    checklist=["T1"],
    info="Jobs get a durable checkpoint URI; training nodes flush checkpoints on an "
    "interruption notice.",
    why="A Spot interruption should cost the minutes since the last checkpoint, not the run.",
    fix="Use aws.TrainingPool with a checkpoints DatasetBucket (the node's spot-watch "
    "signals the trainer and flushes to AISTACK_CHECKPOINT_URI).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for job in training_job_definitions(graph):
        if environment(job).get("AISTACK_CHECKPOINT_URI", "").startswith("s3://"):
            yield ok(job, "checkpoints to object storage.")
        else:
            yield fail(job, "no durable checkpoint location.")
    for template in training_templates(graph):
        if "AISTACK_CHECKPOINT_URI=" in user_data(template):
            yield ok(template, "flushes checkpoints on a Spot notice.")
        else:
            yield fail(template, "nodes do not flush checkpoints on an interruption notice.")

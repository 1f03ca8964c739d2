"""AIS-D4-01: every training job carries an explicit dataset version."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.aws_training import environment, training_job_definitions

FLOATING = {"", "latest", "current", "head", "unset"}


@rule(
    id="AIS-D4-01",
    checklist=["D4"],
    info="Job definitions pass AISTACK_DATASET_VERSION, a pinned version, to every run.",
    why="A result without the data version it was trained on cannot be reproduced or audited.",
    fix="Set the dataset version on the DatasetBucket or the pool's datasetVersion.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for job in training_job_definitions(graph):
        version = environment(job).get("AISTACK_DATASET_VERSION", "")
        if version.strip().lower() in FLOATING:
            yield fail(job, f"dataset version {version!r} is not pinned.")
        else:
            yield ok(job, f"runs record dataset version {version}.")

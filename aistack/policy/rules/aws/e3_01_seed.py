"""AIS-E3-01: every run is submitted with its random seed."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.aws_training import run_parameters, training_job_definitions


@rule(
    id="AIS-E3-01",
    checklist=["E3"],
    info="Job definitions take a `seed` parameter and pass it to the run.",
    why="Without the seed a run cannot be repeated, even where GPUs allow determinism.",
    fix="Declare a `seed` parameter used as Ref::seed in the command (aws.TrainingPool does).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for job in training_job_definitions(graph):
        if "seed" in run_parameters(job):
            yield ok(job, "seed passed to every run.")
        else:
            yield fail(job, "no seed parameter reaches the run.")

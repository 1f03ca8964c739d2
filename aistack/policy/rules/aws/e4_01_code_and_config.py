"""AIS-E4-01: every run is tied to the code commit and config that produced it."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.aws_training import run_parameters, training_job_definitions


@rule(
    id="AIS-E4-01",
    checklist=["E4"],
    info="Job definitions take `code_commit` and `config_hash` parameters used by the run.",
    why="A checkpoint without the code and config that wrote it is an artefact nobody can rebuild.",
    fix="Declare code_commit and config_hash parameters used as Ref:: in the command.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for job in training_job_definitions(graph):
        missing = {"code_commit", "config_hash"} - run_parameters(job)
        if missing:
            yield fail(job, "runs lack " + ", ".join(sorted(missing)) + ".")
        else:
            yield ok(job, "commit and config hash passed to every run.")

"""AIS-T5-01: every job and every training node has a hard wall-clock limit."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.aws_training import training_job_definitions, training_templates, user_data


@rule(
    id="AIS-T5-01",
    checklist=["T5"],
    info="Job definitions set a timeout; training nodes enforce a maximum runtime.",
    why="A hung job or forgotten node bills until someone notices; a limit is the safety net.",
    fix="Set maxRuntimeMinutes on aws.TrainingPool (job timeout + node wall-clock limit).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for job in training_job_definitions(graph):
        seconds = (job.inputs.get("timeout") or {}).get("attemptDurationSeconds")
        if seconds:
            yield ok(job, f"each attempt stops after {seconds // 60} minutes.")
        else:
            yield fail(job, "jobs may run forever.")
    for template in training_templates(graph):
        text = user_data(template)
        if "AISTACK_SCHEDULER=batch" in text:
            continue  # Batch hosts are bounded per job (the timeout above), not per host.
        if "AISTACK_MAX_RUNTIME_MINUTES=" in text:
            yield ok(template, "nodes end themselves at the wall-clock limit.")
        else:
            yield fail(template, "nodes have no wall-clock limit.")

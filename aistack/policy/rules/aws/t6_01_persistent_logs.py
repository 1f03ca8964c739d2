"""AIS-T6-01: logs go to retained, encrypted log groups, and jobs ship theirs there."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.aws_training import container, training_job_definitions


@rule(
    id="AIS-T6-01",
    checklist=["T6"],
    info="Log groups have a retention and a KMS key; jobs log to a log group of the stack.",
    why="Logs only on the instance vanish with a Spot reclaim, exactly when they are needed.",
    fix="Use aws.TrainingPool (awslogs to its KMS-encrypted log group, 90-day retention), or "
    "set retentionInDays and kmsKeyId on the log group.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    groups = {
        g.outputs.get("name") or g.inputs.get("name"): g
        for g in graph.of_type("aws:cloudwatch/logGroup:LogGroup")
    }
    for group in groups.values():
        if group.inputs.get("retentionInDays") and group.inputs.get("kmsKeyId"):
            yield ok(group, f"kept {group.inputs['retentionInDays']} days, encrypted.")
        else:
            yield fail(group, "log group without retention or without a KMS key.")
    for job in training_job_definitions(graph):
        log = container(job).get("logConfiguration") or {}
        target = (log.get("options") or {}).get("awslogs-group")
        if log.get("logDriver") == "awslogs" and target in groups:
            yield ok(job, f"logs to {target}.")
        else:
            yield fail(job, "job logs do not reach a log group of this stack.")

"""AIS-T5-02: every job template has a hard wall-clock limit: `activeDeadlineSeconds` on
each Job, or Kueue's `kueue.x-k8s.io/max-exec-time-seconds` (Kueue v0.19.2
pkg/controller/constants/constants.go MaxExecTimeSecondsLabel: a positive integer,
counted across admissions)."""

from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import job_templates, pod_specs

MAX_EXEC_TIME = "kueue.x-k8s.io/max-exec-time-seconds"


def _limits(document: dict[str, Any]) -> list[str]:
    labels = (document.get("metadata") or {}).get("labels") or {}
    found = []
    text = str(labels.get(MAX_EXEC_TIME, ""))
    if text.isdigit() and int(text) > 0:
        found.append(f"Kueue stops it after {int(text)} s of execution")
    deadlines: list[Any] = [job.get("activeDeadlineSeconds") for job, _ in pod_specs(document)]
    if deadlines and all(isinstance(d, int) and d > 0 for d in deadlines):
        found.append(f"each Job stops after {max(deadlines)} s")
    return found


@rule(
    id="AIS-T5-02",
    checklist=["T5"],
    info="Job templates set activeDeadlineSeconds or Kueue's max execution time.",
    why="A hung run holds its GPUs and bills until someone notices; a limit is the net.",
    fix="Set maxRuntimeMinutes on k8s.TrainingJobTemplate (both limits).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in job_templates(graph):
        where = f"{template.kind} template {template.name!r} ({template.key})"
        limits = _limits(template.document)
        if limits:
            yield ok(template.config_map, f"{where}: " + "; ".join(limits) + ".")
        else:
            yield fail(template.config_map, f"{where} may run forever.")

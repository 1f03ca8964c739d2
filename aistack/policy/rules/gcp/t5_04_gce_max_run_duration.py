"""AIS-T5-04: GPU instance templates bound how long a VM lives (max_run_duration)."""

from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import training_gpu_templates


@rule(
    id="AIS-T5-04",
    checklist=["T5"],
    info="GPU instance templates set scheduling.max_run_duration.",
    why="A hung trainer, a forgotten interactive session or a watchdog that failed to start "
    "keeps a GPU VM billing until someone notices. max_run_duration makes Compute Engine "
    "end the VM after a wall-clock limit, whatever runs on it (pulumi-gcp scheduling "
    "max_run_duration, with instance_termination_action DELETE).",
    fix="Set scheduling.max_run_duration.seconds (gcp.TrainingPool maxRuntimeMinutes).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in training_gpu_templates(graph):
        scheduling = template.inputs.get("scheduling") or {}
        seconds: Any = (scheduling.get("maxRunDuration") or {}).get("seconds")
        try:
            limit = int(seconds)
        except (TypeError, ValueError):
            limit = 0
        if limit > 0:
            yield ok(template, f"VMs live at most {limit / 3600:g} hours.")
        else:
            yield fail(template, "no max_run_duration: a VM can run, and bill, forever.")

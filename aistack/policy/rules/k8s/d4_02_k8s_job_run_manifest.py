"""AIS-D4-02: every run of a job template records its run manifest: the dataset version,
run id, seed, code commit and config hash in the trainer's environment (the AISTACK_* names
aws.TrainingPool's jobs use), so results can be traced to data, code and configuration."""

from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import pod_specs
from aistack.queries.k8s_jobs import judged_templates

RUN_MANIFEST = (
    "AISTACK_DATASET_VERSION",
    "AISTACK_RUN_ID",
    "AISTACK_SEED",
    "AISTACK_CODE_COMMIT",
    "AISTACK_CONFIG_HASH",
)
#: Values that name no version.
_FLOATING = {"", "latest", "current"}


def _problems(document: dict[str, Any]) -> list[str]:
    problems = []
    for _, pod in pod_specs(document):
        for container in pod.get("containers") or []:
            env = {e.get("name"): e.get("value") for e in container.get("env") or []}
            missing = [k for k in RUN_MANIFEST if str(env.get(k) or "").lower() in _FLOATING]
            if missing:
                problems.append(f"container {container.get('name')!r} lacks {missing}")
    return sorted(set(problems))


@rule(
    id="AIS-D4-02",
    checklist=["D4", "E3", "E4"],
    info="Job templates pass the dataset version, run id, seed, commit and config hash.",
    why="A result whose data version, seed, code and configuration are unknown cannot be "
    "reproduced or trusted.",
    fix="Render the template with k8s.TrainingJobTemplate (datasetVersion; the submit "
    "command fills in the run's values).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for judged in judged_templates(graph, _problems):
        if judged.problems:
            yield fail(judged.config_map, judged.failure)
        else:
            yield ok(judged.config_map, f"{judged.where} records its run manifest.")

"""AIS-E1-06: the images of job templates (held in ConfigMaps, where AIS-E1-02, which
reads workloads, does not look) are referenced by digest."""

from collections.abc import Iterator
from typing import Any

from aistack.contracts.images import reference_problem
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import pod_specs
from aistack.queries.k8s_jobs import judged_templates


def _problems(document: dict[str, Any]) -> list[str]:
    problems = []
    for _, pod in pod_specs(document):
        for container in [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]:
            problem = reference_problem(container.get("image"))
            if problem:
                problems.append(f"container {container.get('name')!r}: {problem}")
    return sorted(set(problems))


@rule(
    id="AIS-E1-06",
    checklist=["E1"],
    info="Job templates reference every image by digest.",
    why="A tag can be moved to another build: two runs of one template would then train "
    "with different code, and neither records which.",
    fix="Give k8s.TrainingJobTemplate the image as repo@sha256:<digest>.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for judged in judged_templates(graph, _problems):
        if judged.problems:
            yield fail(judged.config_map, judged.failure)
        else:
            yield ok(judged.config_map, f"{judged.where} pins its images by digest.")

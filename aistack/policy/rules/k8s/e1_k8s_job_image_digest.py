"""AIS-E1-06: the images of job templates (held in ConfigMaps, where AIS-E1-02, which
reads workloads, does not look) are referenced by digest."""

from aistack.images import reference_problem
from aistack.policy import fail, ok, rule
from aistack.queries.k8s import job_templates, pod_specs


def _problems(document):
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
def check(graph):
    for template in job_templates(graph):
        where = f"{template.kind} template {template.name!r} ({template.key})"
        problems = _problems(template.document)
        if problems:
            yield fail(template.config_map, f"{where}: " + "; ".join(problems) + ".")
        else:
            yield ok(template.config_map, f"{where} pins its images by digest.")

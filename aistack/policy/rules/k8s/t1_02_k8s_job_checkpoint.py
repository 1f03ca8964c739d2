"""AIS-T1-02: job templates give the trainer a checkpoint URI and a chance to write a
final checkpoint when stopped: AISTACK_CHECKPOINT_URI in every container's environment, a
preStop hook (which signals the trainer), and a terminationGracePeriodSeconds no longer
than Spot gives (AWS: a 2-minute notice; GKE Spot: 15 s for non-system pods, GKE docs
"Spot VMs"), since a longer one is cut off anyway and hides that the trainer is too slow."""

from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import pod_specs
from aistack.queries.k8s_jobs import judged_templates

MAX_GRACE_SECONDS = 120


def _problems(document: dict[str, Any]) -> list[str]:
    problems = []
    for _, pod in pod_specs(document):
        grace = pod.get("terminationGracePeriodSeconds")
        if not isinstance(grace, int) or grace > MAX_GRACE_SECONDS:
            problems.append(
                f"terminationGracePeriodSeconds is {grace!r}, not at most {MAX_GRACE_SECONDS}"
            )
        for container in pod.get("containers") or []:
            name = container.get("name")
            env = {e.get("name"): e.get("value") for e in container.get("env") or []}
            if not env.get("AISTACK_CHECKPOINT_URI"):
                problems.append(f"container {name!r} has no AISTACK_CHECKPOINT_URI")
            if not (container.get("lifecycle") or {}).get("preStop"):
                problems.append(f"container {name!r} has no preStop hook to signal it")
    return sorted(set(problems))


@rule(
    id="AIS-T1-02",
    checklist=["T1", "E5"],
    info="Job templates name a checkpoint URI, signal the trainer on stop, within Spot's grace.",
    why="A Spot node gives seconds to minutes before it goes: a trainer that is not told, or "
    "has nowhere durable to write, loses everything since its last checkpoint.",
    fix="Render the template with k8s.TrainingJobTemplate (checkpointUri, "
    "terminationGraceSeconds, checkpointSignal).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for judged in judged_templates(graph, _problems):
        if judged.problems:
            yield fail(judged.config_map, judged.failure)
        else:
            yield ok(judged.config_map, f"{judged.where} checkpoints and is signalled on stop.")

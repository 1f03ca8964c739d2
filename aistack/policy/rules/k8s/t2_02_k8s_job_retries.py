"""AIS-T2-02: job templates retry what a disruption interrupts, without counting it, and
retry anything else a bounded number of times.

A Job: `restartPolicy: Never` (what `podFailurePolicy` requires), a `podFailurePolicy`
rule ignoring pods failed with the `DisruptionTarget` condition (preemption, eviction,
node shutdown: Kubernetes docs, "Handling retriable and non-retriable pod failures with
Pod failure policy"), and an explicit `backoffLimit` of at most 10. A JobSet: a bounded
`failurePolicy.maxRestarts`, a rule restarting on the child Job failure reason
`PodFailurePolicy`, child Jobs that fail on `DisruptionTarget`, and, because
`RestartJobSetAndIgnoreMaxRestarts` is unbounded, a deadline (T5).
"""

from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import pod_specs
from aistack.queries.k8s_jobs import judged_templates

MAX_RETRIES = 10


def _disruption_rule(job: dict[str, Any], action: str) -> bool:
    for item in (job.get("podFailurePolicy") or {}).get("rules") or []:
        for condition in item.get("onPodConditions") or []:
            if (
                item.get("action") == action
                and condition.get("type") == "DisruptionTarget"
                and condition.get("status", "True") == "True"
            ):
                return True
    return False


def _has_deadline(document: dict[str, Any]) -> bool:
    labels = (document.get("metadata") or {}).get("labels") or {}
    if str(labels.get("kueue.x-k8s.io/max-exec-time-seconds", "")).isdigit():
        return True
    return all(job.get("activeDeadlineSeconds") for job, _ in pod_specs(document))


def _problems(document: dict[str, Any]) -> list[str]:
    problems = []
    jobs = pod_specs(document)
    for _, pod in jobs:
        if pod.get("restartPolicy") != "Never":
            problems.append("restartPolicy is not Never (podFailurePolicy needs it)")
    if document.get("kind") == "Job":
        job = jobs[0][0]
        if not _disruption_rule(job, "Ignore"):
            problems.append(
                "no podFailurePolicy rule ignores DisruptionTarget: preemptions use up retries"
            )
        limit = job.get("backoffLimit")
        if not isinstance(limit, int) or not 0 <= limit <= MAX_RETRIES:
            problems.append(f"backoffLimit is not set between 0 and {MAX_RETRIES}")
        return problems
    policy = (document.get("spec") or {}).get("failurePolicy") or {}
    restarts = policy.get("maxRestarts")
    if not isinstance(restarts, int) or not 1 <= restarts <= MAX_RETRIES:
        # JobSet's maxRestarts defaults to 0: the first failure fails the run.
        problems.append(f"failurePolicy.maxRestarts is not set between 1 and {MAX_RETRIES}")
    rules = policy.get("rules") or []
    restarting = [
        r
        for r in rules
        if r.get("action", "").startswith("RestartJobSet")
        and "PodFailurePolicy" in (r.get("onJobFailureReasons") or [])
    ]
    if not restarting:
        problems.append("no failurePolicy rule restarts the JobSet on reason PodFailurePolicy")
    if not all(_disruption_rule(job, "FailJob") for job, _ in jobs):
        problems.append("a replicated Job does not fail on DisruptionTarget")
    unbounded = any(r.get("action") == "RestartJobSetAndIgnoreMaxRestarts" for r in rules)
    if unbounded and not _has_deadline(document):
        problems.append("RestartJobSetAndIgnoreMaxRestarts without a deadline restarts forever")
    return problems


@rule(
    id="AIS-T2-02",
    checklist=["T2"],
    info="Job templates ignore disruptions in their retry count and bound other retries.",
    why="A preempted or reclaimed pod is not the trainer's fault: counted as a failure, a "
    "few Spot reclaims fail the run. Unbounded retries of a real failure burn GPUs forever.",
    fix="Render the template with k8s.TrainingJobTemplate (podFailurePolicy Ignore on "
    'DisruptionTarget status "True", restartPolicy Never, backoffLimit; for a JobSet '
    "failurePolicy maxRestarts with a rule on PodFailurePolicy, and a deadline).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for judged in judged_templates(graph, _problems):
        if judged.problems:
            yield fail(judged.config_map, judged.failure)
        else:
            yield ok(
                judged.config_map, f"{judged.where} retries disruptions uncounted, others bounded."
            )

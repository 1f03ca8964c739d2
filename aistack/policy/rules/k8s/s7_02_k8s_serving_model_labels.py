"""AIS-S7-02: every serving pod template in the stack names its model and an explicit
version in the labels k8s.ImagePolicy's admission policy requires.

Judged before deploy, so a stack whose serving pods the policy would refuse fails here
instead of in a half-applied `pulumi up`. Serving means: in a namespace of the stack
labelled `aistack.dev/tier: serve` (k8s.TeamNamespace sets it), the scope the admission
policy judges. A pod template anywhere that carries `aistack.dev/model-version` is judged
too: a moving label there is never a version.
"""

from __future__ import annotations

from collections.abc import Iterator

from aistack.contracts.k8s import MODEL_NAME_LABEL, MODEL_VERSION_LABEL, TIER_LABEL
from aistack.contracts.model_versions import is_moving_label
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import NAMESPACE, is_k8s_object, manifest, metadata_of, namespace_of

#: Kind -> where its pod templates are (the kinds k8s.ImagePolicy judges).
_TEMPLATES = {
    "Pod": lambda d: [d],
    "Deployment": lambda d: [(d.get("spec") or {}).get("template") or {}],
    "StatefulSet": lambda d: [(d.get("spec") or {}).get("template") or {}],
    "DaemonSet": lambda d: [(d.get("spec") or {}).get("template") or {}],
    "ReplicaSet": lambda d: [(d.get("spec") or {}).get("template") or {}],
    "Job": lambda d: [(d.get("spec") or {}).get("template") or {}],
    "CronJob": lambda d: [
        (((d.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
    ],
    "JobSet": lambda d: [
        ((r.get("template") or {}).get("spec") or {}).get("template") or {}
        for r in (d.get("spec") or {}).get("replicatedJobs") or []
    ],
}


def _problem(labels: dict) -> str | None:
    name = str(labels.get(MODEL_NAME_LABEL) or "").strip()
    version = str(labels.get(MODEL_VERSION_LABEL) or "").strip()
    if not name:
        return f"no {MODEL_NAME_LABEL} label"
    if not version:
        return f"no {MODEL_VERSION_LABEL} label"
    if is_moving_label(version):
        return f"{MODEL_VERSION_LABEL}={version!r} is a moving label, not a version"
    return None


@rule(
    id="AIS-S7-02",
    checklist=["S7"],
    info=f"Serving pod templates carry {MODEL_NAME_LABEL} and an explicit "
    f"{MODEL_VERSION_LABEL} (not latest).",
    why="Under a moving label two replicas started an hour apart can serve different "
    "models and nobody can say which answered; k8s.ImagePolicy refuses such pods in "
    "serving namespaces, so the stack would fail at deploy.",
    fix=f"Deploy with k8s.InferenceService, or label the pod template {MODEL_NAME_LABEL}="
    f"<model> and {MODEL_VERSION_LABEL}=<the immutable version, e.g. 1.4.0>.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    serving = {
        metadata_of(n).get("name")
        for n in graph.of_type(NAMESPACE)
        if (metadata_of(n).get("labels") or {}).get(TIER_LABEL) == "serve"
    }
    for resource in graph.resources:
        if not is_k8s_object(resource):
            continue
        document = manifest(resource)
        templates = _TEMPLATES.get(str(document.get("kind")))
        if templates is None:
            continue
        labelled = [(t.get("metadata") or {}).get("labels") or {} for t in templates(document)]
        in_serving = namespace_of(resource) in serving
        judged = [labels for labels in labelled if in_serving or MODEL_VERSION_LABEL in labels]
        if not judged:
            continue
        where = f"{document['kind']} {document['metadata'].get('name')!r}"
        problems = sorted({p for p in map(_problem, judged) if p})
        if problems:
            yield fail(resource, f"{where}: " + "; ".join(problems) + ".")
        else:
            versions = sorted({labels[MODEL_VERSION_LABEL] for labels in judged})
            yield ok(resource, f"{where} serves model version {', '.join(versions)}.")

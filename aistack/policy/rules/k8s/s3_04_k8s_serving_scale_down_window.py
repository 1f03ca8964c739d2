"""AIS-S3-04: serving autoscalers wait out a model load before removing replicas."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s_serving import (
    ServingWorkload,
    autoscalers,
    scale_target,
    serving_workloads,
)

#: At least five minutes: pulling a GPU image and loading a model takes minutes.
MIN_WINDOW_SECONDS = 300
#: The HPA's own default scale-down window (Kubernetes docs, "Horizontal Pod Autoscaling",
#: stabilization window): 300 s when behavior is unset.
HPA_DEFAULT_WINDOW = 300


def _window(kind: str, spec: dict) -> int:
    if kind == "ScaledObject":
        spec = ((spec.get("advanced") or {}).get("horizontalPodAutoscalerConfig")) or {}
    behavior = spec.get("behavior") or {}
    window = (behavior.get("scaleDown") or {}).get("stabilizationWindowSeconds")
    return HPA_DEFAULT_WINDOW if window is None else int(window)


@rule(
    id="AIS-S3-04",
    checklist=["S3"],
    info=f"Serving autoscalers keep a scale-down window of at least {MIN_WINDOW_SECONDS} s.",
    why="A replica that takes minutes to load its model is worth keeping through a lull: "
    "ai-on-gke's vLLM HPA scales down after 30 s (autoscale/horizontal-pod-autoscaler.yaml), "
    "so every burst after a pause waits for a new replica to pull and load again, and the "
    "tier thrashes between sizes.",
    fix="Use k8s.InferenceService (autoscaling.scaleDownWindowSeconds, default 600), or set "
    "behavior.scaleDown.stabilizationWindowSeconds.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    serving: dict[tuple[str | None, str | None], ServingWorkload] = {
        (w.namespace, w.name): w for w in serving_workloads(graph)
    }
    for resource, kind, namespace, spec in autoscalers(graph):
        workload = serving.get((namespace, scale_target(kind, spec)))
        if workload is None:
            continue
        window = _window(kind, spec)
        if window < MIN_WINDOW_SECONDS:
            yield fail(resource, f"{workload.name}: replicas go after {window} s of low load.")
        else:
            yield ok(resource, f"{workload.name}: scale-down waits {window} s.")

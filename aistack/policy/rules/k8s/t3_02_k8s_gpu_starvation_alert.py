"""AIS-T3-02: every namespace with a GPU quota is watched by a GPU-starvation alert."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s_alerts import (
    alert_rules,
    covers_namespace,
    gpu_namespaces,
    is_starvation_alert,
)


@rule(
    id="AIS-T3-02",
    checklist=["T3"],
    info="Every namespace with a GPU quota is covered by an alert on low average GPU "
    "utilisation while a workload runs.",
    why="GPU starvation by the data pipeline is the usual inefficiency: paid GPUs waiting on "
    "input. DCGM_FI_DEV_GPU_UTIL averaged over a window is the signal every NVIDIA GPU "
    "gives (the profiling metrics are not on all of them).",
    fix="Add k8s.GpuMonitoring (alert AistackGpuStarved), or a PrometheusRule / GMP Rules "
    "alert on avg_over_time(DCGM_FI_DEV_GPU_UTIL[30m]) below a threshold that does not "
    "exclude the namespace.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    starved = [r for _, r in alert_rules(graph) if is_starvation_alert(r["expr"])]
    for namespace, name, gpus in gpu_namespaces(graph):
        covering = [r["alert"] for r in starved if covers_namespace(r["expr"], name)]
        if covering:
            yield ok(namespace, f"namespace {name!r}: starvation alert {covering[0]}.")
        else:
            yield fail(
                namespace,
                f"namespace {name!r} may hold {gpus} GPUs and no alert fires when they starve.",
            )

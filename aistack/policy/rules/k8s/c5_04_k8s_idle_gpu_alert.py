"""AIS-C5-04: every namespace with a GPU quota is watched by an idle-GPU alert."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s_alerts import (
    alert_rules,
    covers_namespace,
    gpu_namespaces,
    is_idle_gpu_alert,
)


@rule(
    id="AIS-C5-04",
    checklist=["C5"],
    info="Every namespace with a GPU quota is covered by an alert on GPUs held but idle.",
    why="On Kubernetes a pod keeps its GPUs until it ends: a notebook left open or a script "
    "sleeping after its last step holds a node the autoscaler cannot remove and quota "
    "others wait for. Nothing in Kubernetes stops it; an alert on the DCGM exporter's "
    "utilisation (highest value over a window below ~1 %) tells the owner.",
    fix="Add k8s.GpuMonitoring (alert AistackGpuIdle), or a PrometheusRule / GMP Rules "
    "alert on max_over_time(DCGM_FI_DEV_GPU_UTIL[30m]) < 1 that does not exclude the "
    "namespace.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    idle = [(resource, r) for resource, r in alert_rules(graph) if is_idle_gpu_alert(r["expr"])]
    for namespace, name, gpus in gpu_namespaces(graph):
        covering = [r["alert"] for _, r in idle if covers_namespace(r["expr"], name)]
        if covering:
            yield ok(namespace, f"namespace {name!r} ({gpus} GPUs): idle alert {covering[0]}.")
        else:
            yield fail(
                namespace,
                f"namespace {name!r} may hold {gpus} GPUs and no alert fires when they idle.",
            )

"""AIS-C5-05: GPU alerts are fed: the same monitoring stack scrapes the DCGM exporter, with
the labels the alerts select on."""

from collections.abc import Iterator

from aistack.contracts.k8s import DCGM_SCRAPE_ANNOTATION as DCGM_SCRAPE
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s_alerts import (
    SCRAPE_KINDS,
    alert_rules,
    annotation,
    is_idle_gpu_alert,
    is_starvation_alert,
    rule_family,
)

#: Set by k8s.GpuMonitoring on its rules: who scrapes the exporter when the stack does not
#: ('installer': the GPU Operator's or the chart's own ServiceMonitor; 'gke-managed': GKE's
#: managed DCGM package, which deploys its own ClusterPodMonitoring).
_OUTSIDE = ("installer", "gke-managed")


def _selects_dcgm(scrape: Resource) -> bool:
    if annotation(scrape, "aistack.dev/dcgm-exporter"):
        return True
    labels = ((scrape.inputs.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return any("dcgm-exporter" in str(value) for value in labels.values())


def _honours_labels(scrape: Resource) -> bool:
    spec = scrape.inputs.get("spec") or {}
    endpoints = [*(spec.get("endpoints") or []), *(spec.get("podMetricsEndpoints") or [])]
    return any(endpoint.get("honorLabels") for endpoint in endpoints)


@rule(
    id="AIS-C5-05",
    checklist=["C5", "T3"],
    info="GPU utilisation alerts are evaluated by a monitoring stack that scrapes the DCGM "
    "exporter, with honorLabels off when they select exported_namespace / exported_pod.",
    why="An alert on a metric nobody scrapes never fires, and looks like a quiet cluster: a "
    "PrometheusRule next to only a GMP PodMonitoring (or the reverse) is evaluated where "
    "the series are not. With honorLabels true the exporter's pod labels replace the "
    "target's instead of arriving as exported_*, so alerts selecting exported_pod match "
    "nothing.",
    fix="Use k8s.GpuMonitoring (it scrapes in the same stack), or add a ServiceMonitor / "
    "PodMonitoring for the exporter in the same stack as the rules, honorLabels false; "
    f"when the installer's own monitor scrapes, annotate the rules {DCGM_SCRAPE}: installer.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    scrapes = [r for r in graph.resources if r.type in SCRAPE_KINDS and _selects_dcgm(r)]
    seen = set()
    for resource, alert in alert_rules(graph):
        expr = alert["expr"]
        if not (is_idle_gpu_alert(expr) or is_starvation_alert(expr)) or resource.urn in seen:
            continue
        seen.add(resource.urn)
        family = rule_family(resource)
        declared = annotation(resource, DCGM_SCRAPE)
        fed = [s for s in scrapes if rule_family(s) == family]
        if declared in _OUTSIDE:
            yield ok(resource, f"GPU alerts fed by the {declared}'s scrape, as declared.")
        elif not fed:
            yield fail(resource, f"GPU alerts, but no {family} scrape of the DCGM exporter.")
        elif "exported_" in expr and any(_honours_labels(s) for s in fed):
            yield fail(
                resource,
                "GPU alerts select exported_* labels but the exporter is scraped with "
                "honorLabels: true, so no series has them.",
            )
        else:
            yield ok(resource, f"GPU alerts fed by {fed[0].name} ({family}).")

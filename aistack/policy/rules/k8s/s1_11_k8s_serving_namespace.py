"""AIS-S1-11: serving runs in a serve-tier namespace of its own, never beside training."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import NAMESPACE, job_templates, kueue_objects, metadata_of, namespace_of
from aistack.queries.k8s_serving import serving_workloads


@rule(
    id="AIS-S1-11",
    checklist=["S1"],
    info="Serving workloads run in a namespace labelled aistack.dev/tier: serve that holds "
    "no training queue or job template.",
    why="The serving namespace is the one the internet reaches through the Gateway; its "
    "NetworkPolicies, ServiceAccounts and quotas are written for that. Training beside it "
    "would share the ServiceAccounts that read datasets and checkpoints, and a compromised "
    "model server would reach them.",
    fix="Give k8s.InferenceService a TeamNamespace with tier: serve, and keep training in "
    "its train namespace.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    tiers = {
        str(metadata_of(ns).get("name")): (metadata_of(ns).get("labels") or {}).get(
            "aistack.dev/tier"
        )
        for ns in graph.of_type(NAMESPACE)
    }
    training = {namespace_of(q) for q in kueue_objects(graph, "LocalQueue")}
    training |= {namespace_of(t.config_map) for t in job_templates(graph)}
    for workload in serving_workloads(graph):
        namespace = workload.namespace
        if namespace in training:
            yield fail(
                workload.resource, f"{workload.name}: shares namespace {namespace!r} with training."
            )
        elif tiers.get(namespace or "") != "serve":
            yield fail(
                workload.resource, f"{workload.name}: namespace {namespace!r} is no serve tier."
            )
        else:
            yield ok(workload.resource, f"{workload.name}: in serving namespace {namespace!r}.")

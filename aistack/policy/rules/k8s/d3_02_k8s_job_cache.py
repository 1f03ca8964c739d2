"""AIS-D3-02: job templates cache data on node-local disk, bounded: a disk-backed
`emptyDir` with a `sizeLimit`, every emptyDir sized, and an `ephemeral-storage` request so
the scheduler places the pod on a node that has the disk (Kubernetes docs, "Local
ephemeral storage"). The disk is the node's NVMe where the pool puts it under the kubelet
(GKE local SSD ephemeral storage, Karpenter instanceStorePolicy RAID0)."""

from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import pod_specs
from aistack.queries.k8s_jobs import judged_templates


def _problems(document: dict[str, Any]) -> list[str]:
    problems = []
    for _, pod in pod_specs(document):
        dirs = [v for v in pod.get("volumes") or [] if "emptyDir" in v]
        disk = [v for v in dirs if (v["emptyDir"] or {}).get("medium", "") != "Memory"]
        unsized = [v.get("name") for v in dirs if not (v["emptyDir"] or {}).get("sizeLimit")]
        if not disk:
            problems.append("no node-local emptyDir cache")
        if unsized:
            problems.append(f"emptyDir {unsized} has no sizeLimit")
        for container in pod.get("containers") or []:
            requests = (container.get("resources") or {}).get("requests") or {}
            if disk and "ephemeral-storage" not in requests:
                name = container.get("name")
                problems.append(f"container {name!r} requests no ephemeral-storage")
    return sorted(set(problems))


@rule(
    id="AIS-D3-02",
    checklist=["D3"],
    info="Job templates cache on a sized node-local emptyDir and request the disk.",
    why="Reading a dataset from object storage every epoch starves the GPUs; an unbounded "
    "cache fills the node's disk and gets every pod on it evicted.",
    fix="Render the template with k8s.TrainingJobTemplate (datasetCacheGib).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for judged in judged_templates(graph, _problems):
        if judged.problems:
            yield fail(judged.config_map, judged.failure)
        else:
            yield ok(judged.config_map, f"{judged.where} caches on sized node-local disk.")

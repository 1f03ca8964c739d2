"""AIS-C3-11: Kueue could admit every job template into the ClusterQueue it names."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.kueue_admission import admissions


@rule(
    id="AIS-C3-11",
    checklist=["C3"],
    info="Every job template that names a Kueue queue fits its ClusterQueue: each resource "
    "its pods request is covered, and one flavor's node labels, taints and quota hold "
    "each pod set.",
    why="Kueue keeps a workload it cannot admit suspended, and nothing fails: no pod runs, "
    "no error reaches `pulumi up`, and the GPUs the queue's quota was sized for sit idle "
    "while the job waits for ever. A request for a resource the queue does not cover "
    "(ephemeral-storage for a node-local cache) is enough (Kueue's flavor assigner: "
    "'resource ephemeral-storage unavailable in ClusterQueue').",
    fix="Use k8s.TrainingQueue with the pools' kueue_flavors() (they cover cpu, memory, "
    "ephemeral-storage and the GPU, with the nodes' own disk as quota), and size the "
    "template (gpusPerNode, datasetCacheGib, nodes) within one flavor.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for admission in admissions(graph):
        where = f"{admission.template.kind} template {admission.template.name!r}"
        if admission.problems:
            yield fail(
                admission.template.config_map, f"{where}: " + "; ".join(admission.problems) + "."
            )
        else:
            queue = admission.cluster_queue
            yield ok(admission.template.config_map, f"{where} fits ClusterQueue {queue!r}.")

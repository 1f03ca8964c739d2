"""AIS-D3-03: the EC2NodeClass of a Karpenter GPU NodePool puts instance-store NVMe in RAID0."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.karpenter import is_gpu_pool, node_class_of, node_pools, pool_name


@rule(
    id="AIS-D3-03",
    checklist=["D3"],
    info="Karpenter GPU NodePools use an EC2NodeClass with instanceStorePolicy: RAID0.",
    why="GPU instances come with local NVMe, and by default 'Karpenter and Kubernetes will "
    "simply ignore them' (Karpenter docs v1.14, EC2NodeClasses, spec.instanceStorePolicy): "
    "ephemeral storage, where a job's dataset cache emptyDir lives, is then the EBS root, "
    "and every epoch reads the dataset over the network. RAID0 makes the NVMe the "
    "kubelet's and containerd's filesystem.",
    fix="Use aws.KarpenterGpuPool, or set spec.instanceStorePolicy: RAID0 on the "
    "EC2NodeClass the GPU NodePool names.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for pool in node_pools(graph):
        if not is_gpu_pool(pool):
            continue
        name = pool_name(pool)
        node_class = node_class_of(graph, pool)
        if node_class is None:
            continue  # the EC2NodeClass is not in this stack: nothing to judge
        policy = (node_class.inputs.get("spec") or {}).get("instanceStorePolicy")
        if policy == "RAID0":
            yield ok(pool, f"NodePool {name!r} caches on NVMe in RAID0.")
        else:
            yield fail(
                pool,
                f"NodePool {name!r} uses an EC2NodeClass without instanceStorePolicy RAID0: "
                "the GPU nodes' NVMe is left unused.",
            )

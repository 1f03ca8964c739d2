"""AIS-D3-04: GKE GPU node pools back ephemeral storage with local SSD (NVMe)."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import GKE_NODE_POOL, is_gpu_node_pool, node_config


@rule(
    id="AIS-D3-04",
    checklist=["D3"],
    info="GKE GPU (training) node pools put ephemeral storage on local NVMe SSDs.",
    why="Training reads the dataset every epoch. Cached in an emptyDir on local NVMe it is "
    "read at local-disk speed; on the boot persistent disk the GPUs wait for I/O. "
    "ephemeral_storage_local_ssd_config puts emptyDir and the container layers on the "
    "local SSDs; the legacy local_ssd_count disks are hostPath mounts pods cannot request.",
    fix="Set node_config.ephemeral_storage_local_ssd_config.local_ssd_count (the machine's "
    "bundled count on A2 Ultra and A3), as gcp.GpuNodePool does.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for pool in graph.of_type(GKE_NODE_POOL):
        if not is_gpu_node_pool(pool):
            continue
        count = (node_config(pool).get("ephemeralStorageLocalSsdConfig") or {}).get("localSsdCount")
        if count:
            yield ok(pool, f"ephemeral storage on {count} local SSD(s).")
        else:
            yield fail(pool, "ephemeral storage on the boot disk: dataset caches are slow.")

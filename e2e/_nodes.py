"""Fake GKE GPU nodes, labelled, tainted and sized as aistack's node pools make them.

The labels and taints come from `gcp.GpuNodePoolArgs` (what `gcp.GpuNodePool` sets on its
nodes), the GKE labels from GKE's documentation ("About GKE node labels"), and the sizes
from the catalog's machine and the pool's local SSDs. kwok takes over every node with the
`kwok.x-k8s.io/node: fake` annotation: it marks them Ready and runs their pods' status.
"""

from __future__ import annotations

from typing import Any

from aistack.gcp.gpu_node_pool import GPU_TAINT, SPOT_TAINT, GpuNodePoolArgs

#: The taint effects as GKE's API spells them and as Kubernetes does.
_EFFECTS = {
    "NO_SCHEDULE": "NoSchedule",
    "PREFER_NO_SCHEDULE": "PreferNoSchedule",
    "NO_EXECUTE": "NoExecute",
}
_ACCELERATORS = {"L4": "nvidia-l4", "A100": "nvidia-tesla-a100", "H100": "nvidia-h100-80gb"}


def pool_nodes(pool: str, args: GpuNodePoolArgs, region: str) -> list[dict[str, Any]]:
    """The Node objects of a pool named POOL at its maximum size."""
    machine = args.machine
    labels = {
        **args.node_labels(pool),
        "cloud.google.com/gke-nodepool": pool,
        "cloud.google.com/gke-accelerator": _ACCELERATORS[machine.gpu_model],
        "node.kubernetes.io/instance-type": machine.name,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": f"{region}-a",
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
    }
    taints = [GPU_TAINT, *([SPOT_TAINT] if args.market == "spot" else [])]
    if args.market == "spot":
        labels["cloud.google.com/gke-spot"] = "true"
    size = {
        "cpu": str(machine.vcpus),
        "memory": f"{machine.memory_gib}Gi",
        "nvidia.com/gpu": str(machine.gpu_count),
        "ephemeral-storage": f"{args.ephemeral_storage_gb()}G",
        "pods": "110",
    }
    return [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"gke-{pool}-{index}",
                "labels": {**labels, "kubernetes.io/hostname": f"gke-{pool}-{index}"},
                "annotations": {"kwok.x-k8s.io/node": "fake"},
            },
            "spec": {
                "taints": [
                    {"key": key, "value": value, "effect": _EFFECTS[effect]}
                    for key, value, effect in taints
                ]
            },
            "status": {"capacity": size, "allocatable": size},
        }
        for index in range(args.max_nodes)
    ]

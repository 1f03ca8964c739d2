"""Graph queries over Karpenter objects (karpenter.sh/v1 NodePool, karpenter.k8s.aws/v1
EC2NodeClass), shared by the rules that judge them.

The recorded inputs of a custom resource are its JSON. Where a field is absent, the value
Karpenter acts on is the CRD's default, applied by the API server (Kubernetes docs,
"Defaulting" for structural schemas); the defaults used here are those of the CRDs kept
under aistack/scan/data/crds/karpenter-v1.14.1/.
"""

from __future__ import annotations

from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.queries.k8s import metadata_of

__all__ = [
    "EC2_NODE_CLASS",
    "GPU_RESOURCE",
    "NODE_POOL",
    "ami_aliases",
    "capacity_types",
    "is_gpu_pool",
    "node_class_of",
    "node_pools",
    "pool_name",
    "pools_using",
    "template_spec",
]

NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
EC2_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
GPU_RESOURCE = "nvidia.com/gpu"
#: Requirement keys that select instances by their GPUs (Karpenter's well-known labels,
#: docs v1.14 concepts/scheduling.md).
_GPU_KEYS = (
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-memory",
)
#: EC2 families whose instances carry NVIDIA GPUs (accelerated computing, G and P).
_GPU_FAMILY_PREFIXES = ("g4dn", "g5", "g6", "g7", "gr6", "p3", "p4", "p5", "p6")


def node_pools(graph: StackGraph) -> list[Resource]:
    return graph.of_type(NODE_POOL)


def pool_name(resource: Resource) -> str:
    return str(metadata_of(resource).get("name") or resource.name)


def template_spec(pool: Resource) -> dict[str, Any]:
    spec = pool.inputs.get("spec") or {}
    return ((spec.get("template") or {}).get("spec")) or {}


def _requirement_values(pool: Resource, key: str) -> list[str] | None:
    for requirement in template_spec(pool).get("requirements") or []:
        if requirement.get("key") == key and requirement.get("operator") == "In":
            return [str(v) for v in requirement.get("values") or []]
    return None


def capacity_types(pool: Resource) -> set[str]:
    """The capacity types a NodePool may launch. Without a `karpenter.sh/capacity-type`
    requirement that is any the provider offers, Spot included (docs v1.14
    concepts/nodepools.md, spec.template.spec.requirements: "If a requirement is not defined
    for a well known label, any value available to the cloud provider may be chosen")."""
    values = _requirement_values(pool, "karpenter.sh/capacity-type")
    return set(values) if values is not None else {"spot", "on-demand", "reserved"}


def is_gpu_pool(pool: Resource) -> bool:
    """A NodePool that launches GPU nodes: it taints them `nvidia.com/gpu`, selects on GPU
    labels, or names GPU instance types or families."""
    spec = template_spec(pool)
    if any(t.get("key") == GPU_RESOURCE for t in spec.get("taints") or []):
        return True
    keys = {r.get("key") for r in spec.get("requirements") or []}
    if keys & set(_GPU_KEYS):
        return True
    names = (_requirement_values(pool, "node.kubernetes.io/instance-type") or []) + (
        _requirement_values(pool, "karpenter.k8s.aws/instance-family") or []
    )
    return any(name.split(".")[0].startswith(_GPU_FAMILY_PREFIXES) for name in names)


def node_class_of(graph: StackGraph, pool: Resource) -> Resource | None:
    """The EC2NodeClass a NodePool's nodeClassRef names, when it is in the stack."""
    ref = template_spec(pool).get("nodeClassRef") or {}
    if ref.get("kind") != "EC2NodeClass":
        return None
    for node_class in graph.of_type(EC2_NODE_CLASS):
        if metadata_of(node_class).get("name") == ref.get("name"):
            return node_class
    return None


def pools_using(graph: StackGraph, node_class: Resource) -> list[Resource]:
    """The NodePools of the stack whose nodeClassRef names this EC2NodeClass."""
    return [pool for pool in node_pools(graph) if node_class_of(graph, pool) is node_class]


def ami_aliases(node_class: Resource) -> list[str]:
    """The `alias` terms of an EC2NodeClass's amiSelectorTerms (`family@version`; the CRD
    makes an alias term exclusive of the others, karpenter.k8s.aws_ec2nodeclasses.yaml
    v1.14.1)."""
    terms = (node_class.inputs.get("spec") or {}).get("amiSelectorTerms") or []
    return [str(term["alias"]) for term in terms if isinstance(term, dict) and term.get("alias")]

"""AIS-E1-08: an EC2NodeClass pins its EKS-optimized AMI alias to a release, and one a GPU
node can boot (AL2023 from the first release with NVIDIA images)."""

from collections.abc import Iterator

from aistack.catalog import eks_amis
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import metadata_of
from aistack.queries.karpenter import EC2_NODE_CLASS, ami_aliases, is_gpu_pool, pools_using

_FIRST = eks_amis.FIRST_NVIDIA_RELEASE
_EXAMPLE = f"al2023@{eks_amis.EXAMPLE_RELEASE}"


@rule(
    id="AIS-E1-08",
    checklist=["E1"],
    info="EC2NodeClasses pin their AMI alias to a release, for GPU pools an AL2023 release "
    "with NVIDIA images.",
    why="The machine image carries the NVIDIA driver the pods' CUDA runs on. With "
    "'@latest' Karpenter 'will drift all out-of-date nodes' on each AMI release (docs "
    "v1.14, EC2NodeClasses, spec.amiSelectorTerms): every GPU node, running jobs "
    "included, is replaced onto a driver the jobs were not tested on. An AL2023 alias older than "
    f"amazon-eks-ami {_FIRST}, the first release with NVIDIA images (its CHANGELOG.md; "
    "aws/containers-roadmap#2391), resolves only the standard variant, which Karpenter "
    "gives the requirement instance-gpu-count DoesNotExist (karpenter-provider-aws "
    "v1.14.1, pkg/providers/amifamily/al2023.go and types.go): no AMI fits a GPU "
    "instance type, and no GPU node ever launches. The old alias is judged where a GPU "
    "NodePool of the stack uses the class, or where no NodePool of the stack names it "
    "(its pools are elsewhere, and a GPU pool pointed at it fails at launch, not at "
    "review); a class only CPU NodePools use may keep it. Classes that select AMIs by "
    "id, name or tags are not judged here.",
    fix=f"Use aws.KarpenterGpuPool, or pin amiSelectorTerms [{{alias: {_EXAMPLE}}}]: a "
    f"release on or after {_FIRST} with images for the cluster's Kubernetes version.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for node_class in graph.of_type(EC2_NODE_CLASS):
        name = metadata_of(node_class).get("name") or node_class.name
        pools = pools_using(graph, node_class)
        gpu = not pools or any(is_gpu_pool(pool) for pool in pools)
        for alias in ami_aliases(node_class):
            family, _, version = alias.partition("@")
            if version == "latest":
                yield fail(
                    node_class,
                    f"EC2NodeClass {name!r} follows {alias!r}: each AMI release replaces "
                    "every node.",
                )
            elif family != "al2023":
                yield ok(node_class, f"EC2NodeClass {name!r} pins {alias!r}.")
            elif (pinned := eks_amis.alias_version(alias)) is None:
                yield fail(
                    node_class,
                    f"EC2NodeClass {name!r} has alias {alias!r}, not an amazon-eks-ami "
                    "release (vYYYYMMDD): Karpenter finds no AMI for it.",
                )
            elif gpu and not eks_amis.has_nvidia(pinned):
                yield fail(
                    node_class,
                    f"EC2NodeClass {name!r} pins {alias!r}, older than {_FIRST}, the "
                    "first release with AL2023 NVIDIA images: its GPU nodes never launch.",
                )
            elif not eks_amis.has_nvidia(pinned):
                yield ok(
                    node_class,
                    f"EC2NodeClass {name!r} pins {alias!r}, which has no NVIDIA images, "
                    "for CPU NodePools only.",
                )
            else:
                yield ok(node_class, f"EC2NodeClass {name!r} pins {alias!r}.")

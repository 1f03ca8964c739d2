"""AIS-C6-12: Karpenter EC2NodeClasses require IMDSv2 with a response hop limit of 1."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import metadata_of
from aistack.queries.karpenter import EC2_NODE_CLASS


@rule(
    id="AIS-C6-12",
    checklist=["C6"],
    info="EC2NodeClasses require IMDSv2 tokens and keep the metadata hop limit at 1.",
    why="The node role's credentials are served by the instance metadata service. With "
    "IMDSv1 allowed, or a hop limit above 1, any pod (one network hop from the node) can "
    "take them and act as every node of the pool; pods should get their own role through "
    "EKS Pod Identity or IRSA. The CRD defaults (httpTokens required, hop limit 1, "
    "karpenter.k8s.aws_ec2nodeclasses.yaml v1.14.1) apply to fields left out.",
    fix="Use aws.KarpenterGpuPool, or set spec.metadataOptions {httpTokens: required, "
    "httpPutResponseHopLimit: 1} (or leave both out).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for node_class in graph.of_type(EC2_NODE_CLASS):
        name = metadata_of(node_class).get("name") or node_class.name
        options = (node_class.inputs.get("spec") or {}).get("metadataOptions") or {}
        tokens = options.get("httpTokens", "required")
        hops = options.get("httpPutResponseHopLimit", 1)
        if options.get("httpEndpoint") == "disabled":
            yield ok(node_class, f"EC2NodeClass {name!r} turns the metadata service off.")
        elif tokens != "required" or hops != 1:
            yield fail(
                node_class,
                f"EC2NodeClass {name!r} has httpTokens {tokens!r} and hop limit {hops}: pods "
                "can read the node role's credentials.",
            )
        else:
            yield ok(node_class, f"EC2NodeClass {name!r} requires IMDSv2 with one hop.")

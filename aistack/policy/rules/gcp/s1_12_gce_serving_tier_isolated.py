"""AIS-S1-12: serving VMs sit in the network's inference subnet, without external IPs."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import SUBNETWORK, network_tier, resource_by_reference, serving_templates


@rule(
    id="AIS-S1-12",
    checklist=["S1"],
    info="Serving GPU templates use the inference-tier subnet and no external IP.",
    why="Serving answers outsiders; training holds the data. In the inference subnet the "
    "network's firewall lets only the load balancer's proxies and Google's health checkers "
    "in, and nothing connects it to training. An external IP would bypass the load "
    "balancer, its Cloud Armor throttle and its logs.",
    fix="Use gcp.InferenceTier with a gcp.Network that has an inference tier; give the "
    "template no access_configs.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in serving_templates(graph):
        problems = []
        for nic in template.inputs.get("networkInterfaces") or []:
            if nic.get("accessConfigs") or nic.get("ipv6AccessConfigs"):
                problems.append("an external IP")
            subnet = resource_by_reference(graph, nic.get("subnetwork"), (SUBNETWORK,))
            if subnet is None or network_tier(subnet) != "inference":
                problems.append("a subnet that is not the network's inference tier")
        if problems:
            yield fail(template, f"serving VMs have {' and '.join(sorted(set(problems)))}.")
        else:
            yield ok(template, "serving VMs are private, in the inference subnet.")

"""AIS-S1-08: every GCP subnet that holds VMs has Private Google Access and flow logs."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import PROXY_PURPOSES, SUBNETWORK


@rule(
    id="AIS-S1-08",
    checklist=["S1"],
    info="Subnets have Private Google Access and VPC flow logs.",
    why="Private Google Access lets nodes without external addresses reach Cloud Storage, "
    "Artifact Registry and Logging, so no node needs a public IP; flow logs are the only "
    "record of which workload talked to what when serving and training must stay apart.",
    fix="Use gcp.Network, or set privateIpGoogleAccess: true and a logConfig on the subnetwork.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for subnet in graph.of_type(SUBNETWORK):
        if str(subnet.inputs.get("purpose") or "") in PROXY_PURPOSES:
            continue  # Load balancer proxies only: no VMs, no flow logs to take.
        missing = []
        if subnet.inputs.get("privateIpGoogleAccess") is not True:
            missing.append("Private Google Access is off")
        if not subnet.inputs.get("logConfig"):
            missing.append("flow logs are off")
        if missing:
            yield fail(subnet, "; ".join(missing) + ".")
        else:
            yield ok(subnet, "Private Google Access and flow logs are on.")

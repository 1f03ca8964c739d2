"""AIS-S1-07: no GCP firewall rule admits SSH or RDP from anywhere."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import FIREWALL, allows_port, firewall_allows, is_ingress, open_to_world

#: SSH and RDP: the ports internet scanners try first (checkov CKV_GCP_2 and CKV_GCP_3 check
#: the same two, but miss a rule allowing protocol "all" or tcp without ports).
ADMIN_PORTS = {22: "SSH", 3389: "RDP"}


@rule(
    id="AIS-S1-07",
    checklist=["S1"],
    info="No firewall rule allows SSH (22) or RDP (3389) from 0.0.0.0/0.",
    why="A GPU node reachable for SSH from the internet is one leaked key or weak password "
    "away from mining coins on the training budget or reading the training data; "
    "SkyPilot's and dstack's default GCP firewalls open tcp:22 to 0.0.0.0/0.",
    fix="Use gcp.Network (no SSH at all; allowIapSsh admits only Identity-Aware Proxy's "
    "35.235.240.0/20), or narrow the rule's sourceRanges.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for firewall in graph.of_type(FIREWALL):
        allows = firewall_allows(firewall)
        if not allows or not is_ingress(firewall) or firewall.inputs.get("disabled"):
            continue
        if not open_to_world(firewall):
            yield ok(firewall, "its sources are not the whole internet.")
            continue
        opened = [
            f"{label} ({port})"
            for port, label in ADMIN_PORTS.items()
            if any(allows_port(a, port) for a in allows)
        ]
        if opened:
            yield fail(firewall, f"admits {' and '.join(opened)} from 0.0.0.0/0.")
        else:
            yield ok(firewall, "open to any source, but not on SSH or RDP.")

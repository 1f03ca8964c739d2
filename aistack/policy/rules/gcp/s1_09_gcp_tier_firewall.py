"""AIS-S1-09: GCP firewall rules admit traffic by service account, and never serving to
training."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import FIREWALL, firewall_allows, is_ingress, network_tier


@rule(
    id="AIS-S1-09",
    checklist=["S1"],
    info="Ingress allow rules target service accounts; no rule admits the serving tier's "
    "account to training, and the two tiers run as different accounts.",
    why="Network tags can be set by anyone who may edit an instance, and a rule without "
    "targets applies to every VM in the network; a service account is an identity that "
    "takes iam.serviceAccountUser to use. Serving faces clients: if it can reach training "
    "nodes, a compromised model server reaches the training data and checkpoints.",
    fix="Use gcp.Network with a WorkloadIdentity (one account per tier), or set "
    "targetServiceAccounts (not targetTags) on each allow rule and keep the inference "
    "account out of training rules' sourceServiceAccounts.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    rules = [f for f in graph.of_type(FIREWALL) if firewall_allows(f) and is_ingress(f)]
    by_tier: dict[str, set[str]] = {"training": set(), "inference": set()}
    for firewall in rules:
        tier = network_tier(firewall)
        if tier in by_tier:
            by_tier[tier].update(str(a) for a in firewall.inputs.get("targetServiceAccounts") or [])
    shared = by_tier["training"] & by_tier["inference"]
    for firewall in rules:
        targets = {str(a) for a in firewall.inputs.get("targetServiceAccounts") or []}
        sources = {str(a) for a in firewall.inputs.get("sourceServiceAccounts") or []}
        if not targets:
            what = "network tags" if firewall.inputs.get("targetTags") else "every instance"
            yield fail(firewall, f"targets {what}, not service accounts.")
        elif targets & shared:
            yield fail(
                firewall,
                f"{sorted(targets & shared)} is both a training and an inference account.",
            )
        elif targets & by_tier["training"] and sources & by_tier["inference"]:
            yield fail(
                firewall,
                f"admits the inference account {sorted(sources & by_tier['inference'])} to "
                "training.",
            )
        else:
            yield ok(firewall, f"targets {sorted(targets)} only.")

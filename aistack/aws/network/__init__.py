"""`aws.Network`: a private VPC laid out around where the GPUs are (C2), split by tier (S1).

`args` holds the arguments, `planning` the zones and CIDRs decided before any resource
exists, `component` the resources and `flow_logs` the VPC's flow logs.
docs/components/aws/network.md says why.
"""

from aistack.aws.network.args import (
    INTERFACE_ENDPOINTS,
    LOG_RETENTION_DAYS,
    TIERS,
    Egress,
    NetworkArgs,
    Tier,
)
from aistack.aws.network.component import NETWORK_TIER_TAG, Network
from aistack.aws.network.planning import AccountZones, NetworkPlan, account_zones, plan

__all__ = [
    "INTERFACE_ENDPOINTS",
    "LOG_RETENTION_DAYS",
    "NETWORK_TIER_TAG",
    "TIERS",
    "AccountZones",
    "Egress",
    "Network",
    "NetworkArgs",
    "NetworkPlan",
    "Tier",
    "account_zones",
    "plan",
]

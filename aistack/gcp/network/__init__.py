"""`gcp.Network`: a private, default-deny VPC split by tier (S1), planned around the zones
that offer the stack's GPUs (C2).

`args` holds the arguments, `planning` the zones and the wiring checks made before any
resource exists, `component` the resources. docs/components/gcp/network.md says why.
"""

from aistack.contracts.gcp import TIER_MARK
from aistack.gcp.network.args import PROXY_TIER, TIERS, FlowLogs, NetworkArgs, Tier
from aistack.gcp.network.component import (
    ALLOW_PRIORITY,
    DENY_ALL_PRIORITY,
    GOOGLE_HEALTH_CHECK_RANGES,
    IAP_TCP_FORWARDING_RANGE,
    PRIVATE_DNS_DOMAINS,
    PRIVATE_GOOGLE_ACCESS_IPS,
    PRIVATE_GOOGLE_ACCESS_RANGE,
    WORKBENCH_PRIVATE_DNS_DOMAINS,
    Network,
)
from aistack.gcp.network.planning import COMPUTE_API, DNS_API, plan_network, plan_zones

__all__ = [
    "ALLOW_PRIORITY",
    "COMPUTE_API",
    "DENY_ALL_PRIORITY",
    "DNS_API",
    "GOOGLE_HEALTH_CHECK_RANGES",
    "IAP_TCP_FORWARDING_RANGE",
    "PRIVATE_DNS_DOMAINS",
    "PRIVATE_GOOGLE_ACCESS_IPS",
    "PRIVATE_GOOGLE_ACCESS_RANGE",
    "PROXY_TIER",
    "TIERS",
    "TIER_MARK",
    "WORKBENCH_PRIVATE_DNS_DOMAINS",
    "FlowLogs",
    "Network",
    "NetworkArgs",
    "Tier",
    "plan_network",
    "plan_zones",
]

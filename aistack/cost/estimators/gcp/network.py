"""Cost estimators for gcp.Network: Cloud NAT, and the naive layout it is compared with.

The VPC, subnets, routes, firewall rules and Private Google Access are free. Cloud NAT
bills per VM using it per hour (capped at 32 VMs), per address-hour and per GiB processed
(both directions) (cloud.google.com/nat/pricing). The naive baseline is a private network
with NAT and without Private Google Access: every byte of training data read from Cloud
Storage is then NAT data processing. It sits on the VPC's line; aistack's NAT (only with
`nat: true`) carries its own cost with a naive cost of zero, so the totals compare the same
work.
"""

from __future__ import annotations

from aistack._registry import by_token
from aistack.cost import HOURS_PER_MONTH, WorkloadProfile, estimator
from aistack.cost.baseline import DATASET_READS_PER_MONTH, NAT_INTERNET_GB_PER_MONTH
from aistack.cost.prices import gcp as prices
from aistack.engine.graph import Resource, StackGraph

NETWORK = by_token("GcpNetwork").token
#: VMs assumed assigned to the NAT on average over the month (GPU nodes come and go with
#: training; serving and notebook nodes stay): an assumption, stated in the basis.
NAT_AVERAGE_VMS = 4
#: AUTO_ONLY allocates addresses as ports are needed: one for a few dozen VMs at the
#: default 64 ports per VM.
NAT_ADDRESSES = 1


def _in_network(graph: StackGraph, resource: Resource) -> bool:
    component = graph.component_of(resource)
    return component is not None and component.type == NETWORK


def nat_month(vms: float, gib: float, addresses: int = NAT_ADDRESSES) -> float:
    """A month of one Cloud NAT gateway serving `vms` VMs on average and processing `gib`."""
    gateway = min(vms * prices.NAT_VM_HOUR, prices.NAT_GATEWAY_HOUR_CAP)
    hours = HOURS_PER_MONTH * (gateway + addresses * prices.NAT_IP_HOUR)
    return hours + gib * prices.NAT_PER_GIB


@estimator("gcp:compute/network:Network")
def _network(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    if not _in_network(graph, resource):
        return None
    data_gib = profile.dataset_storage_gb * DATASET_READS_PER_MONTH
    naive = nat_month(NAT_AVERAGE_VMS, data_gib + NAT_INTERNET_GB_PER_MONTH)
    return (
        0.0,
        naive,
        "VPC, subnets, firewall and Private Google Access: free. Naive baseline: Cloud NAT "
        f"without Private Google Access, so the dataset ({profile.dataset_storage_gb:g} GB, "
        f"read {DATASET_READS_PER_MONTH}x a month) is NAT processing at "
        f"${prices.NAT_PER_GIB}/GiB",
    )


@estimator("gcp:compute/routerNat:RouterNat")
def _nat(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    ours = nat_month(NAT_AVERAGE_VMS, NAT_INTERNET_GB_PER_MONTH)
    return (
        ours,
        0.0,
        f"Cloud NAT: {NAT_AVERAGE_VMS} VMs x ${prices.NAT_VM_HOUR}/h, {NAT_ADDRESSES} "
        f"address x ${prices.NAT_IP_HOUR}/h, {NAT_INTERNET_GB_PER_MONTH:g} GiB of internet "
        f"traffic at ${prices.NAT_PER_GIB}/GiB (Cloud Storage stays on Private Google "
        "Access, free)",
    )

"""Cost estimators for aws.Network: NAT gateways, VPC endpoints, flow logs, and the naive VPC.

The naive baseline is the VPC wizard's layout: a NAT gateway in every zone and no S3
endpoint, so every byte of training data read from S3 is billed as NAT data processing. It
sits on the VPC's line (the VPC itself is free); aistack's NAT gateway and endpoints carry
their own cost with a naive cost of zero, so the two totals compare the same work.
"""

from __future__ import annotations

from aistack._registry import by_token
from aistack.cost import HOURS_PER_MONTH, WorkloadProfile, estimator
from aistack.cost.baseline import DATASET_READS_PER_MONTH, NAT_INTERNET_GB_PER_MONTH
from aistack.cost.prices import aws as prices
from aistack.engine.graph import Resource, StackGraph

NETWORK = by_token("AwsNetwork").token
SUBNET = "aws:ec2/subnet:Subnet"
LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"

#: Flow-log records a month for a few dozen GPU nodes at the default 10-minute aggregation.
FLOW_LOG_GB_PER_MONTH = 5.0


def _in_network(graph: StackGraph, resource: Resource) -> bool:
    component = graph.component_of(resource)
    return component is not None and component.type == NETWORK


def _nat_hour() -> float:
    return prices.NAT_GATEWAY_HOUR + prices.PUBLIC_IPV4_HOUR


@estimator("aws:ec2/vpc:Vpc")
def _vpc(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    if not _in_network(graph, resource):
        return None
    vpc_id = resource.id or resource.outputs.get("id")
    zones = {
        s.inputs.get("availabilityZone")
        for s in graph.of_type(SUBNET)
        if s.inputs.get("vpcId") == vpc_id and s.inputs.get("availabilityZone")
    }
    data_gb = profile.dataset_storage_gb * DATASET_READS_PER_MONTH
    naive = len(zones) * HOURS_PER_MONTH * _nat_hour() + data_gb * prices.NAT_GATEWAY_PER_GB
    basis = (
        f"VPC: free. Naive baseline: a NAT gateway in each of {len(zones)} zone(s) "
        f"(${prices.NAT_GATEWAY_HOUR}/h + ${prices.PUBLIC_IPV4_HOUR}/h public IPv4) and no "
        f"S3 endpoint, so the dataset ({profile.dataset_storage_gb:g} GB, assumed read "
        f"{DATASET_READS_PER_MONTH}x a month) is NAT data processing at "
        f"${prices.NAT_GATEWAY_PER_GB}/GB"
    )
    return 0.0, naive, basis


@estimator("aws:ec2/natGateway:NatGateway")
def _nat_gateway(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    monthly = HOURS_PER_MONTH * _nat_hour() + NAT_INTERNET_GB_PER_MONTH * prices.NAT_GATEWAY_PER_GB
    basis = (
        f"NAT gateway: ${prices.NAT_GATEWAY_HOUR}/h + public IPv4 ${prices.PUBLIC_IPV4_HOUR}/h, "
        f"{NAT_INTERNET_GB_PER_MONTH:g} GB/month assumed internet traffic at "
        f"${prices.NAT_GATEWAY_PER_GB}/GB; S3 bypasses it through the gateway endpoint"
    )
    if _in_network(graph, resource):
        return monthly, 0.0, basis + " (the naive NATs are on the VPC's line)"
    return monthly, monthly, basis


@estimator("aws:ec2/vpcEndpoint:VpcEndpoint")
def _endpoint(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    if (resource.inputs.get("vpcEndpointType") or "Gateway") == "Gateway":
        return 0.0, 0.0, "gateway endpoint (S3): no hourly or data charge"
    zones = max(1, len(resource.inputs.get("subnetIds") or []))
    monthly = zones * HOURS_PER_MONTH * prices.VPC_INTERFACE_ENDPOINT_HOUR_PER_AZ
    basis = (
        f"interface endpoint in {zones} zone(s) at "
        f"${prices.VPC_INTERFACE_ENDPOINT_HOUR_PER_AZ}/h per zone; API traffic is small, "
        "its data charge is left out"
    )
    naive = 0.0 if _in_network(graph, resource) else monthly
    return monthly, naive, basis


@estimator("aws:ec2/flowLog:FlowLog")
def _flow_log(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    destination = resource.inputs.get("logDestination")
    retention_days = next(
        (
            int(group.inputs.get("retentionInDays") or 0)
            for group in graph.of_type(LOG_GROUP)
            if destination and group.outputs.get("arn") == destination
        ),
        0,
    )
    kept_months = retention_days / 30 if retention_days else 12.0
    monthly = FLOW_LOG_GB_PER_MONTH * (
        prices.CLOUDWATCH_LOGS_INGEST_GB + kept_months * prices.CLOUDWATCH_LOGS_STORE_GB_MONTH
    )
    basis = (
        f"flow logs: {FLOW_LOG_GB_PER_MONTH:g} GB/month assumed, ingested at "
        f"${prices.CLOUDWATCH_LOGS_INGEST_GB}/GB and stored "
        + (f"{retention_days} days" if retention_days else "a year or more (no retention)")
        + f" at ${prices.CLOUDWATCH_LOGS_STORE_GB_MONTH}/GB-month; the naive setup has none"
    )
    return monthly, 0.0, basis

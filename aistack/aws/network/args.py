"""The arguments of `aws.Network`: what a stack may ask of its VPC, checked field by field.

Cross-field checks that need the catalog or the account's answer (zones, types, overrides)
are the plan's (`planning.py`); the component builds what the plan decided.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Literal

from pydantic import Field, field_validator

from aistack.config import AistackModel, Governance

__all__ = ["INTERFACE_ENDPOINTS", "LOG_RETENTION_DAYS", "TIERS", "Egress", "NetworkArgs", "Tier"]

Tier = Literal["training", "inference", "notebook"]
Egress = Literal["endpoints", "nat", "none"]

#: Tiers that hold compute, in the order their CIDR blocks are carved.
TIERS: tuple[Tier, ...] = ("training", "inference", "notebook")

#: Interface endpoints created when egress is "endpoints", with why each is needed. Without
#: them a private node without a NAT cannot reach these APIs at all.
INTERFACE_ENDPOINTS: dict[str, str] = {
    "ecr.api": "ECR authentication and image manifests",
    "ecr.dkr": "image pulls (layers themselves come from S3, via the gateway endpoint)",
    "logs": "container and node logs to CloudWatch Logs",
    "monitoring": "CloudWatch agent metrics (GPU, disk) from the nodes",
    # The agent's ec2tagger drops every metric until DescribeTags answers: without this
    # endpoint no GPU metric (idle and starvation alarms) is ever published.
    "ec2": "CloudWatch agent instance tags (DescribeTags) and the ASG dimension",
    "sts": "workload identity: regional STS for AssumeRole and web-identity tokens",
    "ssm": "Session Manager access and parameters: no SSH, no bastion",
    "ssmmessages": "Session Manager shell channel",
    "ec2messages": "SSM agent command channel",
    # AWS Batch nodes run the ECS agent, which registers over these three (the `batch`
    # endpoint is only for calling the Batch API, which the nodes never do).
    "ecs": "ECS agent registration of AWS Batch nodes",
    "ecs-agent": "ECS agent task state (AWS Batch nodes)",
    "ecs-telemetry": "ECS agent metrics (AWS Batch nodes)",
    "autoscaling": "idle and wall-clock limits end a node with TerminateInstanceInAutoScalingGroup",
}

#: Retention values CloudWatch Logs accepts (PutRetentionPolicy).
LOG_RETENTION_DAYS = frozenset(
    {1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557}
    | {2922, 3288, 3653}
)
#: Ranges a VPC may use for private addressing: RFC 1918 and the shared space AWS accepts.
_PRIVATE_RANGES = tuple(
    ipaddress.IPv4Network(r)
    for r in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")
)
_ZONE_LETTERS = "abcdefgh"
_ENDPOINT_SERVICE = re.compile(r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$")


class NetworkArgs(AistackModel):
    """Arguments of `aws.Network`; camelCase in Pulumi config, snake_case in Python."""

    governance: Governance
    region: str = Field(
        description="Region of the VPC: explicit (never the provider's default) and within "
        "governance.allowed_regions (C4). Must offer the GPU types (C2)."
    )
    cidr_block: str = Field(
        "10.40.0.0/16",
        description="The VPC's IPv4 range; default 10.40.0.0/16, away from the 10.0.0.0/16 "
        "that most examples (and so most peers) use. Private (RFC 1918 or 100.64.0.0/10), "
        "prefix /16 to /21: each tier gets a quarter of it, carved per zone.",
    )
    training_instance_types: tuple[str, ...] = Field(
        (),
        description="GPU instance types training runs on (catalog names, e.g. "
        "'p5.48xlarge'). Training subnets go only where ALL of them are offered. Empty: no "
        "training tier.",
    )
    inference_instance_types: tuple[str, ...] = Field(
        (),
        description="GPU instance types that serve inference; as for training. Empty: no "
        "inference tier and no load balancer security group.",
    )
    notebook: bool = Field(
        False, description="Add a notebook tier (own subnets and security group). Off."
    )
    notebook_instance_types: tuple[str, ...] = Field(
        (),
        description="GPU types notebooks use, to place notebook subnets; empty: the "
        "region's first zones. Only with notebook: true.",
    )
    max_zones: int = Field(
        3,
        ge=1,
        le=len(_ZONE_LETTERS),
        description="Most zones per tier; default 3: enough spread to find scarce GPU "
        "capacity, few enough to keep per-zone endpoint costs down.",
    )
    availability_zones: tuple[str, ...] | None = Field(
        None,
        description="Use exactly these zones (e.g. where a capacity reservation is) instead "
        "of the catalog's choice; each must offer every type of every tier. Default: none.",
    )
    egress: Egress = Field(
        "endpoints",
        description="How private nodes reach AWS APIs: 'endpoints' (default: interface "
        "endpoints, no internet route at all), 'nat' (one NAT gateway: reaches the internet, "
        "cheaper, single-zone) or 'none' (S3 only; images and agents must need nothing else).",
    )
    max_endpoint_zones: int | None = Field(
        None,
        ge=1,
        description="Zones that get interface-endpoint network interfaces (the first "
        "training zones). Default: every training zone. Each endpoint costs about $7.30 a "
        "month per zone; 1 or 2 cut that, other zones then reach the endpoints cross-zone.",
    )
    extra_endpoint_services: tuple[str, ...] = Field(
        (),
        description="More interface endpoints, by service suffix (e.g. 'sagemaker.api', "
        "'batch'). Default none.",
    )
    public_endpoint: bool = Field(
        False,
        description="Make the load balancer internet-facing: adds public subnets (ALB only, "
        "never GPU nodes) and an internet gateway. Off: an internal load balancer in private "
        "subnets, reachable from the VPC and what is peered to it.",
    )
    alb_ingress_cidrs: tuple[str, ...] | None = Field(
        None,
        description="Who may reach the load balancer on 443/80. Default: 0.0.0.0/0 when "
        "public_endpoint, else the VPC's own range.",
    )
    flow_log_retention_days: int = Field(
        90,
        description="Days VPC flow logs are kept; default 90: long enough to investigate an "
        "incident, short enough to stay cheap. A CloudWatch retention value.",
    )
    gateway_port: int = Field(
        8080,
        ge=1,
        le=65535,
        description="Port the inference gateway listens on; the only port the load balancer "
        "may reach on inference nodes. Default 8080.",
    )
    allow_destroy_flow_logs: bool = Field(
        False,
        description="Let `pulumi destroy` delete the flow-log group and its key. Off: they "
        "are retained (protected in prod), because they are the audit trail.",
    )

    @field_validator("cidr_block")
    @classmethod
    def _cidr_is_private_and_carvable(cls, value: str) -> str:
        network = _parse_cidr(value)
        if not 16 <= network.prefixlen <= 21:
            raise ValueError(
                f"a /{network.prefixlen} VPC cannot be carved into aistack's subnets. Fix: "
                "use a prefix from /16 (AWS's largest VPC) to /21 (the smallest that leaves "
                "each load balancer subnet a /27)."
            )
        if not any(network.subnet_of(r) for r in _PRIVATE_RANGES):
            raise ValueError(
                f"{value} is not a private range. Fix: use a block inside 10.0.0.0/8, "
                "172.16.0.0/12, 192.168.0.0/16 or 100.64.0.0/10."
            )
        return str(network)

    @field_validator("alb_ingress_cidrs")
    @classmethod
    def _ingress_cidrs_parse(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        if not value:
            raise ValueError(
                "an empty list would make the load balancer unreachable. Fix: list at "
                "least one CIDR block, or leave albIngressCidrs unset for the default."
            )
        return tuple(dict.fromkeys(str(_parse_cidr(cidr)) for cidr in value))

    @field_validator("flow_log_retention_days")
    @classmethod
    def _retention_is_a_cloudwatch_value(cls, value: int) -> int:
        if value not in LOG_RETENTION_DAYS:
            raise ValueError(
                f"CloudWatch Logs cannot keep logs for {value} days. Fix: use one of "
                f"{sorted(LOG_RETENTION_DAYS)}."
            )
        return value

    @field_validator("extra_endpoint_services")
    @classmethod
    def _endpoint_services_are_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for service in value:
            if not _ENDPOINT_SERVICE.match(service) or service.startswith("com."):
                raise ValueError(
                    f"{service!r} is not an endpoint service suffix. Fix: give the part "
                    "after com.amazonaws.<region>., e.g. 'sagemaker.api'."
                )
            if service == "s3":
                raise ValueError(
                    "S3 already has a gateway endpoint, which is free. Fix: remove 's3'."
                )
        return tuple(s for s in dict.fromkeys(value) if s not in INTERFACE_ENDPOINTS)

    @field_validator(
        "training_instance_types", "inference_instance_types", "notebook_instance_types"
    )
    @classmethod
    def _types_deduplicated(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.strip().lower() for t in value))

    def ingress_cidrs(self) -> tuple[str, ...]:
        if self.alb_ingress_cidrs is not None:
            return self.alb_ingress_cidrs
        return ("0.0.0.0/0",) if self.public_endpoint else (self.cidr_block,)


def _parse_cidr(value: str) -> ipaddress.IPv4Network:
    try:
        network = ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise ValueError(
            f"{value!r} is not a CIDR block ({exc}). Fix: write it like '10.40.0.0/16', with "
            "every host bit zero."
        ) from None
    if not isinstance(network, ipaddress.IPv4Network):
        raise ValueError(f"{value!r} is IPv6. Fix: use an IPv4 block like '10.40.0.0/16'.")
    return network

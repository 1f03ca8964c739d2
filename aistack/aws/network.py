"""`aws.Network`: a private VPC laid out around where the GPUs are (C2), split by tier (S1).

Subnets exist only in the availability zones that offer the tier's GPU instance types, so a
compute environment never waits for capacity in a zone that cannot have it (C2). Training,
inference and (optionally) notebooks get their own subnets and security groups; training
nodes accept traffic only from each other (NCCL/EFA), inference nodes only from the load
balancer on the gateway port, and nothing connects inference to training (S1).

Every GPU subnet is private: no public IPs, no internet route. Data reaches S3 through a
gateway endpoint (free, never through a NAT); AWS APIs through interface endpoints, or one
NAT gateway if the team chooses. VPC flow logs go to a KMS-encrypted log group with bounded
retention.

Zones are decided when the program runs, from what this account's EC2 answers then (plain,
synchronous invokes return during the program run, in preview too): the zones it lists as
available and the zones it offers each GPU type in, intersected with the aistack catalog.
AZ names map to different physical zones in each account, and some accounts cannot create
subnets in some names, so the catalog alone could plan a subnet AWS refuses. When the
account cannot be asked (no answer), the catalog is the fallback. See
docs/components/network.md.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pulumi
import pulumi_aws as aws
from pydantic import Field, field_validator

from aistack import catalog
from aistack.aws import _perms
from aistack.aws._base import child_opts, policy_output, stack_id, stateful_opts, tags_for
from aistack.aws._kms import customer_key
from aistack.config import AistackModel, Governance
from aistack.errors import ConfigError, Problems

__all__ = [
    "INTERFACE_ENDPOINTS",
    "AccountZones",
    "NETWORK_TIER_TAG",
    "Network",
    "NetworkArgs",
    "NetworkPlan",
    "account_zones",
    "plan",
]

Tier = Literal["training", "inference", "notebook"]
Egress = Literal["endpoints", "nat", "none"]

#: Tiers that hold compute, in the order their CIDR blocks are carved.
TIERS: tuple[Tier, ...] = ("training", "inference", "notebook")
#: What a subnet or security group is for inside the network: a tier, `alb`, `public` or
#: `endpoints`. Policy rules read it to tell training from inference (S1).
NETWORK_TIER_TAG = "aistack:network-tier"

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
_ALB_PORTS = (443, 80)
#: What each load balancer port is for: 80 forwards without a certificate and only redirects
#: to 443 with one, so its rule must not claim HTTPS.
_ALB_PORT_PURPOSE = {
    443: "HTTPS to the load balancer",
    80: "HTTP to the load balancer (a redirect to 443 when it has a certificate)",
}
_HTTPS = 443


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


# ---- the plan: zones and CIDRs, decided before any resource exists -------------------------


@dataclass(frozen=True)
class NetworkPlan:
    """Where every subnet goes, decided from the catalog and the arguments alone."""

    region: str
    #: Zones per compute tier, sorted; only tiers that exist.
    tiers: dict[str, tuple[str, ...]]
    #: Zones of the load balancer's subnets (inference zones, topped up to two), if any.
    alb_zones: tuple[str, ...]
    #: True when the load balancer's subnets are the public ones (public_endpoint).
    alb_public: bool
    #: Zones of public subnets (ALB when public, and the NAT gateway's), if any.
    public_zones: tuple[str, ...]
    #: Zone of the single NAT gateway, when egress is "nat".
    nat_zone: str | None
    #: Zones whose training (or first tier's) subnet holds the interface endpoints.
    endpoint_zones: tuple[str, ...]
    #: Tiers whose types no zone offers together: their zones offer at least one type.
    fallback_tiers: tuple[str, ...] = ()
    #: (kind, zone) -> CIDR block; kind is a tier, "alb" or "public".
    cidrs: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def private_zones(self) -> tuple[str, ...]:
        """Every zone with a private subnet: one private route table each."""
        zones = {z for zs in self.tiers.values() for z in zs}
        if not self.alb_public:
            zones |= set(self.alb_zones)
        return tuple(sorted(zones))


@dataclass(frozen=True)
class AccountZones:
    """What this account's EC2 answered when the program ran."""

    #: Availability zones (not Local or Wavelength zones) the account lists as available.
    zones: frozenset[str]
    #: Instance type -> zones of this account that offer it.
    offers: dict[str, frozenset[str]]


def account_zones(args: NetworkArgs) -> AccountZones | None:
    """Ask EC2 which zones this account has and which offer the network's instance types.

    Plain invokes, so the answer is there before any subnet is planned. None when there is
    no usable answer, so that the plan falls back to the catalog.
    """
    types = sorted(
        {*args.training_instance_types, *args.inference_instance_types}
        | ({*args.notebook_instance_types} if args.notebook else set())
    )
    try:
        listed = aws.get_availability_zones(
            state="available",
            filters=[
                aws.GetAvailabilityZonesFilterArgs(name="zone-type", values=["availability-zone"])
            ],
            region=args.region,
        )
        offers: dict[str, set[str]] = defaultdict(set)
        if types:
            offered = aws.ec2.get_instance_type_offerings(
                location_type="availability-zone",
                filters=[
                    aws.ec2.GetInstanceTypeOfferingsFilterArgs(name="instance-type", values=types)
                ],
                region=args.region,
            )
            for type_name, zone in zip(
                offered.instance_types or [], offered.locations or [], strict=False
            ):
                offers[type_name].add(zone)
    except Exception as exc:  # noqa: BLE001 - any failure to ask means: use the catalog
        pulumi.log.warn(
            f"could not ask EC2 for the zones of {args.region} ({exc}); planning subnets from "
            "the aistack catalog, which may name a zone this account cannot use."
        )
        return None
    names = frozenset(listed.names or [])
    if not names:
        return None
    return AccountZones(
        zones=names, offers={t: frozenset(zones & names) for t, zones in offers.items()}
    )


def plan(
    args: NetworkArgs, name: str = "network", account: AccountZones | None = None
) -> NetworkPlan:
    """Decide zones and CIDRs for `args`; one ConfigError naming every problem.

    With `account` (what EC2 answered), only zones the account has and offers the types in
    are used; without it, the catalog's.
    """
    problems = Problems()
    region_problem = args.governance.region_problem(args.region, f"{name}.region")
    if region_problem:
        problems.items.append(region_problem)
    if not (args.training_instance_types or args.inference_instance_types):
        problems.add(
            f"{name}.trainingInstanceTypes",
            "the network has no training and no inference instance types, so it cannot tell "
            "which zones the GPUs are in (C2).",
            "set trainingInstanceTypes and/or inferenceInstanceTypes.",
        )
    if args.notebook_instance_types and not args.notebook:
        problems.add(
            f"{name}.notebookInstanceTypes",
            "notebook instance types are set but the notebook tier is off.",
            "set notebook: true, or remove notebookInstanceTypes.",
        )
    if args.max_endpoint_zones is not None and args.egress != "endpoints":
        problems.add(
            f"{name}.maxEndpointZones",
            f"interface endpoints exist only with egress 'endpoints', not {args.egress!r}.",
            "remove maxEndpointZones, or set egress: endpoints.",
        )

    override = _check_override(args, name, problems)
    wanted: dict[str, tuple[str, ...]] = {
        "training": args.training_instance_types,
        "inference": args.inference_instance_types,
    }
    if args.notebook:
        wanted["notebook"] = args.notebook_instance_types
    tiers: dict[str, tuple[str, ...]] = {}
    fallback: list[str] = []
    region_zones = catalog.region_zones("aws", args.region)
    if account is not None:
        region_zones = tuple(z for z in region_zones if z in account.zones)
    for tier, types in wanted.items():
        if not types and tier != "notebook":
            continue
        field_name = f"{name}.{tier}InstanceTypes"
        offers = _offers(types, args.region, field_name, problems, account)
        if offers is None:
            continue
        if override is not None:
            for index, zone in enumerate(args.availability_zones or ()):
                missing = [t for t, zones in offers.items() if zone not in zones]
                if missing and _is_zone_of(args.region, zone):
                    problems.add(
                        f"{name}.availabilityZones.{index}",
                        f"{zone} does not offer {missing} (the {tier} tier) according to the "
                        "aistack catalog.",
                        "use zones that offer every type: "
                        + "; ".join(f"{t}: {sorted(z)}" for t, z in offers.items() if t in missing)
                        + ".",
                    )
            tiers[tier] = tuple(sorted(override))
            continue
        if not offers:  # a notebook tier without GPU types goes where the region has zones
            tiers[tier] = region_zones[: args.max_zones]
            continue
        common = set.intersection(*offers.values())
        if not common:
            fallback.append(tier)
            common = set().union(*offers.values())
        tiers[tier] = tuple(sorted(common)[: args.max_zones])
    if override is not None and len(override) > args.max_zones:
        problems.add(
            f"{name}.availabilityZones",
            f"{len(override)} zones are listed but maxZones is {args.max_zones}.",
            "list fewer zones, or raise maxZones.",
        )

    alb_zones: tuple[str, ...] = ()
    if "inference" in tiers:
        # An Application Load Balancer needs subnets in two zones, and routes only to
        # targets in zones it has a subnet in: every inference zone, plus one if needed.
        balanced = list(tiers["inference"])
        balanced += [z for z in region_zones if z not in balanced][: max(0, 2 - len(balanced))]
        if len(balanced) < 2 and tiers["inference"]:
            problems.add(
                f"{name}.region",
                f"the load balancer needs subnets in two zones; the catalog knows only "
                f"{balanced} in {args.region}.",
                "choose a region with at least two zones.",
            )
        alb_zones = tuple(sorted(balanced))
    first_tier = next(iter(tiers.values()), ())
    nat_zone = first_tier[0] if args.egress == "nat" and first_tier else None
    public = set(alb_zones) if args.public_endpoint else set()
    if nat_zone:
        public.add(nat_zone)
    endpoint_zones: tuple[str, ...] = ()
    if args.egress == "endpoints":
        endpoint_zones = first_tier[: args.max_endpoint_zones or len(first_tier)]
    problems.raise_if_any()

    vpc = ipaddress.IPv4Network(args.cidr_block)
    cidrs: dict[tuple[str, str], str] = {}
    for tier, zones in tiers.items():
        for zone in zones:
            cidrs[(tier, zone)] = _subnet_cidr(vpc, tier, zone)
    if not args.public_endpoint:
        for zone in alb_zones:
            cidrs[("alb", zone)] = _subnet_cidr(vpc, "alb", zone)
    for zone in public:
        cidrs[("public", zone)] = _subnet_cidr(vpc, "public", zone)
    return NetworkPlan(
        region=args.region,
        tiers=tiers,
        alb_zones=alb_zones,
        alb_public=args.public_endpoint,
        public_zones=tuple(sorted(public)),
        nat_zone=nat_zone,
        endpoint_zones=endpoint_zones,
        fallback_tiers=tuple(fallback),
        cidrs=cidrs,
    )


def _check_override(args: NetworkArgs, name: str, problems: Problems) -> tuple[str, ...] | None:
    """The override zones (user order, duplicates dropped); malformed ones are problems."""
    if args.availability_zones is None:
        return None
    if not args.availability_zones:
        problems.add(
            f"{name}.availabilityZones",
            "an empty zone list leaves nowhere to put subnets.",
            "list zones, or leave availabilityZones unset to use the catalog's.",
        )
    for index, zone in enumerate(args.availability_zones):
        if not _is_zone_of(args.region, zone):
            problems.add(
                f"{name}.availabilityZones.{index}",
                f"{zone!r} is not a zone of {args.region}.",
                f"use zone names like '{args.region}a'.",
            )
    return tuple(dict.fromkeys(args.availability_zones))


def _is_zone_of(region: str, zone: str) -> bool:
    return re.fullmatch(re.escape(region) + f"[{_ZONE_LETTERS}]", zone) is not None


def _offers(
    types: Sequence[str],
    region: str,
    field_name: str,
    problems: Problems,
    account: AccountZones | None = None,
) -> dict[str, set[str]] | None:
    """Zones per type in `region` (the catalog's, narrowed to the account's when known);
    None (with problems) if any type is unusable."""
    offers: dict[str, set[str]] = {}
    usable = True
    for index, type_name in enumerate(types):
        try:
            entry = catalog.get(type_name, "aws")
        except ConfigError as exc:
            for problem in exc.problems:
                problems.add(f"{field_name}.{index}", problem.message, problem.fix)
            usable = False
            continue
        if not entry.offered_in(region):
            problems.add(
                f"{field_name}.{index}",
                f"{entry.name} is not offered in {region} according to the aistack catalog; "
                f"regions that offer it: {list(entry.regions)} (C2).",
                f"choose a region from {list(entry.regions)} (allowed by governance), or an "
                f"instance type offered in {region}.",
            )
            usable = False
            continue
        zones = set(entry.zones(region))
        if account is not None:
            zones &= account.offers.get(entry.name, frozenset())
            if not zones:
                problems.add(
                    f"{field_name}.{index}",
                    f"this account offers {entry.name} in none of the zones of {region} that "
                    f"the aistack catalog lists ({sorted(entry.zones(region))}); EC2 answered "
                    f"{sorted(account.offers.get(entry.name, ()))} (C2).",
                    "choose an instance type or region this account offers, or ask AWS "
                    "support to enable the type.",
                )
                usable = False
                continue
        offers[entry.name] = zones
    return offers if usable else None


def _subnet_cidr(vpc: ipaddress.IPv4Network, kind: str, zone: str) -> str:
    """The block of subnet (kind, zone): fixed by the zone's letter, not by list position,
    so adding or dropping a zone or a type never renumbers (and so replaces) a subnet.

    The VPC splits in quarters: training, inference, notebook, edge. A tier's quarter splits
    in eight, one per zone letter a-h (/21s in a /16); the edge quarter holds the internal
    load balancer's subnets in its first half and public subnets in its second (/22s).
    """
    slot = _ZONE_LETTERS.index(zone[-1])
    quarters = list(vpc.subnets(prefixlen_diff=2))
    if kind in TIERS:
        block = quarters[TIERS.index(kind)]  # type: ignore[arg-type]
    else:
        block = list(quarters[3].subnets(prefixlen_diff=1))[0 if kind == "alb" else 1]
    return str(list(block.subnets(prefixlen_diff=3))[slot])


def _zones_offering(result: Any, types: Sequence[str]) -> list[str]:
    """From a getInstanceTypeOfferings answer: zones offering every type, else any."""
    by_type: dict[str, set[str]] = defaultdict(set)
    for type_name, zone in zip(result.instance_types, result.locations, strict=False):
        by_type[type_name].add(zone)
    sets = [by_type.get(t, set()) for t in types]
    if not sets:
        return []
    return sorted(set.intersection(*sets) or set().union(*sets))


# ---- the component ---------------------------------------------------------------------------


class Network(pulumi.ComponentResource):
    """A private, zone-aware, tier-separated VPC for GPU training and inference."""

    vpc: aws.ec2.Vpc
    vpc_id: pulumi.Output[str]
    cidr_block: str
    region: str
    plan: NetworkPlan
    alb_security_group_id: pulumi.Output[str] | None
    alb_subnet_ids: list[pulumi.Output[str]]
    alb_internal: bool
    public_subnet_ids: list[pulumi.Output[str]]
    private_route_table_ids: list[pulumi.Output[str]]
    endpoint_security_group_id: pulumi.Output[str] | None
    flow_log_group_name: pulumi.Output[str]
    offered_zones: pulumi.Output[dict[str, list[str]]]

    def __init__(
        self,
        name: str,
        args: NetworkArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        args, layout = NetworkArgs.validate_with(
            args, lambda valid: plan(valid, name, account_zones(valid)), where=name
        )
        super().__init__(
            "aistack:index:AwsNetwork",
            name,
            {"region": args.region, "cidr_block": args.cidr_block},
            opts,
        )
        self.args = args
        self.plan = layout
        self.region = args.region
        self.cidr_block = args.cidr_block
        self._name = name
        for tier in layout.fallback_tiers:
            pulumi.log.warn(
                f"{name}: no zone of {args.region} offers every {tier} instance type "
                "together; its subnets are in zones offering at least one of them, so "
                "capacity of each type lands only where that type is offered.",
                resource=self,
            )
        region = args.region
        here = child_opts(self)

        self.vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=args.cidr_block,
            # Both are needed for interface endpoints' private DNS names to resolve.
            enable_dns_support=True,
            enable_dns_hostnames=True,
            region=region,
            tags=self._tags("network", "vpc", Name=name),
            opts=here,
        )
        self.vpc_id = self.vpc.id
        # The default security group allows everything between its members and all egress;
        # anything launched without a group would land in it. Adopted and emptied.
        self.default_security_group = aws.ec2.DefaultSecurityGroup(
            f"{name}-default-sg",
            vpc_id=self.vpc.id,
            ingress=[],
            egress=[],
            region=region,
            tags=self._tags("network", "default", Name=f"{name}-default-unused"),
            opts=here,
        )

        self._subnets: dict[str, dict[str, aws.ec2.Subnet]] = {}
        for tier, zones in layout.tiers.items():
            self._subnets[tier] = {
                zone: self._subnet(tier, zone, tier, public=False) for zone in zones
            }
        alb_private = {} if args.public_endpoint else dict.fromkeys(layout.alb_zones)
        self._subnets["alb"] = {
            zone: self._subnet("alb", zone, "inference", public=False) for zone in alb_private
        }
        self._subnets["public"] = {
            zone: self._subnet("public", zone, "network", public=True)
            for zone in layout.public_zones
        }

        self._route_tables = {
            zone: aws.ec2.RouteTable(
                f"{name}-private-{zone}",
                vpc_id=self.vpc.id,
                region=region,
                tags=self._tags("network", "private", Name=f"{name}-private-{zone}"),
                opts=here,
            )
            for zone in layout.private_zones
        }
        for kind in (*layout.tiers, "alb"):
            for zone, subnet in self._subnets[kind].items():
                aws.ec2.RouteTableAssociation(
                    f"{name}-{kind}-{zone}-rt",
                    subnet_id=subnet.id,
                    route_table_id=self._route_tables[zone].id,
                    region=region,
                    opts=here,
                )
        self.private_route_table_ids = [rt.id for rt in self._route_tables.values()]

        # S3 through a gateway endpoint: free, and training data never crosses a NAT.
        self.s3_endpoint = aws.ec2.VpcEndpoint(
            f"{name}-s3",
            vpc_id=self.vpc.id,
            service_name=f"com.amazonaws.{region}.s3",
            vpc_endpoint_type="Gateway",
            route_table_ids=self.private_route_table_ids,
            region=region,
            tags=self._tags("network", "endpoints", Name=f"{name}-s3"),
            opts=here,
        )

        self._security_groups: dict[str, aws.ec2.SecurityGroup] = {
            tier: self._security_group(tier, tier, _TIER_PURPOSE[tier]) for tier in layout.tiers
        }
        self.alb_security_group: aws.ec2.SecurityGroup | None = None
        if "inference" in layout.tiers:
            self.alb_security_group = self._security_group(
                "alb", "inference", "inference load balancer: HTTPS in, gateway port out"
            )
        self._tier_rules()
        self.public_route_table: aws.ec2.RouteTable | None = None
        self.internet_gateway: aws.ec2.InternetGateway | None = None
        if layout.public_zones:
            self._public_routing()
        self.endpoint_security_group: aws.ec2.SecurityGroup | None = None
        self.interface_endpoints: dict[str, aws.ec2.VpcEndpoint] = {}
        self.nat_gateway: aws.ec2.NatGateway | None = None
        self._egress_rules()
        self._flow_logs()

        self.alb_internal = not args.public_endpoint
        self.alb_security_group_id = (
            self.alb_security_group.id if self.alb_security_group is not None else None
        )
        self.alb_subnet_ids = [
            self._subnets["public" if args.public_endpoint else "alb"][zone].id
            for zone in layout.alb_zones
        ]
        self.public_subnet_ids = [s.id for s in self._subnets["public"].values()]
        self.endpoint_security_group_id = (
            self.endpoint_security_group.id if self.endpoint_security_group else None
        )
        self.offered_zones = self._offered_zones()
        unoffered = pulumi.Output.from_input(self.offered_zones).apply(self._warn_unoffered)

        outputs: dict[str, Any] = {
            "vpc_id": self.vpc_id,
            "region": region,
            "cidr_block": args.cidr_block,
            "zones": {tier: list(zones) for tier, zones in layout.tiers.items()},
            "subnet_ids": {tier: self.subnet_ids(tier) for tier in layout.tiers},
            "security_group_ids": {t: sg.id for t, sg in self._security_groups.items()},
            "alb_subnet_ids": self.alb_subnet_ids,
            "alb_internal": self.alb_internal,
            "public_subnet_ids": self.public_subnet_ids,
            "offered_zones": self.offered_zones,
            "planned_zones_not_offered": unoffered,
            "flow_log_group_name": self.flow_log_group_name,
        }
        if self.alb_security_group_id is not None:
            outputs["alb_security_group_id"] = self.alb_security_group_id
        self.register_outputs(outputs)

    # ---- public accessors ------------------------------------------------------------------

    def subnet_ids(self, tier: str) -> list[pulumi.Output[str]]:
        """Private subnet ids of `tier` ('training', 'inference' or 'notebook'), zone order."""
        return [subnet.id for subnet in self._tier(tier, self._subnets).values()]

    def security_group_id(self, tier: str) -> pulumi.Output[str]:
        """The security group nodes of `tier` must use."""
        return self._tier(tier, self._security_groups).id

    def zones(self, tier: str) -> list[str]:
        """The zones `tier`'s subnets are in, as planned from the catalog."""
        return list(self._tier(tier, self.plan.tiers))

    def _tier(self, tier: str, table: dict[str, Any]) -> Any:
        if tier not in TIERS or tier not in self.plan.tiers:
            present = list(self.plan.tiers)
            raise ConfigError(
                f"network {self._name!r} has no {tier!r} tier; it has {present}.",
                field=f"{self._name}.{tier}",
                fix=f"use one of {present}, or give the network {tier} instance types "
                "(or notebook: true).",
            )
        return table[tier]

    # ---- building blocks -------------------------------------------------------------------

    def _tags(self, workload: str, tier: str, **extra: str) -> dict[str, str]:
        return tags_for(
            self.args.governance, workload=workload, **{NETWORK_TIER_TAG: tier}, **extra
        )

    def _subnet(self, kind: str, zone: str, workload: str, *, public: bool) -> aws.ec2.Subnet:
        label = f"{self._name}-{kind}-{zone}"
        return aws.ec2.Subnet(
            label,
            vpc_id=self.vpc.id,
            cidr_block=self.plan.cidrs[(kind, zone)],
            availability_zone=zone,
            # No instance gets a public address, not even in a public subnet: those hold
            # only the load balancer and the NAT gateway, which bring their own.
            map_public_ip_on_launch=False,
            region=self.region,
            tags=self._tags(workload, kind, Name=label, **{"aistack:public": str(public).lower()}),
            opts=child_opts(self),
        )

    def _security_group(self, kind: str, workload: str, purpose: str) -> aws.ec2.SecurityGroup:
        # Rules are separate resources: inline rules and rule resources on one group fight.
        return aws.ec2.SecurityGroup(
            f"{self._name}-{kind}",
            vpc_id=self.vpc.id,
            description=f"aistack {self._name}: {purpose}",
            revoke_rules_on_delete=True,
            region=self.region,
            tags=self._tags(workload, kind, Name=f"{self._name}-{kind}"),
            opts=child_opts(self),
        )

    def _ingress(self, label: str, group: aws.ec2.SecurityGroup, **rule: Any) -> None:
        aws.vpc.SecurityGroupIngressRule(
            f"{self._name}-{label}",
            security_group_id=group.id,
            region=self.region,
            tags=self._tags("network", "rule"),
            opts=child_opts(self),
            **rule,
        )

    def _egress(self, label: str, group: aws.ec2.SecurityGroup, **rule: Any) -> None:
        aws.vpc.SecurityGroupEgressRule(
            f"{self._name}-{label}",
            security_group_id=group.id,
            region=self.region,
            tags=self._tags("network", "rule"),
            opts=child_opts(self),
            **rule,
        )

    def _tier_rules(self) -> None:
        groups = self._security_groups
        training = groups.get("training")
        if training is not None:
            # NCCL and EFA need every protocol and port between nodes of one job, and EFA
            # requires exactly this: all traffic to and from the group itself, nothing else.
            self._ingress(
                "training-from-training",
                training,
                ip_protocol="-1",
                referenced_security_group_id=training.id,
                description="NCCL/EFA between training nodes",
            )
            self._egress(
                "training-to-training",
                training,
                ip_protocol="-1",
                referenced_security_group_id=training.id,
                description="NCCL/EFA between training nodes",
            )
        inference, alb = groups.get("inference"), self.alb_security_group
        if inference is not None and alb is not None:
            port = self.args.gateway_port
            self._ingress(
                "inference-from-alb",
                inference,
                ip_protocol="tcp",
                from_port=port,
                to_port=port,
                referenced_security_group_id=alb.id,
                description="gateway port, from the load balancer only",
            )
            self._egress(
                "alb-to-inference",
                alb,
                ip_protocol="tcp",
                from_port=port,
                to_port=port,
                referenced_security_group_id=inference.id,
                description="to the inference gateway only",
            )
            for cidr in self.args.ingress_cidrs():
                for alb_port in _ALB_PORTS:
                    self._ingress(
                        f"alb-{alb_port}-from-{_slug(cidr)}",
                        alb,
                        ip_protocol="tcp",
                        from_port=alb_port,
                        to_port=alb_port,
                        cidr_ipv4=cidr,
                        description=_ALB_PORT_PURPOSE[alb_port],
                    )

    def _public_routing(self) -> None:
        name, region, here = self._name, self.region, child_opts(self)
        self.internet_gateway = aws.ec2.InternetGateway(
            f"{name}-igw",
            vpc_id=self.vpc.id,
            region=region,
            tags=self._tags("network", "public", Name=f"{name}-igw"),
            opts=here,
        )
        self.public_route_table = aws.ec2.RouteTable(
            f"{name}-public",
            vpc_id=self.vpc.id,
            region=region,
            tags=self._tags("network", "public", Name=f"{name}-public"),
            opts=here,
        )
        aws.ec2.Route(
            f"{name}-public-default",
            route_table_id=self.public_route_table.id,
            destination_cidr_block="0.0.0.0/0",
            gateway_id=self.internet_gateway.id,
            region=region,
            opts=here,
        )
        for zone, subnet in self._subnets["public"].items():
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{zone}-rt",
                subnet_id=subnet.id,
                route_table_id=self.public_route_table.id,
                region=region,
                opts=here,
            )

    def _egress_rules(self) -> None:
        args, name, region, here = self.args, self._name, self.region, child_opts(self)
        for tier, group in self._security_groups.items():
            # Security groups see S3 gateway traffic by S3's prefix list, not by a CIDR.
            self._egress(
                f"{tier}-to-s3",
                group,
                ip_protocol="tcp",
                from_port=_HTTPS,
                to_port=_HTTPS,
                prefix_list_id=self.s3_endpoint.prefix_list_id,
                description="S3 through the gateway endpoint",
            )
        if args.egress == "endpoints":
            self.endpoint_security_group = self._security_group(
                "endpoints", "network", "interface endpoints: HTTPS from the tiers"
            )
            for tier, group in self._security_groups.items():
                self._ingress(
                    f"endpoints-from-{tier}",
                    self.endpoint_security_group,
                    ip_protocol="tcp",
                    from_port=_HTTPS,
                    to_port=_HTTPS,
                    referenced_security_group_id=group.id,
                    description=f"AWS APIs for {tier} nodes",
                )
                self._egress(
                    f"{tier}-to-endpoints",
                    group,
                    ip_protocol="tcp",
                    from_port=_HTTPS,
                    to_port=_HTTPS,
                    referenced_security_group_id=self.endpoint_security_group.id,
                    description="AWS APIs through interface endpoints",
                )
            first_tier = next(iter(self.plan.tiers))
            subnet_ids = [self._subnets[first_tier][zone].id for zone in self.plan.endpoint_zones]
            for service in (*INTERFACE_ENDPOINTS, *args.extra_endpoint_services):
                self.interface_endpoints[service] = aws.ec2.VpcEndpoint(
                    f"{name}-{service.replace('.', '-')}",
                    vpc_id=self.vpc.id,
                    service_name=f"com.amazonaws.{region}.{service}",
                    vpc_endpoint_type="Interface",
                    private_dns_enabled=True,
                    subnet_ids=subnet_ids,
                    security_group_ids=[self.endpoint_security_group.id],
                    region=region,
                    tags=self._tags("network", "endpoints", Name=f"{name}-{service}"),
                    opts=here,
                )
        elif args.egress == "nat":
            assert self.plan.nat_zone is not None and self.internet_gateway is not None
            address = aws.ec2.Eip(
                f"{name}-nat-ip",
                domain="vpc",
                region=region,
                tags=self._tags("network", "public", Name=f"{name}-nat"),
                opts=here,
            )
            # One NAT gateway, not one per zone: a third of the hourly cost. If its zone
            # fails, the other zones lose internet egress until it is back (S3 still works).
            self.nat_gateway = aws.ec2.NatGateway(
                f"{name}-nat",
                allocation_id=address.id,
                subnet_id=self._subnets["public"][self.plan.nat_zone].id,
                connectivity_type="public",
                region=region,
                tags=self._tags("network", "public", Name=f"{name}-nat"),
                opts=child_opts(self, depends_on=[self.internet_gateway]),
            )
            for zone, table in self._route_tables.items():
                aws.ec2.Route(
                    f"{name}-private-{zone}-default",
                    route_table_id=table.id,
                    destination_cidr_block="0.0.0.0/0",
                    nat_gateway_id=self.nat_gateway.id,
                    region=region,
                    opts=here,
                )
            for tier, group in self._security_groups.items():
                self._egress(
                    f"{tier}-https-out",
                    group,
                    ip_protocol="tcp",
                    from_port=_HTTPS,
                    to_port=_HTTPS,
                    cidr_ipv4="0.0.0.0/0",
                    description="HTTPS through the NAT gateway",
                )

    def _flow_logs(self) -> None:
        args, name, region = self.args, self._name, self.region
        governance = args.governance
        retained = stateful_opts(self, governance, allow_destroy=args.allow_destroy_flow_logs)
        tags = self._tags("network", "flow-logs")
        account = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self))
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self))
        account_id, arn_partition = account.account_id, partition.partition

        def arn(service: str, resource: str, *, regional: bool = True) -> pulumi.Output[str]:
            where = region if regional else ""
            return pulumi.Output.format(
                "arn:{0}:{1}:{2}:{3}:{4}", arn_partition, service, where, account_id, resource
            )

        # A prefix, not a fixed name: the group is kept on `pulumi destroy`, and a fixed name
        # would make the next `pulumi up` fail with ResourceAlreadyExistsException. The key
        # policy exists before the group, so it names the prefix.
        log_group_prefix = f"/aistack/{stack_id()}/{name}/vpc-flow-logs-"
        log_group_arns = arn("logs", f"log-group:{log_group_prefix}*")
        key_policy = policy_output(
            {
                # AWS's default key policy statement: without it IAM cannot govern the key
                # at all, and KMS refuses a policy that would lock the account out.
                "Sid": "AccountAdministersKey",
                "Effect": "Allow",
                "Principal": {"AWS": arn("iam", "root", regional=False)},
                "Action": "kms:*",
                "Resource": "*",
            },
            {
                "Sid": "CloudWatchLogsUseForFlowLogGroup",
                "Effect": "Allow",
                "Principal": {"Service": f"logs.{region}.amazonaws.com"},
                "Action": [
                    "kms:Encrypt",
                    "kms:Decrypt",
                    "kms:ReEncryptFrom",
                    "kms:ReEncryptTo",
                    "kms:GenerateDataKey",
                    "kms:GenerateDataKeyWithoutPlaintext",
                    "kms:DescribeKey",
                ],
                # In a key policy "*" means this key; the condition narrows it to the
                # flow-log groups of this network.
                "Resource": "*",
                "Condition": {"ArnLike": {"kms:EncryptionContext:aws:logs:arn": log_group_arns}},
            },
        )
        self.flow_log_key = customer_key(
            f"{name}-flow-log-key",
            description=f"aistack {name}: VPC flow logs",
            policy=key_policy,
            region=region,
            tags=tags,
            opts=retained,
        )
        self.flow_log_group = aws.cloudwatch.LogGroup(
            f"{name}-flow-logs",
            name_prefix=log_group_prefix,
            retention_in_days=args.flow_log_retention_days,
            kms_key_id=self.flow_log_key.arn,
            skip_destroy=not args.allow_destroy_flow_logs,
            region=region,
            tags=tags,
            opts=stateful_opts(
                self,
                governance,
                allow_destroy=args.allow_destroy_flow_logs,
                depends_on=[self.flow_log_key],
            ),
        )
        self.flow_log_group_name = self.flow_log_group.name
        trust = policy_output(
            {
                "Effect": "Allow",
                "Principal": {"Service": "vpc-flow-logs.amazonaws.com"},
                "Action": "sts:AssumeRole",
                # Only flow logs of this account may use the role (confused deputy).
                "Condition": {
                    "StringEquals": {"aws:SourceAccount": account_id},
                    "ArnLike": {"aws:SourceArn": arn("ec2", "vpc-flow-log/*")},
                },
            }
        )
        self.flow_log_role = aws.iam.Role(
            f"{name}-flow-logs-role",
            description=f"aistack {name}: VPC flow logs deliver to their log group",
            assume_role_policy=trust,
            tags=tags,
            opts=child_opts(self),
        )
        group_arn = self.flow_log_group.arn
        delivery = aws.iam.RolePolicy(
            f"{name}-flow-logs-delivery",
            role=self.flow_log_role.id,
            policy=policy_output(
                {
                    "Sid": "WriteFlowLogGroup",
                    "Effect": "Allow",
                    "Action": list(_perms.LOGS_WRITE),
                    "Resource": [group_arn, pulumi.Output.concat(group_arn, ":*")],
                },
                {
                    # The service lists groups before writing; a list call is authorised
                    # against the account's log-group pattern, not one group.
                    "Sid": "FindLogGroup",
                    "Effect": "Allow",
                    "Action": ["logs:DescribeLogGroups"],
                    "Resource": arn("logs", "log-group:*"),
                },
            ),
            opts=child_opts(self),
        )
        self.flow_log = aws.ec2.FlowLog(
            f"{name}-flow-log",
            vpc_id=self.vpc.id,
            traffic_type="ALL",
            log_destination_type="cloud-watch-logs",
            log_destination=group_arn,
            iam_role_arn=self.flow_log_role.arn,
            region=region,
            tags=self._tags("network", "flow-logs", Name=f"{name}-flow-log"),
            # Created before its role may write, a flow log reports delivery errors.
            opts=child_opts(self, depends_on=[delivery]),
        )

    def _offered_zones(self) -> pulumi.Output[dict[str, list[str]]]:
        """What this account offers, looked up at deploy time, per tier with GPU types."""
        wanted = {
            "training": self.args.training_instance_types,
            "inference": self.args.inference_instance_types,
            "notebook": self.args.notebook_instance_types,
        }
        lookups: dict[str, pulumi.Output[list[str]]] = {}
        for tier, types in wanted.items():
            if tier not in self.plan.tiers or not types:
                continue
            result = aws.ec2.get_instance_type_offerings_output(
                location_type="availability-zone",
                filters=[
                    aws.ec2.GetInstanceTypeOfferingsFilterArgs(
                        name="instance-type", values=list(types)
                    )
                ],
                region=self.region,
                opts=pulumi.InvokeOutputOptions(parent=self),
            )
            lookups[tier] = result.apply(functools.partial(_zones_offering, types=types))
        return pulumi.Output.all(**lookups).apply(dict) if lookups else pulumi.Output.from_input({})

    def _warn_unoffered(self, offered: dict[str, list[str]]) -> dict[str, list[str]]:
        missing = {
            tier: sorted(set(self.plan.tiers[tier]) - set(zones)) for tier, zones in offered.items()
        }
        missing = {tier: zones for tier, zones in missing.items() if zones}
        for tier, zones in missing.items():
            pulumi.log.warn(
                f"{self._name}: this account does not offer every {tier} instance type in "
                f"{zones}, though the aistack catalog does (zone names map to different "
                f"physical zones per account). Set availabilityZones to {offered[tier]}.",
                resource=self,
            )
        return missing


_TIER_PURPOSE = {
    "training": "training nodes: all traffic within the group only (NCCL/EFA)",
    "inference": "inference nodes: gateway port from the load balancer only",
    "notebook": "notebooks: no inbound; reached through Session Manager",
}


def _slug(cidr: str) -> str:
    return re.sub(r"[^0-9a-z]+", "-", cidr.lower()).strip("-")

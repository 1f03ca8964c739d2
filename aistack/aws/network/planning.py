"""The plan of `aws.Network`: zones and CIDRs, decided before any resource exists.

Zones are decided when the program runs, from what this account's EC2 answers then
(`account_zones`: plain, synchronous invokes return during the program run, in preview too)
intersected with the aistack catalog; when the account cannot be asked, the catalog alone.
Each subnet's block is fixed by its zone's letter, so adding or dropping a zone never
renumbers another subnet.
"""

from __future__ import annotations

import ipaddress
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from aistack import catalog
from aistack.aws.network.args import _ZONE_LETTERS, TIERS, NetworkArgs
from aistack.errors import ConfigError, Problems

__all__ = ["AccountZones", "NetworkPlan", "account_zones", "plan"]


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

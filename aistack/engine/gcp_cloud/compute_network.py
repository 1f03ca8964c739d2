"""VPC networking in the simulated GCP: networks, subnetworks, routes, firewall rules, Cloud
Router and Cloud NAT, Cloud DNS private zones, and the `getZones` invoke.

Ids and self-links in Compute Engine's formats (`projects/<p>/global/networks/<n>`,
`projects/<p>/regions/<r>/subnetworks/<s>`, self-links under
`https://www.googleapis.com/compute/v1/`; Terraform's RouterNat id
`<project>/<region>/<router>/<nat>`). Refused as the Compute API refuses them, each with its
source:

- a subnet range (primary or secondary) overlapping another range of the same VPC (VPC
  docs, "Subnets" -> "Valid IPv4 ranges": ranges must be unique and non-overlapping within
  a VPC network);
- a secondary range name that is not RFC 1035 or repeats in one subnet, or more than 170
  secondary ranges (VPC docs, "Subnets" -> secondary ranges; "Quotas and limits": 170 per
  subnet);
- a second ACTIVE proxy-only subnet in one region and VPC (Load Balancing docs,
  "Proxy-only subnets": one active proxy-only subnet per region per VPC network);
- a firewall rule mixing target tags with target service accounts, or source tags with
  source service accounts, or an egress rule with sources (VPC firewall docs, "Targets" and
  "Sources": "you cannot use both ... in the same firewall rule"; egress rules have
  destinations only), a rule with both or neither of allow and deny, a priority outside
  0-65535;
- a Cloud NAT with LIST_OF_SUBNETWORKS and no subnetworks.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from aistack.engine.context import SimContext
from aistack.engine.gcp_cloud.project import SimulatedGcpError, digest

__all__ = ["NETWORK_TYPES", "network_resource", "zones"]

COMPUTE = "https://www.googleapis.com/compute/v1/"
#: Compute Engine resource names: RFC 1035 labels of at most 63 characters (Compute docs,
#: "Naming resources").
RFC1035 = re.compile(r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?")
MAX_SECONDARY_RANGES = 170
NETWORK_TYPES = {
    "gcp:compute/network:Network",
    "gcp:compute/subnetwork:Subnetwork",
    "gcp:compute/route:Route",
    "gcp:compute/firewall:Firewall",
    "gcp:compute/router:Router",
    "gcp:compute/routerNat:RouterNat",
    "gcp:dns/managedZone:ManagedZone",
    "gcp:dns/recordSet:RecordSet",
}
_NETWORK_IN = re.compile(r"networks/([^/]+)$")


def _network_key(value: Any) -> str:
    text = str(value or "")
    match = _NETWORK_IN.search(text)
    return match.group(1) if match else text


def _numeric(*parts: str) -> str:
    return str(int(digest(*parts, length=15), 16) % 10**19)


def _refuse(kind: str, name: str, reason: str) -> SimulatedGcpError:
    return SimulatedGcpError(f"{kind} {name!r}: googleapi: Error 400: {reason}")


def network_resource(
    ctx: SimContext,
    typ: str,
    project: str,
    region: str,
    name: str,
    inputs: dict[str, Any],
    out: dict[str, Any],
) -> tuple[str, dict[str, Any]] | None:
    """The id and outputs of a VPC networking registration, or None for other types."""
    if typ not in NETWORK_TYPES:
        return None
    kind = typ.rsplit(":", 1)[1]
    if typ.startswith("gcp:compute/") and kind != "RouterNat" and not RFC1035.fullmatch(name):
        raise _refuse(kind, name, "Invalid value for field 'resource.name': must be RFC 1035.")
    ranges: dict[str, list[tuple[str, ipaddress.IPv4Network]]] = ctx.memory.setdefault(
        "_gcp_network_ranges", {}
    )
    proxies: set[tuple[str, str]] = ctx.memory.setdefault("_gcp_active_proxy_subnets", set())
    location = str(inputs.get("region") or region)

    if kind == "Network":
        path = f"projects/{project}/global/networks/{name}"
        out.update(
            name=name,
            selfLink=COMPUTE + path,
            numericId=_numeric(path),
            routingMode=inputs.get("routingMode") or "REGIONAL",
            autoCreateSubnetworks=inputs.get("autoCreateSubnetworks", True),
            mtu=inputs.get("mtu") or 1460,
        )
        return path, out
    if kind == "Subnetwork":
        return _subnetwork(project, location, name, inputs, out, ranges, proxies)
    if kind == "Firewall":
        _check_firewall(name, inputs)
        path = f"projects/{project}/global/firewalls/{name}"
        out.update(
            name=name,
            selfLink=COMPUTE + path,
            direction=inputs.get("direction") or "INGRESS",
            priority=inputs.get("priority", 1000),
            enableLogging=bool(inputs.get("logConfig")) or bool(inputs.get("enableLogging")),
            creationTimestamp="2026-01-01T00:00:00.000-00:00",
        )
        return path, out
    if kind == "Route":
        try:
            ipaddress.IPv4Network(str(inputs.get("destRange") or ""))
        except ValueError as exc:
            raise _refuse(
                kind, name, f"Invalid value for field 'resource.destRange': {exc}"
            ) from exc
        path = f"projects/{project}/global/routes/{name}"
        gateway = inputs.get("nextHopGateway")
        if gateway == "default-internet-gateway":
            out["nextHopGateway"] = f"{COMPUTE}projects/{project}/global/gateways/{gateway}"
        out.update(name=name, selfLink=COMPUTE + path, priority=inputs.get("priority", 1000))
        return path, out
    if kind == "Router":
        path = f"projects/{project}/regions/{location}/routers/{name}"
        out.update(name=name, region=location, selfLink=COMPUTE + path)
        return path, out
    if kind == "RouterNat":
        if inputs.get("sourceSubnetworkIpRangesToNat") == "LIST_OF_SUBNETWORKS" and not inputs.get(
            "subnetworks"
        ):
            raise _refuse(
                kind, name, "LIST_OF_SUBNETWORKS requires at least one subnetwork in 'subnetworks'."
            )
        router = str(inputs.get("router") or "")
        out.update(name=name, region=location)
        # Terraform's google_compute_router_nat id.
        return f"{project}/{location}/{router}/{name}", out
    if kind == "ManagedZone":
        path = f"projects/{project}/managedZones/{name}"
        private = inputs.get("visibility") == "private"
        out.update(
            name=name,
            managedZoneId=int(_numeric(path)) % 10**15,
            nameServers=(
                ["ns-gcp-private.googledomains.com."]
                if private
                else [f"ns-cloud-a{i}.googledomains.com." for i in range(1, 5)]
            ),
        )
        return path, out
    # RecordSet: Terraform's google_dns_record_set id.
    zone = str(inputs.get("managedZone") or "")
    return (
        f"projects/{project}/managedZones/{zone}/rrsets/{inputs.get('name')}/{inputs.get('type')}",
        out,
    )


def _subnetwork(
    project: str,
    location: str,
    name: str,
    inputs: dict[str, Any],
    out: dict[str, Any],
    ranges: dict[str, list[tuple[str, ipaddress.IPv4Network]]],
    proxies: set[tuple[str, str]],
) -> tuple[str, dict[str, Any]]:
    network = _network_key(inputs.get("network"))
    try:
        primary = ipaddress.IPv4Network(str(inputs.get("ipCidrRange") or ""))
    except ValueError as exc:
        raise _refuse("Subnetwork", name, f"Invalid IPCidrRange: {exc}") from exc
    mine = [(f"{name} primary range", primary)]
    secondary = inputs.get("secondaryIpRanges") or []
    if len(secondary) > MAX_SECONDARY_RANGES:
        raise _refuse("Subnetwork", name, f"more than {MAX_SECONDARY_RANGES} secondary ranges.")
    seen: set[str] = set()
    for entry in secondary:
        range_name = str(entry.get("rangeName") or "")
        if not RFC1035.fullmatch(range_name) or range_name in seen:
            raise _refuse(
                "Subnetwork",
                name,
                f"Invalid secondary range name {range_name!r}: RFC 1035, unique in the subnet.",
            )
        seen.add(range_name)
        mine.append(
            (f"{name} secondary range {range_name}", ipaddress.IPv4Network(entry["ipCidrRange"]))
        )
    existing = ranges.setdefault(network, [])
    for label, block in mine:
        for other_label, other in [*existing, *(m for m in mine if m[0] != label)]:
            if block.overlaps(other):
                raise _refuse(
                    "Subnetwork",
                    name,
                    f"Invalid IPCidrRange: {block} ({label}) conflicts with {other} "
                    f"({other_label}) in network {network}.",
                )
    if inputs.get("purpose") == "REGIONAL_MANAGED_PROXY" and inputs.get("role") == "ACTIVE":
        if (network, location) in proxies:
            raise _refuse(
                "Subnetwork",
                name,
                f"network {network} already has an ACTIVE proxy-only subnet in {location}.",
            )
        proxies.add((network, location))
    existing.extend(mine)
    path = f"projects/{project}/regions/{location}/subnetworks/{name}"
    out.update(
        name=name,
        region=location,
        selfLink=COMPUTE + path,
        subnetworkId=int(_numeric(path)) % 10**15,
        gatewayAddress=str(next(primary.hosts())),
        fingerprint=digest(path, length=12),
        stackType=inputs.get("stackType") or "IPV4_ONLY",
        purpose=inputs.get("purpose") or "PRIVATE",
    )
    return path, out


def _check_firewall(name: str, inputs: dict[str, Any]) -> None:
    if inputs.get("targetTags") and inputs.get("targetServiceAccounts"):
        raise _refuse("Firewall", name, "cannot use both target tags and target service accounts.")
    if inputs.get("sourceTags") and inputs.get("sourceServiceAccounts"):
        raise _refuse("Firewall", name, "cannot use both source tags and source service accounts.")
    direction = inputs.get("direction") or "INGRESS"
    if direction == "EGRESS" and (
        inputs.get("sourceTags")
        or inputs.get("sourceServiceAccounts")
        or inputs.get("sourceRanges")
    ):
        raise _refuse("Firewall", name, "an EGRESS rule takes destination ranges, not sources.")
    if bool(inputs.get("allows")) == bool(inputs.get("denies")):
        raise _refuse("Firewall", name, "a rule has exactly one of 'allowed' and 'denied'.")
    priority = inputs.get("priority", 1000)
    if not 0 <= int(priority) <= 65535:
        raise _refuse("Firewall", name, f"priority {priority} is outside 0-65535.")


def zones(ctx: SimContext, args: dict[str, Any], provider: str) -> dict[str, Any]:
    """`compute.getZones`: the region's zones, all UP, from the GPU catalog (the zones that
    offer at least one catalogued machine type). An unknown region answers no zones."""
    from aistack import catalog

    project = ctx.gcp_project(args, provider)
    region = str(args.get("region") or ctx.gcp_region(args, provider))
    status = args.get("status")
    names = list(catalog.region_zones("gcp", region)) if status in (None, "", "UP") else []
    return {
        "names": names,
        "project": project,
        "region": region,
        "status": status or "",
        "id": f"projects/{project}/regions/{region}",
    }

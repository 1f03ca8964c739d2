"""The arguments of `gcp.Network`: its region, its range and how it is carved per tier, the
tiers' machine types, NAT, flow logs and the firewall's openings.

Ranges are checked to be private and not to overlap (GCP refuses overlapping ranges in one
VPC); the zones the machine types need are the plan's (`planning.py`).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from aistack.config import AistackModel, Governance

__all__ = ["PROXY_TIER", "TIERS", "FlowLogs", "NetworkArgs", "Tier"]

Tier = Literal["training", "inference", "notebook"]
TIERS: tuple[Tier, ...] = ("training", "inference", "notebook")

#: Firewall rules and subnets carry their tier in the description after TIER_MARK (compute
#: networks, subnetworks and firewall rules take no labels); the S1 rules read it.
#: The proxy-only subnet's mark (Envoy-based regional and internal load balancers).
PROXY_TIER = "proxy"

_PRIVATE_RANGES = tuple(
    ipaddress.IPv4Network(r)
    for r in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")
)
#: Ranges a subnet may not use (VPC docs, "Subnets" -> "Prohibited IPv4 subnet ranges").
_PROHIBITED = tuple(
    ipaddress.IPv4Network(r)
    for r in ("0.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "224.0.0.0/4", "255.255.255.255/32")
)
_QUARTER = {"training": 0, "inference": 1, "notebook": 2}


class FlowLogs(AistackModel):
    """VPC Flow Logs of every tier subnet (CKV_GCP_26). Billed as Cloud Logging ingestion
    ($0.50/GiB beyond the free 50 GiB per project per month, Logging pricing): volume grows
    with connections, sampling and metadata, not with bytes moved."""

    aggregation_interval: Literal[
        "INTERVAL_5_SEC",
        "INTERVAL_30_SEC",
        "INTERVAL_1_MIN",
        "INTERVAL_5_MIN",
        "INTERVAL_10_MIN",
        "INTERVAL_15_MIN",
    ] = Field(
        "INTERVAL_5_SEC",
        description="How long flows are aggregated into one record. Default the API's 5 s "
        "(finest detail for an investigation); 1-15 min cut volume several times.",
    )
    flow_sampling: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Fraction of flows recorded, 0-1. Default 0.5 (the API's): half the "
        "cost of 1.0 and still every long-lived connection (NCCL rings, serving).",
    )
    metadata: Literal["INCLUDE_ALL_METADATA", "EXCLUDE_ALL_METADATA"] = Field(
        "INCLUDE_ALL_METADATA",
        description="Default: include VM names, zones and service accounts, which is what "
        "answers 'which workload opened this'; EXCLUDE saves roughly a third of the volume.",
    )


class NetworkArgs(AistackModel):
    """Arguments of `gcp.Network`; camelCase in Pulumi config, snake_case in Python."""

    governance: Governance
    region: str = Field(
        description="Region of every subnet: explicit (never the provider's default), in "
        "governance.allowed_regions (C4), the dataset bucket's region (D2), and offering "
        "the tiers' machine types in at least one zone (C2)."
    )
    cidr_block: str = Field(
        "10.40.0.0/16",
        description="Private range the tier subnets are carved from (a GCP VPC has no range "
        "of its own): a quarter per tier (training, inference, notebook) and the start of "
        "the last quarter for the proxy-only subnet. RFC 1918 or 100.64.0.0/10, /16 to /20.",
    )
    training_machine_types: tuple[str, ...] = Field(
        (),
        description="GPU machine types training runs on (catalog names, e.g. "
        "'a3-highgpu-8g'). Planned zones: those offering ALL of them. Empty: no training "
        "tier. At least one of training and inference is required.",
    )
    inference_machine_types: tuple[str, ...] = Field(
        (),
        description="GPU machine types that serve; as for training. Empty: no inference tier.",
    )
    notebook: bool = Field(
        False,
        description="Add a notebook tier (own subnet) and private zones for the domains "
        "Workbench uses. Off.",
    )
    notebook_machine_types: tuple[str, ...] = Field(
        (),
        description="GPU machine types notebooks use, to plan notebook zones; empty: every "
        "zone of the region the catalog knows. Only with notebook: true.",
    )
    gke_secondary_ranges: bool = Field(
        True,
        description="Give the training subnet the two secondary ranges a VPC-native GKE "
        "cluster needs (pods, services), named by `pods_range_name`/`services_range_name`. "
        "Unused ranges cost nothing.",
    )
    pods_cidr: str = Field(
        "10.64.0.0/14",
        description="Pods secondary range (GKE default size /14: 1,024 nodes at 110 pods).",
    )
    services_cidr: str = Field("10.68.0.0/20", description="Services secondary range.")
    gke_control_plane_cidr: str | None = Field(
        None,
        description="A peering-based private GKE control plane's /28 "
        "(master_ipv4_cidr_block): training nodes may then reach it on 443 and 10250. "
        "Unset: Private Service Connect clusters use an address in the training subnet, "
        "which training may already reach.",
    )
    gke_control_plane_ports: tuple[int, ...] = Field(
        (6443, 8082, 9443),
        description="With gkeControlPlaneCidr: the ports the private control plane may open "
        "on the nodes beyond 443 and 10250, which GKE's own rule allows. The API server "
        "calls admission webhooks and aggregated APIs straight at their pods: Kueue's and "
        "JobSet's webhooks (9443), Kueue's visibility API (8082), the Custom Metrics "
        "Stackdriver Adapter (6443). A webhook it cannot reach with failurePolicy Fail "
        "refuses what it covers (GKE docs, private clusters, 'Add firewall rules').",
    )
    proxy_only_subnet: bool = Field(
        False,
        description="Add the proxy-only subnet (purpose REGIONAL_MANAGED_PROXY, role ACTIVE) "
        "that regional and internal Application Load Balancers need, one per region and "
        "VPC, and let its proxies reach inference on `gateway_port`. Off.",
    )
    training_health_check_port: int | None = Field(
        None,
        ge=1,
        le=65535,
        description="Port a training managed instance group's autohealing health check "
        "probes: Google's health checkers may then reach training nodes on it (and only "
        "it). Unset: no health-check rule for training; a MIG with autohealing and no rule "
        "sees every node unhealthy and recreates it.",
    )
    gateway_port: int = Field(
        8080,
        ge=1,
        le=65535,
        description="Port inference serves on: the only port health checkers and load "
        "balancer proxies may reach. Default 8080.",
    )
    nat: bool = Field(
        False,
        description="Cloud Router + Cloud NAT (AUTO_ONLY addresses, errors logged), a route "
        "to the internet and egress to `nat_egress_ports` anywhere. Off: nodes reach Google "
        "APIs only (Private Google Access), no PyPI, Hugging Face or public registries. NAT "
        "costs $0.0014 per VM-hour (capped at $0.044/h), $0.005 per address-hour and "
        "$0.045 per GiB both ways (Cloud NAT pricing).",
    )
    nat_egress_ports: tuple[int, ...] = Field(
        (443,),
        description="TCP ports nodes may reach on the internet through NAT; default HTTPS only.",
    )
    flow_logs: FlowLogs = Field(default_factory=FlowLogs, description="See FlowLogs.")
    allow_iap_ssh: bool = Field(
        False,
        description="Allow SSH (22) from Identity-Aware Proxy's range 35.235.240.0/20 to "
        "every tier, for `gcloud compute ssh --tunnel-through-iap` (IAM decides who). Off: "
        "no SSH from anywhere; OS Login and the serial console remain.",
    )
    extra_private_dns_domains: tuple[str, ...] = Field(
        (),
        description="More Google domains to answer with the private.googleapis.com "
        "addresses, each a private zone. Always answered: googleapis.com, pkg.dev, gcr.io, "
        "and with notebook: true Workbench's domains (notebooks.cloud.google.com, "
        "notebooks.googleusercontent.com, kernels.googleusercontent.com, "
        "notebooks.byoid.googleusercontent.com).",
    )

    @field_validator("cidr_block")
    @classmethod
    def _cidr_is_private_and_carvable(cls, value: str) -> str:
        block = _parse_cidr(value)
        if not 16 <= block.prefixlen <= 20:
            raise ValueError(
                f"{value} is a /{block.prefixlen}; aistack carves a /16 to /20 into four "
                "tier quarters. Fix: use e.g. 10.40.0.0/16."
            )
        return str(block)

    @field_validator("pods_cidr", "services_cidr", "gke_control_plane_cidr")
    @classmethod
    def _secondary_is_private(cls, value: str | None) -> str | None:
        return None if value is None else str(_parse_cidr(value))

    @field_validator("nat_egress_ports")
    @classmethod
    def _ports_in_range(cls, ports: tuple[int, ...]) -> tuple[int, ...]:
        if not ports or any(not 1 <= p <= 65535 for p in ports):
            raise ValueError("ports are 1 to 65535, at least one. Fix: e.g. [443].")
        return tuple(dict.fromkeys(ports))

    @field_validator("extra_private_dns_domains")
    @classmethod
    def _domains(cls, domains: tuple[str, ...]) -> tuple[str, ...]:
        for domain in domains:
            if not re.fullmatch(
                r"[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+", domain
            ):
                raise ValueError(f"{domain!r} is not a DNS domain. Fix: e.g. 'example.com'.")
        return domains

    @model_validator(mode="after")
    def _ranges_do_not_overlap(self) -> NetworkArgs:
        # GCP refuses a subnet range that overlaps any primary or secondary range in the
        # same VPC (VPC docs, "Subnets" -> "Valid IPv4 ranges"): checked before deploy.
        block = ipaddress.IPv4Network(self.cidr_block)
        ranges = {"cidrBlock": block}
        if self.gke_secondary_ranges:
            ranges["podsCidr"] = ipaddress.IPv4Network(self.pods_cidr)
            ranges["servicesCidr"] = ipaddress.IPv4Network(self.services_cidr)
        if self.gke_control_plane_cidr:
            ranges["gkeControlPlaneCidr"] = ipaddress.IPv4Network(self.gke_control_plane_cidr)
        names = list(ranges)
        for i, first in enumerate(names):
            for second in names[i + 1 :]:
                if ranges[first].overlaps(ranges[second]):
                    raise ValueError(
                        f"{first} {ranges[first]} overlaps {second} {ranges[second]}: GCP "
                        "refuses overlapping ranges in one VPC. Fix: move one of them."
                    )
        if not (self.training_machine_types or self.inference_machine_types):
            raise ValueError(
                "a network needs a training or an inference tier. Fix: set "
                "trainingMachineTypes and/or inferenceMachineTypes."
            )
        if self.notebook_machine_types and not self.notebook:
            raise ValueError("notebookMachineTypes without notebook: true. Fix: set notebook.")
        return self

    def tiers(self) -> tuple[Tier, ...]:
        present = {
            "training": bool(self.training_machine_types),
            "inference": bool(self.inference_machine_types),
            "notebook": self.notebook,
        }
        return tuple(t for t in TIERS if present[t])

    def machine_types(self, tier: Tier) -> tuple[str, ...]:
        return {
            "training": self.training_machine_types,
            "inference": self.inference_machine_types,
            "notebook": self.notebook_machine_types,
        }[tier]

    def subnet_cidr(self, tier: str) -> str:
        quarters = list(ipaddress.IPv4Network(self.cidr_block).subnets(prefixlen_diff=2))
        if tier == PROXY_TIER:
            # Proxy-only subnets: /26 at least, /23 recommended (Load Balancing docs,
            # "Proxy-only subnets for Envoy-based load balancers").
            return str(next(quarters[3].subnets(new_prefix=max(23, quarters[3].prefixlen))))
        return str(quarters[_QUARTER[tier]])


def _parse_cidr(value: str) -> ipaddress.IPv4Network:
    try:
        block = ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        raise ValueError(
            f"{value!r} is not an IPv4 network ({exc}). Fix: e.g. 10.40.0.0/16."
        ) from exc
    if not any(block.subnet_of(r) for r in _PRIVATE_RANGES) or any(
        block.overlaps(r) for r in _PROHIBITED
    ):
        raise ValueError(
            f"{value} is not a private range. Fix: use RFC 1918 (10/8, 172.16/12, "
            "192.168/16) or 100.64.0.0/10."
        )
    return block

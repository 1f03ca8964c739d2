"""`gcp.Network`: a private, default-deny VPC split by tier (S1), planned around the zones
that offer the stack's GPUs (C2).

The Google Cloud counterpart of `aws.Network`, with its promises: training, inference and
(optionally) notebooks each get a private subnet; nothing but an explicit rule passes the
firewall, and the rules name service accounts, never network tags (anyone who may edit an
instance may set its tags; a service account needs `iam.serviceAccountUser`); training
accepts traffic only from training (NCCL needs every port), inference only from Google's
health checkers and the load balancer's proxies; nothing connects inference to training.

Private by construction: the default internet route is deleted at creation, the only
routes out are to `private.googleapis.com` (Private Google Access, free) and, only with
`nat: true`, to the internet through Cloud NAT. A private DNS zone answers
`*.googleapis.com`, `*.pkg.dev` and `*.gcr.io` with the private.googleapis.com addresses,
so Cloud Storage, Artifact Registry, Logging and Monitoring work without any internet path.

Subnets in GCP are regional, so zones are not a property of the network: the component
plans, per tier, the zones that offer ALL its machine types (from the catalog, the same
data GpuQuota and the pools use) and hands them to the pools (`zones(tier)`: a MIG's
distribution zones, a GKE node pool's node locations). A region that offers a machine
type in no zone is a ConfigError naming region, machine type and accelerator. The
deploy-time answer of `compute.getZones` is exported as `offered_zones`, as aws.Network
exports EC2's. Why each setting: docs/components/gcp-network.md.
"""

from __future__ import annotations

import ipaddress
import re
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import pulumi
import pulumi_gcp as gcp
from pydantic import Field, field_validator, model_validator

from aistack import catalog
from aistack.config import AistackModel, Governance
from aistack.contracts.gcp import TIER_MARK
from aistack.errors import ConfigError, Problems
from aistack.gcp._base import child_opts, labels_for
from aistack.gcp.project_services import ProjectServices

if TYPE_CHECKING:
    from aistack.gcp.dataset_bucket import DatasetBucket
    from aistack.gcp.workload_identity import WorkloadIdentity

with warnings.catch_warnings():
    # pulumi-gcp's compute module warns on import about deprecated misspelt classes
    # (MangedSslCertificate, RouterStatus) aistack never uses; as in aistack.gcp._base.
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"pulumi_gcp(\.|$)")
    _ = gcp.compute.Network, gcp.dns.ManagedZone

__all__ = [
    "GOOGLE_HEALTH_CHECK_RANGES",
    "IAP_TCP_FORWARDING_RANGE",
    "PRIVATE_GOOGLE_ACCESS_RANGE",
    "PRIVATE_GOOGLE_ACCESS_IPS",
    "TIER_MARK",
    "FlowLogs",
    "Network",
    "NetworkArgs",
    "plan_zones",
]

Tier = Literal["training", "inference", "notebook"]
TIERS: tuple[Tier, ...] = ("training", "inference", "notebook")

COMPUTE_API = "compute.googleapis.com"
DNS_API = "dns.googleapis.com"

#: private.googleapis.com: the Private Google Access addresses for (almost) every Google API
#: (VPC docs, "Private Google Access" -> "Domain options": private.googleapis.com is
#: 199.36.153.8/30, reachable only from inside Google Cloud; restricted.googleapis.com,
#: 199.36.153.4/30, is for VPC Service Controls perimeters).
PRIVATE_GOOGLE_ACCESS_RANGE = "199.36.153.8/30"
PRIVATE_GOOGLE_ACCESS_IPS = ("199.36.153.8", "199.36.153.9", "199.36.153.10", "199.36.153.11")
#: Domains answered with those addresses (VPC docs, "Configure Private Google Access" ->
#: "DNS configuration": googleapis.com, plus gcr.io and pkg.dev for Container and Artifact
#: Registry; terraform-google-network's private-service-connect/dns.tf configures the same
#: three zones). Each zone: an A record for the apex (or private.googleapis.com) and a
#: wildcard CNAME to it.
PRIVATE_DNS_DOMAINS = ("googleapis.com", "pkg.dev", "gcr.io")
#: Where Google's health checkers and Envoy-less load balancers' probes come from (Cloud
#: Load Balancing docs, "Health checks overview" -> "Probe IP ranges and firewall rules":
#: 35.191.0.0/16 and 130.211.0.0/22 for every load balancer aistack uses).
GOOGLE_HEALTH_CHECK_RANGES = ("35.191.0.0/16", "130.211.0.0/22")
#: Identity-Aware Proxy TCP forwarding's source range (IAP docs, "Using IAP for TCP
#: forwarding" -> "Create a firewall rule": allow ingress from 35.235.240.0/20).
IAP_TCP_FORWARDING_RANGE = "35.235.240.0/20"
#: Priority of the explicit deny-all rules: one above the implied rules (65535), below every
#: allow (1000). VPC firewall docs, "Implied rules": an implied deny-ingress and an implied
#: ALLOW-egress to 0.0.0.0/0 exist at 65535 and cannot be removed or logged. So egress is
#: open unless denied explicitly, and only an explicit deny-ingress rule can log what it
#: drops (Firewall Rules Logging docs: implied rules are not logged).
DENY_ALL_PRIORITY = 65534
ALLOW_PRIORITY = 1000
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
    notebook: bool = Field(False, description="Add a notebook tier (own subnet). Off.")
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
        "addresses (e.g. 'notebooks.cloud.google.com'), each a private zone.",
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


def plan_zones(args: NetworkArgs, where: str, problems: Problems) -> dict[str, tuple[str, ...]]:
    """Per tier, the zones of `args.region` offering every one of its machine types
    (catalog), sorted. Problems name the region, the machine type and its accelerator."""
    planned: dict[str, tuple[str, ...]] = {}
    for tier in args.tiers():
        types = args.machine_types(tier)
        field = {"training": "trainingMachineTypes", "inference": "inferenceMachineTypes"}.get(
            tier, "notebookMachineTypes"
        )
        if not types:  # A notebook tier without GPUs: every zone the catalog knows.
            planned[tier] = catalog.region_zones("gcp", args.region)
            continue
        zones: set[str] | None = None
        for index, machine in enumerate(types):
            try:
                entry = catalog.get(machine, cloud="gcp")
            except ConfigError as exc:
                for problem in exc.problems:
                    problems.add(f"{where}.{field}.{index}", problem.message, problem.fix)
                continue
            if not entry.offered_in(args.region) or not entry.zones(args.region):
                problems.add(
                    f"{where}.{field}.{index}",
                    f"no zone of {args.region} offers {machine} ({entry.gpu_label}) according "
                    "to the aistack catalog (checklist C2).",
                    f"use a region offering it: {list(entry.regions)}, or another machine type.",
                )
                continue
            offered = set(entry.zones(args.region))
            zones = offered if zones is None else zones & offered
        if zones is None:
            continue
        if not zones:
            problems.add(
                f"{where}.{field}",
                f"no zone of {args.region} offers all of {list(types)} together: a pool "
                "spread over the planned zones could not launch every type everywhere (C2).",
                "split the tier's types across pools, or pick types one zone offers together.",
            )
            continue
        planned[tier] = tuple(sorted(zones))
    return planned


class Network(pulumi.ComponentResource):
    """A custom-mode VPC: private tier subnets, default-deny firewall by service account."""

    args: NetworkArgs
    network: gcp.compute.Network
    network_self_link: pulumi.Output[str]
    network_id: pulumi.Output[str]
    subnetworks: dict[str, gcp.compute.Subnetwork]
    subnet_self_links: dict[str, pulumi.Output[str]]
    pods_range_name: str | None
    services_range_name: str | None
    proxy_subnet: gcp.compute.Subnetwork | None
    firewalls: dict[str, gcp.compute.Firewall]
    router: gcp.compute.Router | None
    nat: gcp.compute.RouterNat | None
    offered_zones: pulumi.Output[dict[str, list[str]]]
    planned_zones: dict[str, list[str]]

    def __init__(
        self,
        name: str,
        args: NetworkArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        services: ProjectServices | None = None,
        identity: WorkloadIdentity | None = None,
        service_accounts: Mapping[str, pulumi.Input[str]] | None = None,
        dataset: DatasetBucket | None = None,
    ) -> None:
        """`services`: the stack's ProjectServices (its project is the network's).
        `identity`: a gcp.WorkloadIdentity whose training/inference/notebook accounts the
        firewall rules name, or `service_accounts`: tier -> service account email.
        `dataset`: the stack's dataset DatasetBucket, whose region must be this one (D2)."""

        def checks(args: NetworkArgs) -> dict[str, tuple[str, ...]]:
            problems = Problems()
            found = args.governance.region_problem(args.region, f"{name}.region", cloud="gcp")
            if found:
                problems.items.append(found)
            assert services is not None
            problems.items.extend(services.missing(COMPUTE_API, DNS_API, where=name))
            if dataset is not None and str(dataset.region).lower() != args.region.lower():
                problems.add(
                    f"{name}.region",
                    f"the dataset bucket is in {dataset.region}, the network in "
                    f"{args.region}: training would read its data across regions (D2).",
                    f"use region {dataset.region!r}, or a dataset bucket in {args.region}.",
                )
            if identity is None and service_accounts is None:
                problems.add(
                    f"{name}.serviceAccounts",
                    "the firewall admits traffic by service account, and none were given.",
                    "pass identity=<gcp.WorkloadIdentity> or service_accounts={tier: email}.",
                )
            elif identity is not None:
                for tier in args.tiers():
                    if tier not in identity.accounts:
                        problems.add(
                            f"{name}.identity",
                            f"the WorkloadIdentity has no {tier!r} workload for the "
                            f"{tier} tier's firewall rules.",
                            f"add the workload {tier!r}, or pass service_accounts.",
                        )
            else:
                assert service_accounts is not None
                for tier in args.tiers():
                    if tier not in service_accounts:
                        problems.add(
                            f"{name}.serviceAccounts.{tier}",
                            f"no service account for the {tier} tier.",
                            f"add {tier}: <its service account email>.",
                        )
                plain = {t: v for t, v in service_accounts.items() if isinstance(v, str)}
                if plain.get("training") and plain.get("training") == plain.get("inference"):
                    problems.add(
                        f"{name}.serviceAccounts.inference",
                        "training and inference run as the same service account: the "
                        "firewall could not tell them apart (S1).",
                        "give each tier its own account (gcp.WorkloadIdentity does).",
                    )
            zones = plan_zones(args, name, problems)
            problems.raise_if_any()
            return zones

        args, planned = NetworkArgs.validate_with(
            args, checks, where=name, wiring={"services": services}
        )
        assert services is not None
        super().__init__(
            "aistack:index:GcpNetwork", name, {"region": args.region, "nat": args.nat}, opts
        )
        self.args = args
        self.region = args.region
        self.project = services.project
        self._name = name
        self._planned = planned
        #: Per tier, the zones offering all its machine types (also `zones(tier)`).
        self.planned_zones = {t: list(z) for t, z in planned.items()}
        apis = services.enabling(COMPUTE_API, DNS_API)
        self._opts = lambda *deps: child_opts(self, depends_on=[*apis, *deps])
        if identity is not None:
            self._accounts: dict[str, pulumi.Output[str]] = {
                t: identity.email(t) for t in args.tiers()
            }
        else:
            assert service_accounts is not None
            self._accounts = {
                t: pulumi.Output.from_input(service_accounts[t]) for t in args.tiers()
            }

        # Custom mode (no subnet in every region), regional dynamic routing (nothing here is
        # learned from another region), and no default internet route: without it a VM
        # that somehow got an external address still has no path out (VPC docs, "Routes":
        # the default route is the only internet path, and may be deleted).
        self.network = gcp.compute.Network(
            f"{name}-vpc",
            project=self.project,
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
            delete_default_routes_on_create=True,
            description="aistack private network (docs/components/gcp-network.md)",
            opts=self._opts(),
        )
        self.network_self_link = self.network.self_link
        self.network_id = self.network.id

        self.subnetworks = {tier: self._subnet(tier) for tier in args.tiers()}
        self.subnet_self_links = {t: s.self_link for t, s in self.subnetworks.items()}
        has_gke = "training" in self.subnetworks and args.gke_secondary_ranges
        self.pods_range_name = "training-pods" if has_gke else None
        self.services_range_name = "training-services" if has_gke else None
        self.proxy_subnet = None
        if args.proxy_only_subnet:
            self.proxy_subnet = gcp.compute.Subnetwork(
                f"{name}-proxy",
                project=self.project,
                region=args.region,
                network=self.network.id,
                ip_cidr_range=args.subnet_cidr(PROXY_TIER),
                purpose="REGIONAL_MANAGED_PROXY",
                role="ACTIVE",
                description=f"{TIER_MARK}{PROXY_TIER}: Envoy proxies of regional load balancers",
                opts=self._opts(),
            )

        self._routes()
        self._private_dns()
        self.firewalls: dict[str, gcp.compute.Firewall] = {}
        self._firewall_rules()
        self.router = None
        self.nat = None
        if args.nat:
            self._cloud_nat()

        up = gcp.compute.get_zones_output(
            project=self.project,
            region=args.region,
            status="UP",
            opts=pulumi.InvokeOutputOptions(parent=self, depends_on=apis),
        )
        self.offered_zones = up.names.apply(self._offered)
        outputs: dict[str, object] = {
            "network_self_link": self.network_self_link,
            "network_id": self.network_id,
            "subnet_self_links": self.subnet_self_links,
            "pods_range_name": self.pods_range_name,
            "services_range_name": self.services_range_name,
            "planned_zones": self.planned_zones,
            "offered_zones": self.offered_zones,
            "region": args.region,
        }
        if self.proxy_subnet is not None:
            outputs["proxy_subnet_self_link"] = self.proxy_subnet.self_link
        self.register_outputs(outputs)

    # ---- what pools read ------------------------------------------------------------------

    def zones(self, tier: str) -> list[str]:
        """The planned zones of `tier`: every zone of the region offering all its machine
        types (a MIG's distribution zones, a node pool's node locations)."""
        self._require(tier)
        return list(self._planned[tier])

    def subnet_self_link(self, tier: str) -> pulumi.Output[str]:
        self._require(tier)
        return self.subnet_self_links[tier]

    def service_account(self, tier: str) -> pulumi.Output[str]:
        self._require(tier)
        return self._accounts[tier]

    def _require(self, tier: str) -> None:
        if tier not in self.subnetworks:
            raise ConfigError(
                f"network {self._name!r} has no {tier!r} tier; it has {list(self.subnetworks)}.",
                field=f"{self._name}.tier",
                fix="use one of those tiers, or add the tier's machine types to the network.",
            )

    def _offered(self, names: list[str] | None) -> dict[str, list[str]]:
        up = set(names or [])
        offered: dict[str, list[str]] = {}
        for tier, zones in self._planned.items():
            offered[tier] = [z for z in zones if z in up]
            lost = [z for z in zones if z not in up]
            if names is not None and lost:
                pulumi.log.warn(
                    f"{self._name}: planned {tier} zones {lost} are not UP in "
                    f"{self.region} for this project now (compute.getZones).",
                    self,
                )
        return offered

    # ---- subnets, routes, DNS -------------------------------------------------------------

    def _subnet(self, tier: Tier) -> gcp.compute.Subnetwork:
        args = self.args
        log = args.flow_logs
        secondary = None
        if tier == "training" and args.gke_secondary_ranges:
            secondary = [
                gcp.compute.SubnetworkSecondaryIpRangeArgs(
                    range_name="training-pods", ip_cidr_range=args.pods_cidr
                ),
                gcp.compute.SubnetworkSecondaryIpRangeArgs(
                    range_name="training-services", ip_cidr_range=args.services_cidr
                ),
            ]
        return gcp.compute.Subnetwork(
            f"{self._name}-{tier}",
            project=self.project,
            region=args.region,
            network=self.network.id,
            ip_cidr_range=args.subnet_cidr(tier),
            stack_type="IPV4_ONLY",
            # VMs without external addresses reach Google APIs (VPC docs, "Private Google
            # Access"): the only way out besides NAT.
            private_ip_google_access=True,
            log_config=gcp.compute.SubnetworkLogConfigArgs(
                aggregation_interval=log.aggregation_interval,
                flow_sampling=log.flow_sampling,
                metadata=log.metadata,
            ),
            secondary_ip_ranges=secondary,
            description=f"{TIER_MARK}{tier}: private {tier} subnet",
            opts=self._opts(),
        )

    def _routes(self) -> None:
        # With the default route deleted, Private Google Access needs a route to its
        # addresses through the default internet gateway (VPC docs, "Private Google Access"
        # -> "Routing options": 199.36.153.8/30, next hop default-internet-gateway; the
        # traffic stays inside Google's network).
        self.google_apis_route = gcp.compute.Route(
            f"{self._name}-google-apis",
            project=self.project,
            network=self.network.id,
            dest_range=PRIVATE_GOOGLE_ACCESS_RANGE,
            next_hop_gateway="default-internet-gateway",
            priority=ALLOW_PRIORITY,
            description="private.googleapis.com (Private Google Access)",
            opts=self._opts(),
        )
        self.internet_route: gcp.compute.Route | None = None
        if self.args.nat:
            # Cloud NAT forwards only what routes to the default internet gateway (Cloud NAT
            # docs, "Cloud NAT overview" -> specifications: a default route is required).
            self.internet_route = gcp.compute.Route(
                f"{self._name}-internet",
                project=self.project,
                network=self.network.id,
                dest_range="0.0.0.0/0",
                next_hop_gateway="default-internet-gateway",
                priority=ALLOW_PRIORITY,
                description="internet egress through Cloud NAT (nat: true)",
                opts=self._opts(),
            )

    def _private_dns(self) -> None:
        labels = labels_for(self.args.governance, workload="network")
        self.dns_zones: dict[str, gcp.dns.ManagedZone] = {}
        for domain in (*PRIVATE_DNS_DOMAINS, *self.args.extra_private_dns_domains):
            key = domain.replace(".", "-")
            zone = gcp.dns.ManagedZone(
                f"{self._name}-{key}",
                project=self.project,
                dns_name=f"{domain}.",
                visibility="private",
                private_visibility_config=gcp.dns.ManagedZonePrivateVisibilityConfigArgs(
                    networks=[
                        gcp.dns.ManagedZonePrivateVisibilityConfigNetworkArgs(
                            network_url=self.network.id
                        )
                    ]
                ),
                description=f"{domain} answered with private.googleapis.com addresses",
                labels=labels,
                opts=self._opts(),
            )
            self.dns_zones[domain] = zone
            apex = "private.googleapis.com." if domain == "googleapis.com" else f"{domain}."
            gcp.dns.RecordSet(
                f"{self._name}-{key}-a",
                project=self.project,
                managed_zone=zone.name,
                name=apex,
                type="A",
                ttl=300,
                rrdatas=list(PRIVATE_GOOGLE_ACCESS_IPS),
                opts=self._opts(),
            )
            gcp.dns.RecordSet(
                f"{self._name}-{key}-wildcard",
                project=self.project,
                managed_zone=zone.name,
                name=f"*.{domain}.",
                type="CNAME",
                ttl=300,
                rrdatas=[apex],
                opts=self._opts(),
            )

    # ---- firewall -------------------------------------------------------------------------

    def _firewall(self, key: str, tier: str | None, purpose: str, **rule: Any) -> None:
        mark = f"{TIER_MARK}{tier}: " if tier else ""
        self.firewalls[key] = gcp.compute.Firewall(
            f"{self._name}-{key}",
            project=self.project,
            network=self.network.id,
            description=f"{mark}{purpose}",
            # Every rule logs what it matched (Firewall Rules Logging), metadata included:
            # the record of who reached what. Logs bill as Cloud Logging ingestion.
            log_config=gcp.compute.FirewallLogConfigArgs(metadata="INCLUDE_ALL_METADATA"),
            opts=self._opts(),
            **rule,
        )

    def _firewall_rules(self) -> None:  # noqa: PLR0912 - one block per rule, top to bottom
        args = self.args
        allow_all = [gcp.compute.FirewallAllowArgs(protocol="all")]
        everyone = [self._accounts[t] for t in args.tiers()]

        # Default deny, explicit and logged, just above the implied rules (see DENY_ALL_PRIORITY).
        self._firewall(
            "deny-all-ingress",
            None,
            "default deny: no ingress without an allow rule",
            direction="INGRESS",
            priority=DENY_ALL_PRIORITY,
            denies=[gcp.compute.FirewallDenyArgs(protocol="all")],
            source_ranges=["0.0.0.0/0"],
        )
        self._firewall(
            "deny-all-egress",
            None,
            "default deny: no egress without an allow rule (the implied rule allows all)",
            direction="EGRESS",
            priority=DENY_ALL_PRIORITY,
            denies=[gcp.compute.FirewallDenyArgs(protocol="all")],
            destination_ranges=["0.0.0.0/0"],
        )
        # Google APIs over Private Google Access, for every tier. DNS and the metadata
        # server (169.254.169.254) need no rule: that traffic is always allowed (VPC
        # firewall docs, "Always allowed traffic").
        self._firewall(
            "google-apis-egress",
            None,
            "HTTPS to Google APIs at private.googleapis.com (Private Google Access)",
            direction="EGRESS",
            priority=ALLOW_PRIORITY,
            allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=["443"])],
            destination_ranges=[PRIVATE_GOOGLE_ACCESS_RANGE],
            target_service_accounts=everyone,
        )
        if "training" in self.subnetworks:
            training = [self._accounts["training"]]
            # NCCL (and GKE pods on the same nodes) use arbitrary ports between the nodes
            # of one job: all protocols, but only training to training.
            self._firewall(
                "training-ingress",
                "training",
                "training nodes accept everything from training nodes only (NCCL)",
                direction="INGRESS",
                priority=ALLOW_PRIORITY,
                allows=allow_all,
                source_service_accounts=training,
                target_service_accounts=training,
            )
            # Egress rules cannot name destination service accounts (VPC firewall docs,
            # "Sources and destinations": egress destinations are ranges), so training may
            # send to the training subnet and its GKE ranges, nowhere else in the VPC.
            destinations = [args.subnet_cidr("training")]
            if args.gke_secondary_ranges:
                destinations += [args.pods_cidr, args.services_cidr]
            self._firewall(
                "training-egress",
                "training",
                "training nodes send to the training subnet (and its GKE ranges) only",
                direction="EGRESS",
                priority=ALLOW_PRIORITY,
                allows=allow_all,
                destination_ranges=destinations,
                target_service_accounts=training,
            )
            if args.training_health_check_port is not None:
                self._firewall(
                    "training-health-checks",
                    "training",
                    "Google health checkers reach the autohealing port of training nodes",
                    direction="INGRESS",
                    priority=ALLOW_PRIORITY,
                    allows=[
                        gcp.compute.FirewallAllowArgs(
                            protocol="tcp", ports=[str(args.training_health_check_port)]
                        )
                    ],
                    source_ranges=list(GOOGLE_HEALTH_CHECK_RANGES),
                    target_service_accounts=training,
                )
            if args.gke_control_plane_cidr:
                self._firewall(
                    "training-control-plane-egress",
                    "training",
                    "GKE nodes reach the private control plane (443, kubelet 10250)",
                    direction="EGRESS",
                    priority=ALLOW_PRIORITY,
                    allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=["443", "10250"])],
                    destination_ranges=[args.gke_control_plane_cidr],
                    target_service_accounts=training,
                )
        if "inference" in self.subnetworks:
            port = [gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(args.gateway_port)])]
            self._firewall(
                "health-checks",
                "inference",
                "Google health checkers reach the inference gateway port",
                direction="INGRESS",
                priority=ALLOW_PRIORITY,
                allows=port,
                source_ranges=list(GOOGLE_HEALTH_CHECK_RANGES),
                target_service_accounts=[self._accounts["inference"]],
            )
            if self.proxy_subnet is not None:
                # Envoy-based load balancers connect to backends from the proxy-only subnet
                # (Load Balancing docs, "Proxy-only subnets": allow its range to backends).
                self._firewall(
                    "proxies-to-inference",
                    "inference",
                    "regional load balancer proxies reach the inference gateway port",
                    direction="INGRESS",
                    priority=ALLOW_PRIORITY,
                    allows=port,
                    source_ranges=[args.subnet_cidr(PROXY_TIER)],
                    target_service_accounts=[self._accounts["inference"]],
                )
        if args.nat:
            self._firewall(
                "internet-egress",
                None,
                "HTTPS to the internet through Cloud NAT (nat: true)",
                direction="EGRESS",
                priority=ALLOW_PRIORITY,
                allows=[
                    gcp.compute.FirewallAllowArgs(
                        protocol="tcp", ports=[str(p) for p in args.nat_egress_ports]
                    )
                ],
                destination_ranges=["0.0.0.0/0"],
                target_service_accounts=everyone,
            )
        if args.allow_iap_ssh:
            self._firewall(
                "iap-ssh",
                None,
                "SSH only from Identity-Aware Proxy TCP forwarding (allow_iap_ssh)",
                direction="INGRESS",
                priority=ALLOW_PRIORITY,
                allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=["22"])],
                source_ranges=[IAP_TCP_FORWARDING_RANGE],
                target_service_accounts=everyone,
            )

    # ---- NAT -------------------------------------------------------------------------------

    def _cloud_nat(self) -> None:
        self.router = gcp.compute.Router(
            f"{self._name}-router",
            project=self.project,
            region=self.args.region,
            network=self.network.id,
            description="Cloud Router for Cloud NAT",
            opts=self._opts(),
        )
        self.nat = gcp.compute.RouterNat(
            f"{self._name}-nat",
            project=self.project,
            region=self.args.region,
            router=self.router.name,
            # Google allocates and scales the addresses: nothing to reserve or leak.
            nat_ip_allocate_option="AUTO_ONLY",
            # Only the tier subnets (all their ranges: GKE pods too), never the proxy-only
            # subnet, whose proxies reach the internet on their own.
            source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
            subnetworks=[
                gcp.compute.RouterNatSubnetworkArgs(
                    name=subnet.id, source_ip_ranges_to_nats=["ALL_IP_RANGES"]
                )
                for subnet in self.subnetworks.values()
            ],
            # Port exhaustion and dropped connections are what NAT logs are for; logging
            # every translation would bill every connection.
            log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY"),
            opts=self._opts(),
        )

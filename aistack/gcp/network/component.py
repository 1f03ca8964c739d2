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
so Cloud Storage, Artifact Registry, Logging and Monitoring work without any internet path;
with a notebook tier, Workbench's own domains (`WORKBENCH_PRIVATE_DNS_DOMAINS`) as well.

Subnets in GCP are regional, so zones are not a property of the network: the component
plans, per tier, the zones that offer ALL its machine types (from the catalog, the same
data GpuQuota and the pools use) and hands them to the pools (`zones(tier)`: a MIG's
distribution zones, a GKE node pool's node locations). A region that offers a machine
type in no zone is a ConfigError naming region, machine type and accelerator. The
deploy-time answer of `compute.getZones` is exported as `offered_zones`, as aws.Network
exports EC2's. Why each setting: docs/components/gcp/network.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_gcp as gcp

from aistack.contracts.gcp import TIER_MARK
from aistack.errors import ConfigError
from aistack.gcp._base import child_opts, labels_for
from aistack.gcp.network.args import PROXY_TIER, NetworkArgs, Tier
from aistack.gcp.network.planning import COMPUTE_API, DNS_API, plan_network
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
    "ALLOW_PRIORITY",
    "DENY_ALL_PRIORITY",
    "GOOGLE_HEALTH_CHECK_RANGES",
    "IAP_TCP_FORWARDING_RANGE",
    "PRIVATE_DNS_DOMAINS",
    "PRIVATE_GOOGLE_ACCESS_IPS",
    "PRIVATE_GOOGLE_ACCESS_RANGE",
    "WORKBENCH_PRIVATE_DNS_DOMAINS",
    "Network",
]

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
#: The domains a Workbench instance uses beyond googleapis.com, each a zone on a network
#: with a notebook tier. Workbench docs, "Create an instance" -> "Network configuration
#: options" (docs.cloud.google.com/gemini-enterprise-agent-platform/notebooks/workbench/
#: instances/create#network-options): "If you use the private.googleapis.com or
#: restricted.googleapis.com VIP ..., add DNS entries for each of the required service
#: endpoints": notebooks.cloud.google.com,
#: notebooks.googleapis.com (in the googleapis.com zone already),
#: *.notebooks.byoid.googleusercontent.com, *.notebooks.cloud.google.com,
#: *.notebooks.googleusercontent.com, *.kernels.googleusercontent.com. Every one of them is
#: among the names private.googleapis.com serves (VPC docs, "Access APIs from VMs with
#: external IP addresses" / "Private Google Access" -> "Domain options"), so each zone
#: gets the same apex A record and wildcard CNAME as the three above.
WORKBENCH_PRIVATE_DNS_DOMAINS = (
    "notebooks.cloud.google.com",
    "notebooks.googleusercontent.com",
    "kernels.googleusercontent.com",
    "notebooks.byoid.googleusercontent.com",
)
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
        # Everything is checked, and every tier's zones planned, before anything exists.
        args, planned = NetworkArgs.validate_with(
            args,
            lambda valid: plan_network(
                valid,
                name,
                services=services,
                identity=identity,
                service_accounts=service_accounts,
                dataset=dataset,
            ),
            where=name,
            wiring={"services": services},
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
        # Every resource waits for the APIs it is created through.
        apis = services.enabling(COMPUTE_API, DNS_API)
        self._opts = lambda *deps: child_opts(self, depends_on=[*apis, *deps])
        self._accounts = self._tier_accounts(identity, service_accounts)
        self._vpc()
        self._subnets()
        self._routes()
        self._private_dns()
        self.firewalls: dict[str, gcp.compute.Firewall] = {}
        self._firewall_rules()
        self.router = None
        self.nat = None
        if args.nat:
            self._cloud_nat()
        self._outputs(apis)

    # ---- the steps, in the order they run --------------------------------------------------

    def _tier_accounts(
        self,
        identity: WorkloadIdentity | None,
        service_accounts: Mapping[str, pulumi.Input[str]] | None,
    ) -> dict[str, pulumi.Output[str]]:
        """Per tier, the service account the firewall rules name (the plan checked that
        every tier has one)."""
        tiers = self.args.tiers()
        if identity is not None:
            return {t: identity.email(t) for t in tiers}
        assert service_accounts is not None
        return {t: pulumi.Output.from_input(service_accounts[t]) for t in tiers}

    def _vpc(self) -> None:
        # Custom mode (no subnet in every region), regional dynamic routing (nothing here is
        # learned from another region), and no default internet route: without it a VM
        # that somehow got an external address still has no path out (VPC docs, "Routes":
        # the default route is the only internet path, and may be deleted).
        self.network = gcp.compute.Network(
            f"{self._name}-vpc",
            project=self.project,
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
            delete_default_routes_on_create=True,
            description="aistack private network (docs/components/gcp-network.md)",
            opts=self._opts(),
        )
        self.network_self_link = self.network.self_link
        self.network_id = self.network.id

    def _subnets(self) -> None:
        # A private subnet per tier (training's with GKE's secondary ranges), then the
        # proxy-only subnet regional load balancers need, when asked for.
        args = self.args
        self.subnetworks = {tier: self._subnet(tier) for tier in args.tiers()}
        self.subnet_self_links = {t: s.self_link for t, s in self.subnetworks.items()}
        has_gke = "training" in self.subnetworks and args.gke_secondary_ranges
        self.pods_range_name = "training-pods" if has_gke else None
        self.services_range_name = "training-services" if has_gke else None
        self.proxy_subnet = None
        if args.proxy_only_subnet:
            self.proxy_subnet = gcp.compute.Subnetwork(
                f"{self._name}-proxy",
                project=self.project,
                region=args.region,
                network=self.network.id,
                ip_cidr_range=args.subnet_cidr(PROXY_TIER),
                purpose="REGIONAL_MANAGED_PROXY",
                role="ACTIVE",
                description=f"{TIER_MARK}{PROXY_TIER}: Envoy proxies of regional load balancers",
                opts=self._opts(),
            )

    def _outputs(self, apis: list[pulumi.Resource]) -> None:
        # The deploy-time answer of which planned zones are up (a warning only: the plan is
        # made), then what other components wire to.
        up = gcp.compute.get_zones_output(
            project=self.project,
            region=self.region,
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
            "region": self.region,
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

    @property
    def private_dns_domains(self) -> tuple[str, ...]:
        """The domains answered with the private.googleapis.com addresses, once each: the
        Google API and registry domains, Workbench's when the network has a notebook tier
        (a gcp.Notebook needs that tier, and its proxy agent has no other way to those
        names without NAT), then `extra_private_dns_domains`."""
        workbench = WORKBENCH_PRIVATE_DNS_DOMAINS if self.args.notebook else ()
        return tuple(
            dict.fromkeys((*PRIVATE_DNS_DOMAINS, *workbench, *self.args.extra_private_dns_domains))
        )

    def _private_dns(self) -> None:
        labels = labels_for(self.args.governance, workload="network")
        self.dns_zones: dict[str, gcp.dns.ManagedZone] = {}
        for domain in self.private_dns_domains:
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
                if args.gke_control_plane_ports:
                    ports = [str(port) for port in args.gke_control_plane_ports]
                    self._firewall(
                        "training-control-plane-webhooks",
                        "training",
                        "the private control plane reaches webhooks and aggregated APIs "
                        f"on the nodes' pods (tcp {', '.join(ports)})",
                        direction="INGRESS",
                        priority=ALLOW_PRIORITY,
                        allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=ports)],
                        source_ranges=[args.gke_control_plane_cidr],
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

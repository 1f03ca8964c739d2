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
docs/components/aws/network.md.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import pulumi
import pulumi_aws as aws

from aistack.aws._base import child_opts, tags_for
from aistack.aws.network.args import INTERFACE_ENDPOINTS, TIERS, NetworkArgs
from aistack.aws.network.flow_logs import flow_logs
from aistack.aws.network.planning import NetworkPlan, _zones_offering, account_zones, plan
from aistack.contracts.aws import NETWORK_TIER_TAG
from aistack.errors import ConfigError

__all__ = ["NETWORK_TIER_TAG", "Network"]

#: What a subnet or security group is for inside the network: a tier, `alb`, `public` or
#: `endpoints`. Policy rules read it to tell training from inference (S1).
_ALB_PORTS = (443, 80)
#: What each load balancer port is for: 80 forwards without a certificate and only redirects
#: to 443 with one, so its rule must not claim HTTPS.
_ALB_PORT_PURPOSE = {
    443: "HTTPS to the load balancer",
    80: "HTTP to the load balancer (a redirect to 443 when it has a certificate)",
}
_HTTPS = 443
_TIER_PURPOSE = {
    "training": "training nodes: all traffic within the group only (NCCL/EFA)",
    "inference": "inference nodes: gateway port from the load balancer only",
    "notebook": "notebooks: no inbound; reached through Session Manager",
}


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
        # Everything is checked, and every zone and block decided, before anything exists.
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
        self._warn_fallback_tiers()
        self._vpc()
        self._carve_subnets()
        self._private_routing()
        self._tier_security_groups()
        self._tier_rules()
        # The optional parts, so a stack can read them whether they exist or not.
        self.public_route_table: aws.ec2.RouteTable | None = None
        self.internet_gateway: aws.ec2.InternetGateway | None = None
        if layout.public_zones:
            self._public_routing()
        self.endpoint_security_group: aws.ec2.SecurityGroup | None = None
        self.interface_endpoints: dict[str, aws.ec2.VpcEndpoint] = {}
        self.nat_gateway: aws.ec2.NatGateway | None = None
        self._egress_rules()
        self._flow_logs()
        self._outputs()

    # ---- the steps, in the order they run --------------------------------------------------

    def _warn_fallback_tiers(self) -> None:
        # Not an error: the tier still gets zones, but a node type may not fit every one.
        for tier in self.plan.fallback_tiers:
            pulumi.log.warn(
                f"{self._name}: no zone of {self.region} offers every {tier} instance type "
                "together; its subnets are in zones offering at least one of them, so "
                "capacity of each type lands only where that type is offered.",
                resource=self,
            )

    def _vpc(self) -> None:
        name, here = self._name, child_opts(self)
        self.vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=self.args.cidr_block,
            # Both are needed for interface endpoints' private DNS names to resolve.
            enable_dns_support=True,
            enable_dns_hostnames=True,
            region=self.region,
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
            region=self.region,
            tags=self._tags("network", "default", Name=f"{name}-default-unused"),
            opts=here,
        )

    def _carve_subnets(self) -> None:
        # Private tier subnets, the internal load balancer's (unless it is public), then
        # the public ones (a public load balancer's and the NAT gateway's).
        layout = self.plan
        self._subnets: dict[str, dict[str, aws.ec2.Subnet]] = {}
        for tier, zones in layout.tiers.items():
            self._subnets[tier] = {
                zone: self._subnet(tier, zone, tier, public=False) for zone in zones
            }
        alb_private = {} if self.args.public_endpoint else dict.fromkeys(layout.alb_zones)
        self._subnets["alb"] = {
            zone: self._subnet("alb", zone, "inference", public=False) for zone in alb_private
        }
        self._subnets["public"] = {
            zone: self._subnet("public", zone, "network", public=True)
            for zone in layout.public_zones
        }

    def _private_routing(self) -> None:
        # One route table per zone, so a NAT route (egress "nat") is added per zone.
        name, region, here = self._name, self.region, child_opts(self)
        self._route_tables = {
            zone: aws.ec2.RouteTable(
                f"{name}-private-{zone}",
                vpc_id=self.vpc.id,
                region=region,
                tags=self._tags("network", "private", Name=f"{name}-private-{zone}"),
                opts=here,
            )
            for zone in self.plan.private_zones
        }
        for kind in (*self.plan.tiers, "alb"):
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

    def _tier_security_groups(self) -> None:
        # A group per tier, and the load balancer's when there is an inference tier; the
        # rules between them are separate resources (_tier_rules).
        self._security_groups: dict[str, aws.ec2.SecurityGroup] = {
            tier: self._security_group(tier, tier, _TIER_PURPOSE[tier]) for tier in self.plan.tiers
        }
        self.alb_security_group: aws.ec2.SecurityGroup | None = None
        if "inference" in self.plan.tiers:
            self.alb_security_group = self._security_group(
                "alb", "inference", "inference load balancer: HTTPS in, gateway port out"
            )

    def _outputs(self) -> None:
        # What other components wire to, then the deploy-time zone check (a warning only:
        # the plan is already made).
        args, layout = self.args, self.plan
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
            "region": self.region,
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
        logs = flow_logs(
            self,
            self._name,
            self.args,
            vpc=self.vpc,
            tags=self._tags("network", "flow-logs"),
            flow_log_tags=self._tags("network", "flow-logs", Name=f"{self._name}-flow-log"),
        )
        self.flow_log_key, self.flow_log_group = logs.key, logs.group
        self.flow_log_group_name = logs.group.name
        self.flow_log_role, self.flow_log = logs.role, logs.flow_log

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


def _slug(cidr: str) -> str:
    return re.sub(r"[^0-9a-z]+", "-", cidr.lower()).strip("-")

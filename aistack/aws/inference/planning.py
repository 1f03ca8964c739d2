"""The plan of `aws.InferenceTier`: what each version gets, decided before any resource
exists.

Everything a stack can get wrong is checked here, in one pass, so `pulumi up` fails with one
ConfigError naming every bad field: explicit versions (S7) whose weights sum to 100, bounds
per version (the cost cap, S3), GPU types the region and the network's inference zones
offer (C2), the wiring (network, models bucket, logs bucket) in one region (D2, S1), an
explicit request-logging choice with what full logging needs (G2), an approver for every
version in production (G3), and a gateway config that fits the network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aistack import catalog
from aistack.aws._node import offer_in_region
from aistack.aws.inference.args import InferenceTierArgs, ModelVersion
from aistack.contracts.aws import AwsServingNetwork
from aistack.contracts.model_versions import check_full_logging
from aistack.contracts.serving import check_versions
from aistack.errors import ConfigError, Problems
from aistack.gateway import GatewayConfig

if TYPE_CHECKING:
    from aistack.aws.dataset_bucket import DatasetBucket

__all__ = [
    "ENCRYPT_IN_TRANSIT",
    "TLS_CERTIFICATE",
    "TLS_KEY",
    "WORKLOAD",
    "VersionPlan",
    "plan_tier",
]

WORKLOAD = "inference"
#: Classifications whose traffic is encrypted in transit, also inside the VPC.
ENCRYPT_IN_TRANSIT = frozenset({"confidential", "restricted"})
#: Where the serving node keeps the gateway's self-signed certificate and key (serve.sh
#: makes them at boot) when the load balancer reaches it over HTTPS.
TLS_CERTIFICATE = "/etc/aistack/gateway-tls/cert.pem"
TLS_KEY = "/etc/aistack/gateway-tls/key.pem"
_CERTIFICATE = re.compile(
    r"^arn:aws[a-z-]*:(?:acm:(?P<region>[a-z0-9-]+):\d{12}:certificate/[A-Za-z0-9-]+"
    r"|iam::\d{12}:server-certificate/\S+)$"
)
_TOPIC = re.compile(r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$")


@dataclass(frozen=True)
class VersionPlan:
    spec: ModelVersion
    slug: str
    offer: catalog.InstanceType
    min_nodes: int
    max_nodes: int

    @property
    def version(self) -> str:
        return self.spec.version

    @property
    def weight(self) -> int:
        return self.spec.weight


def plan_tier(
    name: str,
    args: InferenceTierArgs,
    network: AwsServingNetwork,
    models: DatasetBucket,
    logs: DatasetBucket | None,
) -> tuple[list[VersionPlan], GatewayConfig]:
    problems = Problems()
    at = f"{name}."
    region_problem = args.governance.region_problem(args.region, f"{name}.region")
    if region_problem:
        problems.items.append(region_problem)
    _check_wiring(name, args, network, models, logs, problems)
    offers = _check_instance_types(name, args, network, problems)
    versions = _check_versions(name, args, offers, problems)

    check_full_logging(at, args, problems)
    if args.fallback == "previous_version":
        problems.add(
            f"{at}fallback",
            "'previous_version' is not available on AWS: the previous version is behind "
            "the same load balancer, which private nodes could reach only by a second trip "
            "through it (and WAF), counted against one node's address.",
            "keep fallback 'error' (a JSON 503 with Retry-After while the node is replaced) "
            "and keep the previous version warm (weight 0, standby 'warm') so a rollback "
            "is a weight change.",
        )
    if args.public and getattr(network, "alb_internal", True):
        problems.add(
            f"{at}public",
            "the network has no public subnets for an internet-facing load balancer.",
            "create the network with publicEndpoint: true, or leave public off.",
        )
    if args.public and not args.certificate_arn and not args.allow_plaintext_http:
        problems.add(
            f"{at}certificateArn",
            "a public load balancer without a certificate would carry prompts and answers "
            "over the internet in plain HTTP.",
            "set certificateArn to an ACM certificate, or (for a test only) "
            "allowPlaintextHttp: true.",
        )
    elif (
        args.governance.data_classification in ENCRYPT_IN_TRANSIT
        and not args.certificate_arn
        and not args.allow_plaintext_http
    ):
        problems.add(
            f"{at}certificateArn",
            f"the stack's data is {args.governance.data_classification}, and without a "
            "certificate its prompts and answers would cross the VPC (and anything peered "
            "to it) in plain HTTP.",
            "set certificateArn to an ACM certificate in this region (HTTPS on 443, HTTP "
            "only redirects), or, if plain HTTP inside the network is an accepted risk, "
            "allowPlaintextHttp: true.",
        )
    if args.certificate_arn:
        match = _CERTIFICATE.match(args.certificate_arn)
        if not match:
            problems.add(
                f"{at}certificateArn",
                f"{args.certificate_arn!r} is not an ACM or IAM server certificate ARN.",
                "use 'arn:aws:acm:<region>:<account>:certificate/<id>'.",
            )
        elif match["region"] and match["region"] != args.region:
            problems.add(
                f"{at}certificateArn",
                f"the certificate is in {match['region']}; a load balancer in "
                f"{args.region} can only use certificates from its own region.",
                f"request or import the certificate in {args.region}.",
            )
    if args.gateway_image is None and not args.machine_image.ami_id:
        problems.add(
            f"{at}gatewayImage",
            "no gateway image, and the default machine image has no nginx: private nodes "
            "cannot reach a package mirror to install it, so every node would fail its boot "
            "and be replaced, at GPU prices.",
            "mirror nginx into your registry and set gatewayImage to it by digest, or pin "
            "machineImage.amiId to an image with nginx installed.",
        )
    if args.alarm_topic_arn and not _TOPIC.match(args.alarm_topic_arn):
        problems.add(
            f"{at}alarmTopicArn",
            f"{args.alarm_topic_arn!r} is not an SNS topic ARN.",
            "use 'arn:aws:sns:<region>:<account>:<topic>'.",
        )
    gateway = _gateway(name, args, network, problems)
    problems.raise_if_any()
    return versions, gateway


def _check_wiring(
    name: str,
    args: InferenceTierArgs,
    network: AwsServingNetwork,
    models: DatasetBucket,
    logs: DatasetBucket | None,
    problems: Problems,
) -> None:
    network_region = getattr(network, "region", args.region)
    if network_region != args.region:
        problems.add(
            f"{name}.region",
            f"the network is in {network_region} but the tier in {args.region}.",
            f"use the network's region, {network_region}.",
        )
    try:
        network.zones(WORKLOAD)
    except ConfigError as error:
        for problem in error.problems:
            problems.add(f"{name}.network", problem.message, problem.fix)
    else:
        if network.alb_security_group_id is None:
            problems.add(
                f"{name}.network",
                "has no load balancer security group, so the tier's load balancer could "
                "not be created.",
                "pass a network with an inference tier (aws.Network builds its load "
                "balancer's security group with it), or its albSecurityGroupId.",
            )
    if models.args.kind != "models":
        problems.add(
            f"{name}.models",
            f"is a {models.args.kind!r} bucket; the inference role may read models only (S1).",
            "pass the DatasetBucket of kind 'models'.",
        )
    if models.region != args.region:
        problems.add(
            f"{name}.models",
            f"the models bucket is in {models.region}: every node would copy the model "
            "across regions at boot, slowly and billed (D2).",
            f"put the models bucket in {args.region}.",
        )
    if logs is not None and (logs.args.kind != "logs" or logs.region != args.region):
        problems.add(
            f"{name}.logs",
            "load balancer access logs go only to a bucket of kind 'logs' in the load "
            "balancer's region.",
            f"pass the stack's logs DatasetBucket in {args.region}.",
        )


def _check_instance_types(
    name: str, args: InferenceTierArgs, network: AwsServingNetwork, problems: Problems
) -> dict[str, catalog.InstanceType]:
    wanted = {args.instance_type: f"{name}.instanceType"}
    for index, spec in enumerate(args.versions):
        if spec.instance_type:
            wanted.setdefault(spec.instance_type.strip().lower(), f"{name}.versions[{index}]")
    try:
        zones = set(network.zones(WORKLOAD))
    except ConfigError:
        zones = set()
    offers: dict[str, catalog.InstanceType] = {}
    for type_name, field in wanted.items():
        offer = offer_in_region(type_name, args.region, field, problems)
        if offer is None:
            continue
        if zones and not zones & set(offer.zones(args.region)):
            problems.add(
                field,
                f"{offer.name} is offered in {list(offer.zones(args.region))}, none of which "
                f"has an inference subnet ({sorted(zones)}) (C2).",
                "add the type to the network's inferenceInstanceTypes, or use a type its "
                "zones offer.",
            )
            continue
        offers[type_name] = offer
    return offers


def _check_versions(
    name: str,
    args: InferenceTierArgs,
    offers: dict[str, catalog.InstanceType],
    problems: Problems,
) -> list[VersionPlan]:
    distinct = check_versions(
        args.versions,
        at=f"{name}.versions",
        item=lambda index: f"{name}.versions[{index}]",
        prod=args.governance.environment == "prod",
        routes="a load balancer forwarding to one target group per version",
        splits="the listener's weighted forward splits traffic by them",
        problems=problems,
    )
    versions: list[VersionPlan] = []
    for index, spec, slug in distinct:
        maximum = spec.max_nodes or args.max_nodes
        active_min = spec.min_nodes or args.min_nodes
        if active_min > maximum:
            problems.add(
                f"{name}.versions[{index}].minNodes",
                f"{active_min} nodes exceed maxNodes {maximum}.",
                "lower minNodes or raise maxNodes.",
            )
        # Weight 0: the standby decides; one warm node answers a rollback at once.
        standby_min = 1 if spec.standby == "warm" else 0
        minimum = active_min if spec.weight > 0 else standby_min
        offer = offers.get((spec.instance_type or args.instance_type).strip().lower())
        if offer is not None:
            versions.append(VersionPlan(spec, slug, offer, min(minimum, maximum), maximum))
    return versions


def _gateway(
    name: str, args: InferenceTierArgs, network: AwsServingNetwork, problems: Problems
) -> GatewayConfig:
    gateway = args.gateway
    port = getattr(getattr(network, "args", None), "gateway_port", gateway.listen_port)
    chosen = gateway.model_fields_set
    if "listen_port" in chosen and gateway.listen_port != port:
        problems.add(
            f"{name}.gateway.listenPort",
            f"the network lets the load balancer reach the nodes on port {port} only.",
            f"remove gateway.listenPort, or set the network's gatewayPort to "
            f"{gateway.listen_port}.",
        )
    if chosen & {"fallback", "previous_upstream"}:
        problems.add(
            f"{name}.gateway.fallback",
            "the tier decides the gateway's fallback.",
            "set the tier's fallback instead.",
        )
    if gateway.log_dir is None:
        problems.add(
            f"{name}.gateway.logDir",
            "serving nodes ship the gateway's log files; without a log directory its "
            "errors would stay in the node's journal.",
            "remove gateway.logDir to use the default.",
        )
    if gateway.listen_address not in ("0.0.0.0", "*"):
        problems.add(
            f"{name}.gateway.listenAddress",
            "the load balancer reaches the gateway on the node's private address.",
            "remove gateway.listenAddress.",
        )
    data = gateway.model_dump()
    data.update(listen_port=port, fallback="error", previous_upstream=None)
    return GatewayConfig.parse(data, where=f"{name}.gateway")

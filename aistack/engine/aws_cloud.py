"""The simulated cloud's AWS answers: ids, ARNs and outputs in AWS's formats, and invokes.

`SimulatedCloud` (aistack.engine.cloud) hands every `aws:` registration and the AWS
invokes here (`AwsCloud`). A registration gets what all types share (the region, the
provider's default tags as `tagsAll`, an auto-name, a generic ARN), then the answer of
its own type: the handler in `_BY_TYPE` for the token, else in `_BY_KIND` for its
(module, kind), else in `_BY_MODULE` for its module. Names and ids derive from the URN,
so two runs of the same program record the same graph.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi.runtime import MockResourceArgs

from aistack.engine.context import ACCOUNT_ID, Invoke, SimContext, digest

__all__ = [
    "AVAILABILITY_ZONES",
    "INSTANCE_TYPE_OFFERINGS",
    "INVOKES",
    "PARTITION",
    "AwsCloud",
    "availability_zones",
    "caller_identity",
    "instance_type_offerings",
    "partition",
    "region",
    "service_quota",
    "ssm_parameter",
]

#: An AWS invoke as written here: the run's context first, then (args, provider).
AwsInvoke = Callable[[SimContext, dict[str, Any], str], dict[str, Any]]


def _uuid(*parts: str) -> str:
    return str(uuid.UUID(hex=digest(*parts, length=32)))


def _module_and_kind(token: str) -> tuple[str, str]:
    """`aws:s3/bucketV2:BucketV2` -> (`s3`, `BucketV2`)."""
    _, module_path, kind = token.split(":", 2)
    return module_path.split("/", 1)[0], kind


def _camel_to_dash(kind: str) -> str:
    return "".join(f"-{c.lower()}" if c.isupper() else c for c in kind).lstrip("-")


def _zone_id(zone: str) -> str:
    """`us-east-1a` -> `use1-az1`: zone ids differ from names, as on AWS."""
    parts = zone.rstrip("abcdefgh").split("-")
    short = parts[0][:2] + "".join(p[0] for p in parts[1:-1]) + parts[-1]
    return f"{short}-az{'abcdefgh'.index(zone[-1]) + 1}" if zone[-1].isalpha() else zone


def _physical_name(args: MockResourceArgs, key: str = "name") -> str:
    explicit = args.inputs.get(key)
    if explicit:
        return str(explicit)
    prefix = args.inputs.get(f"{key}Prefix")
    suffix = digest(args.typ, args.name, length=7)
    return f"{prefix}{suffix}" if prefix else f"{args.name}-{suffix}"


def _default_tags(ctx: SimContext, provider: str | None) -> dict[str, str]:
    raw = ctx.provider_inputs(provider).get("defaultTags")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    return dict((raw or {}).get("tags") or {})


# ---- resources ---------------------------------------------------------------------------


@dataclass
class _Answer:
    """One registration's answer as it is built: the handler of its type refines the name,
    ARN, id and outputs that every type starts from."""

    args: MockResourceArgs
    inputs: dict[str, Any]
    out: dict[str, Any]
    region: str
    module: str
    kind: str
    #: A digest of the type and logical name, for the made-up parts of ids.
    key: str
    name: str
    arn: str
    id: str


def _s3_bucket(a: _Answer) -> None:
    a.name = _physical_name(a.args, "bucket")
    a.arn, a.id = f"arn:aws:s3:::{a.name}", a.name
    a.out.update(
        bucket=a.name,
        bucketDomainName=f"{a.name}.s3.amazonaws.com",
        bucketRegionalDomainName=f"{a.name}.s3.{a.region}.amazonaws.com",
    )


def _s3_other(a: _Answer) -> None:
    a.id = str(a.inputs.get("bucket") or a.name)


_IAM_PATH_KINDS = {
    "Role": "role",
    "Policy": "policy",
    "InstanceProfile": "instance-profile",
    "User": "user",
}


def _iam(a: _Answer) -> None:
    iam_kind = _IAM_PATH_KINDS.get(a.kind)
    if a.kind == "OpenIdConnectProvider":
        host = str(a.inputs.get("url", "")).removeprefix("https://")
        a.arn = a.id = f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{host}"
    elif iam_kind:
        path = str(a.inputs.get("path") or "/")
        a.arn = f"arn:aws:iam::{ACCOUNT_ID}:{iam_kind}{path}{a.name}"
        a.id = a.arn if a.kind == "Policy" else a.name
        a.out.update(name=a.name, uniqueId=f"AROA{a.key.upper()}")
    else:
        a.id = f"{a.name}:{a.key[:8]}"


def _kms_key(a: _Answer) -> None:
    a.id = _uuid(a.args.typ, a.args.name)
    a.arn = f"arn:aws:kms:{a.region}:{ACCOUNT_ID}:key/{a.id}"
    a.out["keyId"] = a.id


def _kms_alias(a: _Answer) -> None:
    a.arn = f"arn:aws:kms:{a.region}:{ACCOUNT_ID}:{a.name}"
    a.out["targetKeyArn"] = a.inputs.get("targetKeyId", "")


def _sns_topic(a: _Answer) -> None:
    a.arn = a.id = f"arn:aws:sns:{a.region}:{ACCOUNT_ID}:{a.name}"


def _sns_other(a: _Answer) -> None:
    a.arn = a.id = f"arn:aws:sns:{a.region}:{ACCOUNT_ID}:{a.name}:{_uuid(a.args.name)}"


def _lambda_function(a: _Answer) -> None:
    a.arn = f"arn:aws:lambda:{a.region}:{ACCOUNT_ID}:function:{a.name}"
    a.out.update(
        invokeArn=f"arn:aws:apigateway:{a.region}:lambda:path/2015-03-31/functions/{a.arn}/invocations",
        qualifiedArn=f"{a.arn}:1",
        version="1",
    )


def _log_group(a: _Answer) -> None:
    a.arn = f"arn:aws:logs:{a.region}:{ACCOUNT_ID}:log-group:{a.name}"


def _event_rule(a: _Answer) -> None:
    # EventBridge, not CloudWatch: arn:aws:events:<region>:<account>:rule/<name>, and the
    # rule's id is its name (terraform aws_cloudwatch_event_rule, default bus).
    a.arn = f"arn:aws:events:{a.region}:{ACCOUNT_ID}:rule/{a.name}"


def _event_target(a: _Answer) -> None:
    # A target has no ARN of its own: `arn` is the target's (an input); the id is
    # "<rule>-<target id>" as the Terraform provider reports it.
    a.id = f"{a.inputs.get('rule', '')}-{a.inputs.get('targetId', a.key[:8])}"
    a.arn = str(a.inputs.get("arn", ""))


def _cloudwatch_other(a: _Answer) -> None:
    a.arn = f"arn:aws:cloudwatch:{a.region}:{ACCOUNT_ID}:{a.kind.lower()}:{a.name}"


def _ecr_repository(a: _Answer) -> None:
    a.out.update(
        registryId=ACCOUNT_ID,
        repositoryUrl=f"{ACCOUNT_ID}.dkr.ecr.{a.region}.amazonaws.com/{a.name}",
    )
    a.arn = f"arn:aws:ecr:{a.region}:{ACCOUNT_ID}:repository/{a.name}"


_EC2_PREFIXES = {
    "Vpc": "vpc",
    "Subnet": "subnet",
    "SecurityGroup": "sg",
    "RouteTable": "rtb",
    "InternetGateway": "igw",
    "NatGateway": "nat",
    "Eip": "eipalloc",
    "VpcEndpoint": "vpce",
    "LaunchTemplate": "lt",
    "FlowLog": "fl",
    "Instance": "i",
    "SecurityGroupRule": "sgr",
    "NetworkAcl": "acl",
}


def _ec2(a: _Answer) -> None:
    prefix = _EC2_PREFIXES.get(a.kind, a.kind.lower()[:4])
    a.id = f"{prefix}-{a.key}"
    a.arn = f"arn:aws:ec2:{a.region}:{ACCOUNT_ID}:{_camel_to_dash(a.kind)}/{a.id}"
    inputs, out = a.inputs, a.out
    if a.kind == "LaunchTemplate":
        out.update(latestVersion=1, defaultVersion=1)
    if a.kind == "Vpc":
        out.update(defaultSecurityGroupId=f"sg-{digest('default', a.key)}")
    if a.kind == "VpcEndpoint" and inputs.get("vpcEndpointType", "Gateway") == "Gateway":
        out.setdefault("prefixListId", f"pl-{a.key[:8]}")
    elif a.kind == "VpcEndpoint":
        service = str(inputs.get("serviceName", ""))
        out.setdefault(
            "networkInterfaceIds",
            [f"eni-{digest(a.key, str(n))}" for n in inputs.get("subnetIds") or []],
        )
        out.setdefault(
            "dnsEntries",
            [{"dnsName": f"{a.id}.{service}", "hostedZoneId": "Z7HUB22UULQXV"}],
        )
    if a.kind == "Subnet" and "availabilityZone" in inputs:
        out["availabilityZoneId"] = _zone_id(str(inputs["availabilityZone"]))


def _autoscaling_group(a: _Answer) -> None:
    a.arn = (
        f"arn:aws:autoscaling:{a.region}:{ACCOUNT_ID}:autoScalingGroup:"
        f"{_uuid(a.args.typ, a.args.name)}:autoScalingGroupName/{a.name}"
    )


def _batch(a: _Answer) -> None:
    a.arn = f"arn:aws:batch:{a.region}:{ACCOUNT_ID}:{_camel_to_dash(a.kind)}/{a.name}"
    if a.kind == "JobDefinition":
        a.arn += ":1"
        a.out.update(revision=1, arnPrefix=a.arn.rsplit(":", 1)[0])
    a.id = a.arn


_LB_PATH_KINDS = {"LoadBalancer": "loadbalancer/app", "TargetGroup": "targetgroup"}


def _load_balancing(a: _Answer) -> None:
    lb_kind = _LB_PATH_KINDS.get(a.kind)
    if lb_kind:
        suffix = f"{lb_kind}/{a.name}/{a.key[:16]}"
        a.arn = f"arn:aws:elasticloadbalancing:{a.region}:{ACCOUNT_ID}:{suffix}"
        a.out["arnSuffix"] = suffix.removeprefix("loadbalancer/")
        if a.kind == "LoadBalancer":
            a.out.update(
                dnsName=f"{a.name}-{a.key[:10]}.{a.region}.elb.amazonaws.com",
                zoneId="Z35SXDOTRQ7X7K",
            )
    else:
        a.arn = (
            f"arn:aws:elasticloadbalancing:{a.region}:{ACCOUNT_ID}:{_camel_to_dash(a.kind)}/{a.key}"
        )
    a.id = a.arn


def _wafv2(a: _Answer) -> None:
    a.arn = (
        f"arn:aws:wafv2:{a.region}:{ACCOUNT_ID}:regional/{a.kind.lower()}/{a.name}/{_uuid(a.key)}"
    )
    a.id = _uuid(a.key)


def _sagemaker(a: _Answer) -> None:
    prefix = {"Domain": "d-", "UserProfile": ""}.get(a.kind, "")
    a.id = f"{prefix}{a.key[:12]}" if prefix else a.name
    a.arn = f"arn:aws:sagemaker:{a.region}:{ACCOUNT_ID}:{_camel_to_dash(a.kind)}/{a.id}"
    if a.kind == "Domain":
        a.out.update(url=f"https://{a.id}.studio.{a.region}.sagemaker.aws")


def _budgets(a: _Answer) -> None:
    a.arn = f"arn:aws:budgets::{ACCOUNT_ID}:budget/{a.name}"
    a.id = f"{ACCOUNT_ID}:{a.name}"


def _cost_explorer(a: _Answer) -> None:
    a.arn = a.id = f"arn:aws:ce::{ACCOUNT_ID}:{a.kind.lower()}/{_uuid(a.key)}"


def _service_quotas(a: _Answer) -> None:
    a.id = f"{a.inputs.get('serviceCode')}/{a.inputs.get('quotaCode')}"
    a.arn = f"arn:aws:servicequotas:{a.region}:{ACCOUNT_ID}:{a.id}"
    a.out.setdefault("requestStatus", "PENDING")


def _ssm(a: _Answer) -> None:
    a.arn = f"arn:aws:ssm:{a.region}:{ACCOUNT_ID}:parameter{a.name}"


def _sqs_queue(a: _Answer) -> None:
    # A queue's id is its URL and its ARN has no resource type (SQS Developer Guide,
    # "Amazon SQS resource ARN format": arn:aws:sqs:<region>:<account>:<name>).
    a.arn = f"arn:aws:sqs:{a.region}:{ACCOUNT_ID}:{a.name}"
    a.id = f"https://sqs.{a.region}.amazonaws.com/{ACCOUNT_ID}/{a.name}"
    a.out["url"] = a.id


def _sqs_other(a: _Answer) -> None:
    a.id = str(a.inputs.get("queueUrl") or a.name)


def _eks_access_entry(a: _Answer) -> None:
    # Terraform's id is "<cluster>:<principal ARN>"; the entry's ARN names both.
    principal = str(a.inputs.get("principalArn", ""))
    cluster = str(a.inputs.get("clusterName", ""))
    a.id = f"{cluster}:{principal}"
    a.arn = (
        f"arn:aws:eks:{a.region}:{ACCOUNT_ID}:access-entry/{cluster}/role/{ACCOUNT_ID}/"
        f"{_uuid(a.key)}"
    )
    a.out.update(
        accessEntryArn=a.arn,
        kubernetesGroups=list(a.inputs.get("kubernetesGroups") or []),
        userName="system:node:{{EC2PrivateDNSName}}",
    )


_Handler = Callable[[_Answer], None]

#: The most specific answer first: a whole token, then (module, kind), then the module. A
#: type none of the three names keeps the generic name, ARN and id.
_BY_TYPE: dict[str, _Handler] = {
    "aws:s3/bucket:Bucket": _s3_bucket,
    "aws:s3/bucketV2:BucketV2": _s3_bucket,
    "aws:kms/key:Key": _kms_key,
    "aws:kms/alias:Alias": _kms_alias,
}
_BY_KIND: dict[tuple[str, str], _Handler] = {
    ("sns", "Topic"): _sns_topic,
    ("lambda", "Function"): _lambda_function,
    ("cloudwatch", "LogGroup"): _log_group,
    ("cloudwatch", "EventRule"): _event_rule,
    ("cloudwatch", "EventTarget"): _event_target,
    ("ecr", "Repository"): _ecr_repository,
    ("autoscaling", "Group"): _autoscaling_group,
    ("sqs", "Queue"): _sqs_queue,
    ("eks", "AccessEntry"): _eks_access_entry,
}
_BY_MODULE: dict[str, _Handler] = {
    "s3": _s3_other,
    "iam": _iam,
    "sns": _sns_other,
    "cloudwatch": _cloudwatch_other,
    "ec2": _ec2,
    "ec2transitgateway": _ec2,
    "batch": _batch,
    "lb": _load_balancing,
    "alb": _load_balancing,
    "wafv2": _wafv2,
    "sagemaker": _sagemaker,
    "budgets": _budgets,
    "costexplorer": _cost_explorer,
    "servicequotas": _service_quotas,
    "ssm": _ssm,
    "sqs": _sqs_other,
}


def resource(
    ctx: SimContext, args: MockResourceArgs, inputs: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The id and outputs AWS returns for one `aws:` registration."""
    region = ctx.aws_region(inputs, args.provider)
    module, kind = _module_and_kind(args.typ)
    out = dict(inputs)
    out.setdefault("region", region)
    tags = inputs.get("tags")
    # Auto scaling groups carry tags as a list and get no provider default tags.
    if not isinstance(tags, list) and (isinstance(tags, dict) or _default_tags(ctx, args.provider)):
        # As the provider reports it: its default tags, overridden by the resource's.
        out.setdefault("tagsAll", {**_default_tags(ctx, args.provider), **(tags or {})})
    name = _physical_name(args)
    answer = _Answer(
        args=args,
        inputs=inputs,
        out=out,
        region=region,
        module=module,
        kind=kind,
        key=digest(args.typ, args.name),
        name=name,
        arn=f"arn:aws:{module}:{region}:{ACCOUNT_ID}:{kind.lower()}/{name}",
        id=name,
    )
    handler = _BY_TYPE.get(args.typ) or _BY_KIND.get((module, kind)) or _BY_MODULE.get(module)
    if handler is not None:
        handler(answer)
    out.setdefault("arn", answer.arn)
    out.setdefault("id", answer.id)
    # Auto-named resources get their physical name back, as the provider reports it.
    if module not in ("s3",) and "name" not in out:
        out["name"] = answer.name
    return answer.id, out


# ---- invokes -----------------------------------------------------------------------------


def caller_identity(ctx: SimContext, args: dict[str, Any], provider: str) -> dict[str, Any]:
    return {
        "accountId": ACCOUNT_ID,
        "arn": f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/aistack-preview/session",
        "userId": "AROASIMULATEDPREVIEW:session",
        "id": ACCOUNT_ID,
    }


def region(ctx: SimContext, args: dict[str, Any], provider: str) -> dict[str, Any]:
    name = ctx.aws_region(args, provider)
    return {
        "name": name,
        "region": name,
        "id": name,
        "description": name,
        "endpoint": f"ec2.{name}.amazonaws.com",
    }


def partition(ctx: SimContext, args: dict[str, Any], provider: str) -> dict[str, Any]:
    return {
        "partition": "aws",
        "dnsSuffix": "amazonaws.com",
        "reverseDnsPrefix": "com.amazonaws",
        "id": "aws",
    }


def availability_zones(ctx: SimContext, args: dict[str, Any], provider: str) -> dict[str, Any]:
    from aistack import catalog

    name = ctx.aws_region(args, provider)
    names = list(catalog.region_zones("aws", name)) or [f"{name}{s}" for s in "abc"]
    return {
        "names": names,
        "zoneIds": [_zone_id(zone) for zone in names],
        "groupNames": [name] * len(names),
        "id": name,
        "region": name,
        "state": "available",
    }


def instance_type_offerings(ctx: SimContext, args: dict[str, Any], provider: str) -> dict[str, Any]:
    """Which zones offer which instance types, answered from the GPU catalog."""
    from aistack import catalog

    name = ctx.aws_region(args, provider)
    filters = {f["name"]: list(f["values"]) for f in args.get("filters") or []}
    location_type = args.get("locationType", "region")
    wanted = filters.get("instance-type")
    types = wanted or [t.name for t in catalog.instance_types("aws")]
    rows: list[tuple[str, str]] = []
    for type_name in types:
        known = catalog.find("aws", type_name)
        if known is None or not known.offered_in(name):
            continue
        if location_type == "availability-zone":
            rows += [(type_name, zone) for zone in known.zones(name)]
        else:
            rows.append((type_name, name))
    if "location" in filters:
        rows = [row for row in rows if row[1] in filters["location"]]
    return {
        "instanceTypes": [row[0] for row in rows],
        "locations": [row[1] for row in rows],
        "locationTypes": [location_type] * len(rows),
        "id": name,
        "region": name,
    }


def ssm_parameter(ctx: SimContext, args: dict[str, Any], provider: str) -> dict[str, Any]:
    name = str(args["name"])
    where = ctx.aws_region(args, provider)
    # Public AMI parameters (.../image_id, .../ami-id) resolve to an image id, as on AWS;
    # any other parameter to a value that says where it came from.
    is_image = "ami" in name.lower() or name.endswith("image_id")
    value = f"ami-{digest(name, where)}" if is_image else f"simulated-ssm:{name}"
    return {
        "name": name,
        "value": value,
        "insecureValue": value,
        "type": "String",
        "version": 1,
        "arn": f"arn:aws:ssm:{where}:{ACCOUNT_ID}:parameter{name}",
        "id": name,
        "withDecryption": bool(args.get("withDecryption", True)),
    }


def service_quota(ctx: SimContext, args: dict[str, Any], provider: str) -> dict[str, Any]:
    where = ctx.aws_region(args, provider)
    code = str(args.get("quotaCode", ""))
    service = str(args.get("serviceCode", ""))
    value = float(ctx.service_quotas.get(code, 0.0))
    return {
        "quotaCode": code,
        "quotaName": str(args.get("quotaName") or code),
        "serviceCode": service,
        "serviceName": service,
        "value": value,
        "defaultValue": value,
        "adjustable": True,
        "globalQuota": False,
        "usageMetrics": [],
        "arn": f"arn:aws:servicequotas:{where}:{ACCOUNT_ID}:{service}/{code}",
        "id": f"{service}/{code}",
        "region": where,
    }


PARTITION = "aws:index/getPartition:getPartition"
AVAILABILITY_ZONES = "aws:index/getAvailabilityZones:getAvailabilityZones"
INSTANCE_TYPE_OFFERINGS = "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings"

#: The AWS invokes the simulated cloud answers, by token.

ECR_REPOSITORY = "aws:ecr/repository:Repository"


def _held_repositories(ctx: SimContext, region: str) -> dict[str, Mapping[str, Any]]:
    """The ECR repositories earlier deployments left in `region` (SimContext.existing)."""
    return {
        name: outputs
        for (kind, scope, name), outputs in ctx.existing.items()
        if kind == ECR_REPOSITORY and scope == (ACCOUNT_ID, region)
    }


def ecr_repositories(ctx: SimContext, args: dict[str, Any], provider: str) -> dict[str, Any]:
    """The region's repository names, as `DescribeRepositories` pages them (empty when
    there are none)."""
    region = ctx.aws_region(args, provider)
    return {"id": region, "region": region, "names": sorted(_held_repositories(ctx, region))}


INVOKES: dict[str, AwsInvoke] = {
    "aws:index/getCallerIdentity:getCallerIdentity": caller_identity,
    "aws:index/getRegion:getRegion": region,
    PARTITION: partition,
    AVAILABILITY_ZONES: availability_zones,
    INSTANCE_TYPE_OFFERINGS: instance_type_offerings,
    "aws:ssm/getParameter:getParameter": ssm_parameter,
    "aws:servicequotas/getServiceQuota:getServiceQuota": service_quota,
    "aws:ecr/getRepositories:getRepositories": ecr_repositories,
}


class AwsCloud:
    """The simulated AWS account, as a `SimulatedProvider` (aistack.engine.context).

    `answers` replaces the answer to some invokes (by token): how a test answers as an
    account other than the simulated one, its zones or partition, say."""

    package = "aws"

    def __init__(self, ctx: SimContext, answers: Mapping[str, Invoke] | None = None) -> None:
        self.ctx = ctx
        self._invokes: dict[str, Invoke] = {
            token: functools.partial(answer, ctx) for token, answer in INVOKES.items()
        }
        self._invokes.update(answers or {})

    def resource(
        self, args: MockResourceArgs, inputs: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        return resource(self.ctx, args, inputs)

    def invokes(self) -> Mapping[str, Invoke]:
        return self._invokes

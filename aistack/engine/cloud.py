"""The simulated cloud: what a provider would return for each resource and invoke.

Ids, ARNs, self-links and zones look like the real ones and are derived from the
resource's URN, so two runs of the same program produce the same graph. An invoke the
simulated cloud does not know fails loudly with its token: a silent empty answer would let
a component build against data that does not exist.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from typing import Any

from pulumi.runtime import MockCallArgs, MockResourceArgs, Mocks

from aistack.engine import gcp_cloud, k8s_cloud
from aistack.errors import AistackError

__all__ = ["SimulatedCloud", "UnknownInvokeError", "ACCOUNT_ID", "GCP_PROJECT"]

ACCOUNT_ID = "123456789012"
GCP_PROJECT = "aistack-sim"
DEFAULT_AWS_REGION = "us-east-1"
DEFAULT_GCP_REGION = "us-central1"


class UnknownInvokeError(AistackError):
    """A program called a provider function the simulated cloud cannot answer."""


def _digest(*parts: str, length: int = 17) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:length]


def _uuid(*parts: str) -> str:
    return str(uuid.UUID(hex=_digest(*parts, length=32)))


class SimulatedCloud(Mocks):
    """Answers resource registrations and invokes for AWS, GCP and Kubernetes."""

    def __init__(self, config: dict[str, str] | None = None) -> None:
        self.config = dict(config or {})
        #: provider reference ("urn::id") -> that provider's inputs, filled by the recorder.
        self.providers: dict[str, dict[str, Any]] = {}
        self._invokes: dict[str, Callable[[dict[str, Any], str], dict[str, Any]]] = {
            "aws:index/getCallerIdentity:getCallerIdentity": self._aws_caller_identity,
            "aws:index/getRegion:getRegion": self._aws_region,
            "aws:index/getPartition:getPartition": self._aws_partition,
            "aws:index/getAvailabilityZones:getAvailabilityZones": self._aws_zones,
            "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings": self._aws_offerings,
            "aws:ssm/getParameter:getParameter": self._aws_ssm_parameter,
            "aws:servicequotas/getServiceQuota:getServiceQuota": self._aws_service_quota,
            "gcp:organizations/getClientConfig:getClientConfig": self._gcp_client_config,
            "gcp:compute/getZones:getZones": self._gcp_zones,
        }
        self._invokes.update(gcp_cloud.invokes(self))

    # ---- regions -------------------------------------------------------------------------

    def aws_region(self, args: dict[str, Any], provider: str | None) -> str:
        if args.get("region"):
            return str(args["region"])
        provider_inputs = self.providers.get(provider or "", {})
        return str(
            provider_inputs.get("region") or self.config.get("aws:region") or DEFAULT_AWS_REGION
        )

    def gcp_region(self, args: dict[str, Any], provider: str | None) -> str:
        provider_inputs = self.providers.get(provider or "", {})
        return str(
            args.get("region")
            or provider_inputs.get("region")
            or self.config.get("gcp:region")
            or DEFAULT_GCP_REGION
        )

    def gcp_project(self, args: dict[str, Any], provider: str | None) -> str:
        provider_inputs = self.providers.get(provider or "", {})
        return str(
            args.get("project")
            or provider_inputs.get("project")
            or self.config.get("gcp:project")
            or GCP_PROJECT
        )

    # ---- resources -----------------------------------------------------------------------

    def new_resource(self, args: MockResourceArgs) -> tuple[str, dict[str, Any]]:
        inputs = dict(args.inputs)
        package = args.typ.split(":", 1)[0]
        if args.typ.startswith("pulumi:providers:"):
            return _digest("provider", args.name, length=12), inputs
        if package == "aws":
            return self._aws_resource(args, inputs)
        if package == "gcp":
            return gcp_cloud.resource(self, args, inputs)
        if package == "kubernetes":
            return k8s_cloud.resource(self, args, inputs)
        return f"{args.name}-{_digest(args.typ, args.name, length=8)}", inputs

    def _physical_name(self, args: MockResourceArgs, key: str = "name") -> str:
        explicit = args.inputs.get(key)
        if explicit:
            return str(explicit)
        prefix = args.inputs.get(f"{key}Prefix")
        suffix = _digest(args.typ, args.name, length=7)
        return f"{prefix}{suffix}" if prefix else f"{args.name}-{suffix}"

    def _aws_resource(
        self, args: MockResourceArgs, inputs: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        region = self.aws_region(inputs, args.provider)
        module, kind = _aws_module_and_kind(args.typ)
        key = _digest(args.typ, args.name)
        acct = ACCOUNT_ID
        out = dict(inputs)
        out.setdefault("region", region)
        # Auto scaling groups carry tags as a list and get no provider default tags.
        if not isinstance(inputs.get("tags"), list) and (
            isinstance(inputs.get("tags"), dict) or self._default_tags(args.provider)
        ):
            # As the provider reports it: its default tags, overridden by the resource's.
            out.setdefault(
                "tagsAll", {**self._default_tags(args.provider), **(inputs.get("tags") or {})}
            )
        name = self._physical_name(args)
        arn = f"arn:aws:{module}:{region}:{acct}:{kind.lower()}/{name}"
        resource_id = name
        typ = args.typ

        if typ == "aws:s3/bucket:Bucket" or typ == "aws:s3/bucketV2:BucketV2":
            name = self._physical_name(args, "bucket")
            arn, resource_id = f"arn:aws:s3:::{name}", name
            out.update(
                bucket=name,
                bucketDomainName=f"{name}.s3.amazonaws.com",
                bucketRegionalDomainName=f"{name}.s3.{region}.amazonaws.com",
            )
        elif module == "s3":
            resource_id = str(inputs.get("bucket") or name)
        elif module == "iam":
            iam_kind = {
                "Role": "role",
                "Policy": "policy",
                "InstanceProfile": "instance-profile",
                "User": "user",
            }.get(kind)
            if kind == "OpenIdConnectProvider":
                host = str(inputs.get("url", "")).removeprefix("https://")
                arn = resource_id = f"arn:aws:iam::{acct}:oidc-provider/{host}"
            elif iam_kind:
                path = str(inputs.get("path") or "/")
                arn = f"arn:aws:iam::{acct}:{iam_kind}{path}{name}"
                resource_id = arn if kind == "Policy" else name
                out.update(name=name, uniqueId=f"AROA{key.upper()}")
            else:
                resource_id = f"{name}:{key[:8]}"
        elif typ == "aws:kms/key:Key":
            resource_id = _uuid(args.typ, args.name)
            arn = f"arn:aws:kms:{region}:{acct}:key/{resource_id}"
            out["keyId"] = resource_id
        elif typ == "aws:kms/alias:Alias":
            arn = f"arn:aws:kms:{region}:{acct}:{name}"
            out["targetKeyArn"] = inputs.get("targetKeyId", "")
        elif module == "sns" and kind == "Topic":
            arn = resource_id = f"arn:aws:sns:{region}:{acct}:{name}"
        elif module == "sns":
            arn = resource_id = f"arn:aws:sns:{region}:{acct}:{name}:{_uuid(args.name)}"
        elif module == "lambda" and kind == "Function":
            arn = f"arn:aws:lambda:{region}:{acct}:function:{name}"
            out.update(
                invokeArn=f"arn:aws:apigateway:{region}:lambda:path/2015-03-31/functions/{arn}/invocations",
                qualifiedArn=f"{arn}:1",
                version="1",
            )
        elif module == "cloudwatch" and kind == "LogGroup":
            arn = f"arn:aws:logs:{region}:{acct}:log-group:{name}"
        elif module == "cloudwatch" and kind == "EventRule":
            # EventBridge, not CloudWatch: arn:aws:events:<region>:<account>:rule/<name>,
            # and the rule's id is its name (terraform aws_cloudwatch_event_rule, default bus).
            arn = f"arn:aws:events:{region}:{acct}:rule/{name}"
        elif module == "cloudwatch" and kind == "EventTarget":
            # A target has no ARN of its own: `arn` is the target's (an input); the id is
            # "<rule>-<target id>" as the Terraform provider reports it.
            resource_id = f"{inputs.get('rule', '')}-{inputs.get('targetId', key[:8])}"
            arn = str(inputs.get("arn", ""))
        elif module == "cloudwatch":
            arn = f"arn:aws:cloudwatch:{region}:{acct}:{kind.lower()}:{name}"
        elif module == "ecr" and kind == "Repository":
            out.update(
                registryId=acct,
                repositoryUrl=f"{acct}.dkr.ecr.{region}.amazonaws.com/{name}",
            )
            arn = f"arn:aws:ecr:{region}:{acct}:repository/{name}"
        elif module == "ec2" or module == "ec2transitgateway":
            prefix = _EC2_PREFIXES.get(kind, kind.lower()[:4])
            resource_id = f"{prefix}-{key}"
            arn = f"arn:aws:ec2:{region}:{acct}:{_camel_to_dash(kind)}/{resource_id}"
            if kind == "LaunchTemplate":
                out.update(latestVersion=1, defaultVersion=1)
            if kind == "Vpc":
                out.update(defaultSecurityGroupId=f"sg-{_digest('default', key)}")
            if kind == "VpcEndpoint" and inputs.get("vpcEndpointType", "Gateway") == "Gateway":
                out.setdefault("prefixListId", f"pl-{key[:8]}")
            elif kind == "VpcEndpoint":
                service = str(inputs.get("serviceName", ""))
                out.setdefault(
                    "networkInterfaceIds",
                    [f"eni-{_digest(key, str(n))}" for n in inputs.get("subnetIds") or []],
                )
                out.setdefault(
                    "dnsEntries",
                    [{"dnsName": f"{resource_id}.{service}", "hostedZoneId": "Z7HUB22UULQXV"}],
                )
            if kind == "Subnet" and "availabilityZone" in inputs:
                out["availabilityZoneId"] = _zone_id(str(inputs["availabilityZone"]))
        elif module == "autoscaling" and kind == "Group":
            arn = (
                f"arn:aws:autoscaling:{region}:{acct}:autoScalingGroup:"
                f"{_uuid(args.typ, args.name)}:autoScalingGroupName/{name}"
            )
        elif module == "batch":
            dashed = _camel_to_dash(kind)
            arn = f"arn:aws:batch:{region}:{acct}:{dashed}/{name}"
            if kind == "JobDefinition":
                arn += ":1"
                out.update(revision=1, arnPrefix=arn.rsplit(":", 1)[0])
            resource_id = arn
        elif module in ("lb", "alb"):
            lb_kind = {"LoadBalancer": "loadbalancer/app", "TargetGroup": "targetgroup"}.get(kind)
            if lb_kind:
                suffix = f"{lb_kind}/{name}/{key[:16]}"
                arn = f"arn:aws:elasticloadbalancing:{region}:{acct}:{suffix}"
                out["arnSuffix"] = suffix.removeprefix("loadbalancer/")
                if kind == "LoadBalancer":
                    out.update(
                        dnsName=f"{name}-{key[:10]}.{region}.elb.amazonaws.com",
                        zoneId="Z35SXDOTRQ7X7K",
                    )
            else:
                arn = f"arn:aws:elasticloadbalancing:{region}:{acct}:{_camel_to_dash(kind)}/{key}"
            resource_id = arn
        elif module == "wafv2":
            arn = f"arn:aws:wafv2:{region}:{acct}:regional/{kind.lower()}/{name}/{_uuid(key)}"
            resource_id = _uuid(key)
        elif module == "sagemaker":
            prefix = {"Domain": "d-", "UserProfile": ""}.get(kind, "")
            resource_id = f"{prefix}{key[:12]}" if prefix else name
            arn = f"arn:aws:sagemaker:{region}:{acct}:{_camel_to_dash(kind)}/{resource_id}"
            if kind == "Domain":
                out.update(url=f"https://{resource_id}.studio.{region}.sagemaker.aws")
        elif module == "budgets":
            arn = f"arn:aws:budgets::{acct}:budget/{name}"
            resource_id = f"{acct}:{name}"
        elif module == "costexplorer":
            arn = resource_id = f"arn:aws:ce::{acct}:{kind.lower()}/{_uuid(key)}"
        elif module == "servicequotas":
            resource_id = f"{inputs.get('serviceCode')}/{inputs.get('quotaCode')}"
            arn = f"arn:aws:servicequotas:{region}:{acct}:{resource_id}"
            out.setdefault("requestStatus", "PENDING")
        elif module == "ssm":
            arn = f"arn:aws:ssm:{region}:{acct}:parameter{name}"
        elif module == "sqs" and kind == "Queue":
            # A queue's id is its URL and its ARN has no resource type (SQS Developer
            # Guide, "Amazon SQS resource ARN format": arn:aws:sqs:<region>:<account>:<name>).
            arn = f"arn:aws:sqs:{region}:{acct}:{name}"
            resource_id = f"https://sqs.{region}.amazonaws.com/{acct}/{name}"
            out["url"] = resource_id
        elif module == "sqs":
            resource_id = str(inputs.get("queueUrl") or name)
        elif module == "eks" and kind == "AccessEntry":
            # Terraform's id is "<cluster>:<principal ARN>"; the entry's ARN names both.
            principal = str(inputs.get("principalArn", ""))
            cluster = str(inputs.get("clusterName", ""))
            resource_id = f"{cluster}:{principal}"
            arn = f"arn:aws:eks:{region}:{acct}:access-entry/{cluster}/role/{acct}/{_uuid(key)}"
            out.update(
                accessEntryArn=arn,
                kubernetesGroups=list(inputs.get("kubernetesGroups") or []),
                userName="system:node:{{EC2PrivateDNSName}}",
            )

        out.setdefault("arn", arn)
        out.setdefault("id", resource_id)
        # Auto-named resources get their physical name back, as the provider reports it.
        if module not in ("s3",) and "name" not in out:
            out["name"] = name
        return resource_id, out

    def _default_tags(self, provider: str | None) -> dict[str, str]:
        raw = self.providers.get(provider or "", {}).get("defaultTags")
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError:
                return {}
        return dict((raw or {}).get("tags") or {})

    # ---- invokes -------------------------------------------------------------------------

    def call(self, args: MockCallArgs) -> dict[str, Any]:  # type: ignore[override]
        answer = self._invokes.get(args.token)
        if answer is None:
            raise UnknownInvokeError(
                f"the simulated cloud cannot answer invoke {args.token!r}; "
                "add it to aistack.engine.cloud.SimulatedCloud (known: "
                + ", ".join(sorted(self._invokes))
                + ")"
            )
        return answer(dict(args.args), args.provider)

    def _aws_caller_identity(self, args: dict[str, Any], provider: str) -> dict[str, Any]:
        return {
            "accountId": ACCOUNT_ID,
            "arn": f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/aistack-preview/session",
            "userId": "AROASIMULATEDPREVIEW:session",
            "id": ACCOUNT_ID,
        }

    def _aws_region(self, args: dict[str, Any], provider: str) -> dict[str, Any]:
        region = self.aws_region(args, provider)
        return {
            "name": region,
            "region": region,
            "id": region,
            "description": region,
            "endpoint": f"ec2.{region}.amazonaws.com",
        }

    def _aws_partition(self, args: dict[str, Any], provider: str) -> dict[str, Any]:
        return {
            "partition": "aws",
            "dnsSuffix": "amazonaws.com",
            "reverseDnsPrefix": "com.amazonaws",
            "id": "aws",
        }

    def _aws_zones(self, args: dict[str, Any], provider: str) -> dict[str, Any]:
        region = self.aws_region(args, provider)
        from aistack import catalog

        names = list(catalog.region_zones("aws", region)) or [f"{region}{s}" for s in "abc"]
        return {
            "names": names,
            "zoneIds": [_zone_id(zone) for zone in names],
            "groupNames": [region] * len(names),
            "id": region,
            "region": region,
            "state": "available",
        }

    def _aws_offerings(self, args: dict[str, Any], provider: str) -> dict[str, Any]:
        """Which zones offer which instance types, answered from the GPU catalog."""
        from aistack import catalog

        region = self.aws_region(args, provider)
        filters = {f["name"]: list(f["values"]) for f in args.get("filters") or []}
        location_type = args.get("locationType", "region")
        wanted = filters.get("instance-type")
        types = wanted or [t.name for t in catalog.instance_types("aws")]
        rows: list[tuple[str, str]] = []
        for type_name in types:
            known = catalog.find("aws", type_name)
            if known is None or not known.offered_in(region):
                continue
            if location_type == "availability-zone":
                rows += [(type_name, zone) for zone in known.zones(region)]
            else:
                rows.append((type_name, region))
        if "location" in filters:
            rows = [row for row in rows if row[1] in filters["location"]]
        return {
            "instanceTypes": [row[0] for row in rows],
            "locations": [row[1] for row in rows],
            "locationTypes": [location_type] * len(rows),
            "id": region,
            "region": region,
        }

    def _aws_ssm_parameter(self, args: dict[str, Any], provider: str) -> dict[str, Any]:
        name = str(args["name"])
        region = self.aws_region(args, provider)
        # Public AMI parameters (.../image_id, .../ami-id) resolve to an image id, as on AWS;
        # any other parameter to a value that says where it came from.
        is_image = "ami" in name.lower() or name.endswith("image_id")
        value = f"ami-{_digest(name, region)}" if is_image else f"simulated-ssm:{name}"
        return {
            "name": name,
            "value": value,
            "insecureValue": value,
            "type": "String",
            "version": 1,
            "arn": f"arn:aws:ssm:{region}:{ACCOUNT_ID}:parameter{name}",
            "id": name,
            "withDecryption": bool(args.get("withDecryption", True)),
        }

    #: The simulated account is new: GPU vCPU quotas start at zero, as they often do.
    service_quotas: dict[str, float] = {}
    #: The simulated GCP project is new: GPU quotas and GPUS-ALL-REGIONS start at zero.
    #: Keys: `<quota id>` (its default), `<quota id>/<region>`, `<quota id>/<region>/<gpu
    #: family>` (engine.gcp_cloud.quotas answers getSQuotaInfo and QuotaPreference from these).
    gcp_quotas: dict[str, float] = {}

    def _aws_service_quota(self, args: dict[str, Any], provider: str) -> dict[str, Any]:
        region = self.aws_region(args, provider)
        code = str(args.get("quotaCode", ""))
        service = str(args.get("serviceCode", ""))
        value = float(self.service_quotas.get(code, 0.0))
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
            "arn": f"arn:aws:servicequotas:{region}:{ACCOUNT_ID}:{service}/{code}",
            "id": f"{service}/{code}",
            "region": region,
        }

    def _gcp_client_config(self, args: dict[str, Any], provider: str) -> dict[str, Any]:
        return {
            "project": self.gcp_project(args, provider),
            "region": self.gcp_region(args, provider),
            "zone": f"{self.gcp_region(args, provider)}-a",
            "accessToken": "simulated",
            "id": "client-config",
        }

    def _gcp_zones(self, args: dict[str, Any], provider: str) -> dict[str, Any]:
        from aistack import catalog

        region = self.gcp_region(args, provider)
        names = list(catalog.region_zones("gcp", region)) or [f"{region}-{s}" for s in "abc"]
        return {
            "names": names,
            "region": region,
            "project": self.gcp_project(args, provider),
            "id": region,
        }


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


def _aws_module_and_kind(token: str) -> tuple[str, str]:
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

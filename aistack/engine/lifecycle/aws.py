"""How AWS keeps names between deployments. Names are scoped by the account and region,
IAM's and the account-wide services' by the account, S3 bucket names by the partition."""

from __future__ import annotations

import json

from aistack.engine.context import ACCOUNT_ID
from aistack.engine.graph import Resource
from aistack.engine.lifecycle.model import CloudName, Fate, Meets, NameRule

__all__ = ["RULES"]

#: Kinds whose names are unique in the account, not per region.
_ACCOUNT_WIDE = ("aws:iam/", "aws:budgets/", "aws:costexplorer/", "aws:organizations/")


def _named(field: str = "name"):
    def identity(resource: Resource, project: str, region: str) -> CloudName | None:
        name = resource.inputs.get(field)
        if not isinstance(name, str) or not name:
            return None
        if resource.type.startswith(_ACCOUNT_WIDE):
            return CloudName(resource.type, (ACCOUNT_ID,), name)
        where = str(resource.inputs.get("region") or region)
        return CloudName(resource.type, (ACCOUNT_ID, where), name)

    return identity


def _kind(token: str, field: str = "name", **rule: object) -> NameRule:
    return NameRule(token, _named(field), **rule)  # type: ignore[arg-type]


def _quota(resource: Resource, project: str, region: str) -> CloudName:
    key = {f: resource.inputs.get(f) for f in ("serviceCode", "quotaCode")}
    where = str(resource.inputs.get("region") or region)
    return CloudName(resource.type, (ACCOUNT_ID, where), json.dumps(key, sort_keys=True))


RULES: tuple[NameRule, ...] = (
    _kind("aws:ecr/repository:Repository", source="ECR: a repository name is unique per region"),
    _kind("aws:lambda/function:Function", source="Lambda: a function name is unique per region"),
    _kind("aws:sqs/queue:Queue", source="SQS: a queue name is unique per region"),
    _kind("aws:sns/topic:Topic", source="SNS: a topic name is unique per region"),
    _kind("aws:cloudtrail/trail:Trail", source="CloudTrail: a trail name is unique per region"),
    _kind("aws:cloudwatch/logGroup:LogGroup", source="CloudWatch Logs: a group name is unique"),
    _kind(
        "aws:cloudwatch/eventRule:EventRule", source="EventBridge: a rule name is unique per bus"
    ),
    _kind("aws:cloudwatch/metricAlarm:MetricAlarm", source="CloudWatch: alarm names are unique"),
    _kind(
        "aws:cloudwatch/dashboard:Dashboard", "dashboardName", source="dashboard names are unique"
    ),
    _kind("aws:budgets/budget:Budget", source="Budgets: a budget name is unique in the account"),
    _kind("aws:iam/role:Role", source="IAM: role names are unique in the account"),
    _kind("aws:iam/policy:Policy", source="IAM: policy names are unique in the account"),
    _kind("aws:iam/instanceProfile:InstanceProfile", source="IAM: profile names are unique"),
    _kind("aws:wafv2/webAcl:WebAcl", source="WAF: a web ACL name is unique per scope and region"),
    _kind("aws:lb/loadBalancer:LoadBalancer", source="ELB: load balancer names are unique"),
    _kind("aws:lb/targetGroup:TargetGroup", source="ELB: target group names are unique"),
    _kind("aws:batch/computeEnvironment:ComputeEnvironment", source="Batch: names are unique"),
    _kind("aws:batch/jobQueue:JobQueue", source="Batch: names are unique"),
    _kind("aws:kms/alias:Alias", source="KMS: an alias name is unique per region"),
    _kind("aws:ssm/parameter:Parameter", source="SSM: a parameter name is unique per region"),
    _kind(
        "aws:secretsmanager/secret:Secret",
        on_delete=Fate.SOFT_DELETED,
        hold_days=30,
        source="Secrets Manager: a deleted secret's name is held for its recovery window",
    ),
    NameRule(
        "aws:s3/bucket:Bucket",
        lambda r, p, g: (
            CloudName(r.type, ("aws",), r.inputs["bucket"])
            if isinstance(r.inputs.get("bucket"), str)
            else None
        ),
        source="S3: bucket names are unique in the partition",
    ),
    NameRule(
        "aws:costexplorer/costAllocationTag:CostAllocationTag",
        lambda r, p, g: CloudName(r.type, (ACCOUNT_ID,), str(r.inputs.get("tagKey"))),
        meets_live=Meets.ADOPT,
        binding=True,
        source="Billing: activating an active tag is a no-op",
    ),
    NameRule(
        "aws:servicequotas/serviceQuota:ServiceQuota",
        _quota,
        meets_live=Meets.ADOPT,
        binding=True,
        on_delete=Fate.KEPT,
        source="terraform-provider-aws service_quota.go: create reads the quota in force "
        "and requests only an increase; delete only forgets",
    ),
)

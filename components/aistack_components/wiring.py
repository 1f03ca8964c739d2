"""Stand-ins for the component objects a Python caller wires, built from ids and ARNs.

Component objects cannot cross languages (pulumi/pulumi#18484: references to components are
"only supported for provider components"), so a TypeScript or YAML program passes the ids
and ARNs another component exported, and the adapter hands the Python component these
objects in place of a `Network`, a `WorkloadIdentity` or a `DatasetBucket`. Each offers
only what the components read from the real one.
"""

from typing import Any

import pulumi
import pulumi_aws as aws

from aistack.aws import _perms
from aistack.aws._base import policy_output
from aistack.aws.dataset_bucket import grant_statements

__all__ = ["BucketArn", "BucketRef", "IdentityArns", "NetworkIds"]


class NetworkIds:
    """A network known by its subnet and security group ids per tier (and, for a load
    balancer, its VPC, its ALB subnets and security group and its address range). Its
    planned zones are not known here: `zones()` is empty, so the checks that compare them
    with an instance type's offers are skipped."""

    def __init__(
        self,
        subnet_ids: dict[str, pulumi.Input[list[str]]],
        security_group_ids: dict[str, pulumi.Input[str]],
        *,
        vpc_id: pulumi.Input[str] | None = None,
        alb_subnet_ids: pulumi.Input[list[str]] | None = None,
        alb_security_group_id: pulumi.Input[str] | None = None,
        alb_internal: bool = True,
        cidr_block: str | None = None,
    ) -> None:
        self._subnet_ids = subnet_ids
        self._security_group_ids = security_group_ids
        self.vpc_id = vpc_id
        self.alb_subnet_ids = alb_subnet_ids
        self.alb_security_group_id = alb_security_group_id
        self.alb_internal = alb_internal
        self.cidr_block = cidr_block

    def zones(self, tier: str) -> list[str]:
        return []

    def subnet_ids(self, tier: str) -> pulumi.Input[list[str]]:
        return self._subnet_ids[tier]

    def security_group_id(self, tier: str) -> pulumi.Input[str]:
        return self._security_group_ids[tier]


class _Role:
    """What `WorkloadIdentity.role()` gives: `.arn`, and `.id`, which for an IAM role is its
    name, the last segment of its ARN (`arn:aws:iam::<account>:role/<path>/<name>`)."""

    def __init__(self, arn: pulumi.Input[str], workload: str) -> None:
        self.arn = pulumi.Output.from_input(arn)
        self.id = self.arn.apply(lambda value: value.rsplit("/", 1)[-1])
        self._name = workload


class _InstanceProfile:
    def __init__(self, arn: pulumi.Input[str]) -> None:
        self.arn = pulumi.Output.from_input(arn)


class IdentityArns:
    """A workload identity known by its role and instance profile ARNs per workload."""

    def __init__(
        self,
        role_arns: dict[str, pulumi.Input[str]],
        instance_profile_arns: dict[str, pulumi.Input[str]],
    ) -> None:
        self._roles = {workload: _Role(arn, workload) for workload, arn in role_arns.items()}
        self._profiles = {w: _InstanceProfile(arn) for w, arn in instance_profile_arns.items()}

    def role(self, workload: str) -> _Role:
        return self._roles[workload]

    def instance_profile(self, workload: str) -> _InstanceProfile:
        return self._profiles[workload]


class _Namespace:
    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


class BucketRef:
    """A DatasetBucket known by its name, ARN and key ARN.

    Its kind and region cannot be checked here (they live in the other program), so the
    adapter states them: the kind the wiring names, the region of the component it serves.
    Grants are created under `owner` (the component using the bucket, set before it builds
    its children), named `<owner's grant name>-<verb>-<label>`, with the same statements
    `DatasetBucket.grant_read`/`grant_write` write (tests/components compare them).
    """

    def __init__(
        self,
        label: str,
        *,
        kind: str,
        region: str,
        bucket_name: pulumi.Input[str],
        bucket_arn: pulumi.Input[str],
        kms_key_arn: pulumi.Input[str] | None,
        dataset_version: str | None = None,
    ) -> None:
        self.label = label
        self.region = region
        dataset = _Namespace(version=dataset_version) if dataset_version else None
        self.args = _Namespace(kind=kind, region=region, dataset=dataset)
        self.bucket_name = pulumi.Output.from_input(bucket_name)
        self.bucket = _Namespace(id=self.bucket_name, arn=pulumi.Output.from_input(bucket_arn))
        self.kms_key_arn = pulumi.Output.from_input(kms_key_arn) if kms_key_arn else None
        self.owner: pulumi.Resource | None = None

    def grant_read(self, role: Any, *, prefix: str = "", name: str = "") -> aws.iam.RolePolicy:
        return self._grant(role, "read", prefix, _perms.S3_READ, _perms.KMS_READ, name)

    def grant_write(self, role: Any, *, prefix: str = "", name: str = "") -> aws.iam.RolePolicy:
        return self._grant(
            role, "write", prefix, _perms.S3_READ + _perms.S3_WRITE, _perms.KMS_WRITE, name
        )

    def _grant(
        self,
        role: Any,
        verb: str,
        prefix: str,
        object_actions: tuple[str, ...],
        kms_actions: tuple[str, ...],
        name: str,
    ) -> aws.iam.RolePolicy:
        # The same statements DatasetBucket writes, from the bucket's ARN.
        statements = grant_statements(
            self.bucket.arn,
            verb,
            prefix,
            object_actions,
            kms_actions,
            kms_key_arn=self.kms_key_arn,
            region=self.region,
        )
        return aws.iam.RolePolicy(
            f"{name}-{verb}-{self.label}",
            role=role.id,
            policy=policy_output(*statements),
            opts=pulumi.ResourceOptions(parent=self.owner),
        )


class BucketArn:
    """A DatasetBucket known by its ARN only: what `AuditTrail` reads from its data buckets."""

    def __init__(self, arn: pulumi.Input[str]) -> None:
        self.bucket_arn = pulumi.Output.from_input(arn)

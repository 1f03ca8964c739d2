"""The AWS shapes one component reads from another (see `aistack.contracts.components`):
what `aws.TrainingPool` and `aws.InferenceTier` need of a network and a workload identity,
whether an `aws.Network` and an `aws.WorkloadIdentity` or stand-ins built from their ids.

Typed with pulumi's Input/Output under TYPE_CHECKING only: at run time nothing is imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from aistack.contracts.components import TieredNetwork

if TYPE_CHECKING:
    import pulumi

__all__ = ["AwsInstanceProfile", "AwsNetwork", "AwsRole", "AwsWorkloadIdentity"]


class AwsNetwork(TieredNetwork, Protocol):
    """A VPC's tiers: their subnets and security groups (and the load balancer's)."""

    @property
    def vpc_id(self) -> pulumi.Input[str] | None: ...

    def subnet_ids(self, tier: str) -> pulumi.Input[Sequence[pulumi.Input[str]]]: ...

    def security_group_id(self, tier: str) -> pulumi.Input[str]: ...


class AwsRole(Protocol):
    """An IAM role: its ARN, its id (for a role, its name) and its logical name, which
    names the grants made to it (a pulumi Resource's `_name`; a stand-in sets it too)."""

    _name: str

    @property
    def arn(self) -> pulumi.Output[str]: ...

    @property
    def id(self) -> pulumi.Output[str]: ...


class AwsInstanceProfile(Protocol):
    @property
    def arn(self) -> pulumi.Output[str]: ...


class AwsWorkloadIdentity(Protocol):
    """Roles and instance profiles by workload (`training`, `training-job`, `inference`)."""

    def role(self, workload: str) -> AwsRole: ...

    def instance_profile(self, workload: str) -> AwsInstanceProfile: ...

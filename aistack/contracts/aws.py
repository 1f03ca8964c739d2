"""The AWS vocabulary: the tags components write and rules, queries and cost read, and the
shapes one component reads from another (see `aistack.contracts.components`):
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

__all__ = [
    "ALARM_KIND_TAG",
    "APPROVED_BY_TAG",
    "AwsInstanceProfile",
    "AwsNetwork",
    "AwsRole",
    "AwsServingNetwork",
    "AwsWorkloadIdentity",
    "FALLBACK_TAG",
    "GATEWAY_CACHE_TAG",
    "LOG_CLASSIFICATION_TAG",
    "LOG_RETENTION_TAG",
    "MAX_SERVING_NODES",
    "MODEL_NAME_TAG",
    "MODEL_VERSION_TAG",
    "NETWORK_TIER_TAG",
    "PERSONAL_DATA_TAG",
    "PLAINTEXT_HTTP_TAG",
    "REQUEST_LOGGING_TAG",
    "RUNTIME_TAG",
    "SERVING_IMAGE_TAG",
    "STANDBY_TAG",
    "TIER_TAG",
    "TRAFFIC_WEIGHT_TAG",
]


class AwsNetwork(TieredNetwork, Protocol):
    """A VPC's tiers: their subnets and security groups (and the load balancer's)."""

    @property
    def vpc_id(self) -> pulumi.Input[str] | None: ...

    def subnet_ids(self, tier: str) -> pulumi.Input[Sequence[pulumi.Input[str]]]: ...

    def security_group_id(self, tier: str) -> pulumi.Input[str]: ...


class AwsServingNetwork(AwsNetwork, Protocol):
    """What aws.InferenceTier also reads: the load balancer's subnets and security group.
    (Its CIDR block, its plan and whether the balancer is internal are read when the
    network has them: a stand-in built from ids may not.)"""

    @property
    def alb_subnet_ids(self) -> pulumi.Input[Sequence[pulumi.Input[str]]]: ...

    @property
    def alb_security_group_id(self) -> pulumi.Input[str] | None: ...


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


#: The most nodes one serving version may have; a bigger fleet is a deliberate, separate
#: decision (aws.InferenceTier refuses more; rule AIS-S3-02 judges any serving group by it).
MAX_SERVING_NODES = 100

# ---- tags ---------------------------------------------------------------------------------
# What aws.InferenceTier, aws.Network and aws.DatasetBucket write on their resources and the
# rules, queries and estimators read: defined once, here.

#: On every resource of an inference tier: which tier (its logical name).
TIER_TAG = "aistack:inference-tier"
#: On each version's launch template and group: the model and version it serves (S7), its
#: share of traffic and standby (S6), who approved it (G3).
MODEL_NAME_TAG = "aistack:model-name"
MODEL_VERSION_TAG = "aistack:model-version"
TRAFFIC_WEIGHT_TAG = "aistack:traffic-weight"
STANDBY_TAG = "aistack:standby"
APPROVED_BY_TAG = "aistack:approved-by"
#: The serving runtime and image by digest (S2, E1).
RUNTIME_TAG = "aistack:runtime"
SERVING_IMAGE_TAG = "aistack:serving-image"
#: The gateway's cache (S4), request logging and its log's classification and retention (G2).
GATEWAY_CACHE_TAG = "aistack:gateway-cache"
REQUEST_LOGGING_TAG = "aistack:request-logging"
LOG_CLASSIFICATION_TAG = "aistack:log-data-classification"
LOG_RETENTION_TAG = "aistack:log-retention-days"
#: What the tier answers when a version fails (G5).
FALLBACK_TAG = "aistack:fallback"
#: On a load balancer listener that serves plain HTTP by declared choice (D5).
PLAINTEXT_HTTP_TAG = "aistack:plaintext-http"
#: On each alarm: what it watches (G4's model-quality alarm among them).
ALARM_KIND_TAG = "aistack:alarm-kind"
#: On each subnet and security group of aws.Network: its tier (S1).
NETWORK_TIER_TAG = "aistack:network-tier"
#: On a dataset bucket: whether it holds personal data (D5).
PERSONAL_DATA_TAG = "aistack:personal-data"

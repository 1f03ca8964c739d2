"""Typed models of the Karpenter custom resources `aws.KarpenterGpuPool` renders.

Written from the upstream CRDs of the pinned release, kept unmodified under
`aistack/scan/data/crds/karpenter-v1.14.1/` (aws/karpenter-provider-aws tag v1.14.1,
`pkg/apis/crds/karpenter.sh_nodepools.yaml` and `karpenter.k8s.aws_ec2nodeclasses.yaml`).
Only the fields aistack sets are modelled; every model forbids other fields, so a misspelt
or removed field is a `ConfigError` here instead of being pruned silently by the API server
(which keeps the object and drops the field). Patterns, enums and bounds are the CRD's
own; a few CEL rules (`x-kubernetes-validations`, which a JSON-schema validator does not
run) are encoded as validators, each naming its rule. `model_dump(by_alias=True,
exclude_none=True)` gives the object's JSON; tests validate every rendered object against
the kept CRD with `aistack.scan.crd_schemas.validate_custom_resource`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from aistack.config import AistackModel

__all__ = [
    "Budget",
    "Disruption",
    "Ebs",
    "BlockDeviceMapping",
    "EC2NodeClassSpec",
    "KARPENTER_VERSION",
    "MetadataOptions",
    "NODECLASS_API_VERSION",
    "NODEPOOL_API_VERSION",
    "NodeClassRef",
    "NodePoolSpec",
    "NodeSelectorRequirement",
    "SelectorTerm",
    "AmiSelectorTerm",
    "Taint",
    "Template",
    "TemplateMetadata",
    "TemplateSpec",
]

#: The Karpenter release whose CRDs aistack renders and validates against.
KARPENTER_VERSION = "v1.14.1"
NODEPOOL_API_VERSION = "karpenter.sh/v1"
NODECLASS_API_VERSION = "karpenter.k8s.aws/v1"

# The CRD's patterns, verbatim.
_DURATION = r"^(([0-9]+(s|m|h))+|Never)$"
_GRACE = r"^([0-9]+(s|m|h))+$"
_QUALIFIED_KEY = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?"
    r"([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$"
)
_LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
_VOLUME_SIZE = (
    r"^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|"
    r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|"
    r"([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$"
)
_NODES = r"^((100|[0-9]{1,2})%|[0-9]+)$"


# ---- NodePool (karpenter.sh/v1) --------------------------------------------------------------


class NodeSelectorRequirement(AistackModel):
    key: str = Field(pattern=_QUALIFIED_KEY, max_length=316)
    operator: Literal["Gte", "Lte", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: tuple[str, ...] | None = None
    min_values: int | None = Field(None, ge=1, le=50)

    @field_validator("key")
    @classmethod
    def _not_restricted(cls, key: str) -> str:
        # CEL on requirements[].key: `karpenter.sh/nodepool` and `kubernetes.io/hostname`
        # are restricted (the controller sets them).
        if key in ("karpenter.sh/nodepool", "kubernetes.io/hostname"):
            raise ValueError(f"label {key!r} is restricted by the NodePool CRD")
        return key


class Taint(AistackModel):
    key: str = Field(pattern=_QUALIFIED_KEY)
    value: str | None = Field(None, pattern=_QUALIFIED_KEY)
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class NodeClassRef(AistackModel):
    group: str = Field(pattern=r"^[^/]*$", min_length=1)
    kind: str = Field(min_length=1)
    name: str = Field(min_length=1)


class TemplateSpec(AistackModel):
    node_class_ref: NodeClassRef
    requirements: tuple[NodeSelectorRequirement, ...] = Field(max_length=100)
    taints: tuple[Taint, ...] | None = None
    expire_after: str | None = Field(None, pattern=_DURATION)
    termination_grace_period: str | None = Field(None, pattern=_GRACE)


class TemplateMetadata(AistackModel):
    labels: dict[str, str] | None = Field(None, max_length=100)
    annotations: dict[str, str] | None = None

    @field_validator("labels")
    @classmethod
    def _labels(cls, labels: dict[str, str] | None) -> dict[str, str] | None:
        import re

        for key, value in (labels or {}).items():
            if len(value) > 63 or not re.fullmatch(_LABEL_VALUE, value):
                raise ValueError(f"label {key}={value!r} is not a valid label value")
            # CEL on template.metadata.labels: the karpenter.sh domain is the controller's.
            domain = key.split("/", 1)[0] if "/" in key else ""
            if domain.endswith("karpenter.sh") and key != "karpenter.sh/capacity-type":
                raise ValueError(f'label domain "karpenter.sh" is restricted ({key!r})')
        return labels


class Template(AistackModel):
    metadata: TemplateMetadata | None = None
    spec: TemplateSpec


class Budget(AistackModel):
    nodes: str = Field(pattern=_NODES)
    reasons: tuple[Literal["Underutilized", "Empty", "Drifted"], ...] | None = None
    schedule: str | None = None
    duration: str | None = Field(None, pattern=r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$")


class Disruption(AistackModel):
    consolidation_policy: Literal["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"] | None = None
    consolidate_after: str = Field(pattern=_DURATION)
    budgets: tuple[Budget, ...] | None = Field(None, max_length=50)


class NodePoolSpec(AistackModel):
    template: Template
    disruption: Disruption | None = None
    #: Resource name -> quantity (the CRD's int-or-string; strings, as the docs advise
    #: against integers "to avoid GitOps skew").
    limits: dict[str, str] | None = None
    weight: int | None = Field(None, ge=1, le=100)


# ---- EC2NodeClass (karpenter.k8s.aws/v1) -----------------------------------------------------


class SelectorTerm(AistackModel):
    """A subnet or security-group selector term: by tags or by id."""

    tags: dict[str, str] | None = None
    id: str | None = None

    @field_validator("tags")
    @classmethod
    def _no_empty(cls, tags: dict[str, str] | None) -> dict[str, str] | None:
        # CEL: "empty tag keys or values aren't supported".
        if tags is not None and any(not k or not v for k, v in tags.items()):
            raise ValueError("empty tag keys or values aren't supported")
        return tags


class AmiSelectorTerm(AistackModel):
    alias: str = Field(max_length=30)

    @field_validator("alias")
    @classmethod
    def _family_at_version(cls, alias: str) -> str:
        # CEL on amiSelectorTerms[].alias: `family@version`, family one of the EKS-optimized.
        family, _, version = alias.partition("@")
        if not version or family not in (
            "al2",
            "al2023",
            "bottlerocket",
            "windows2019",
            "windows2022",
            "windows2025",
        ):
            raise ValueError(f"{alias!r} must be 'family@version' with a supported family")
        return alias


class Ebs(AistackModel):
    volume_size: str = Field(pattern=_VOLUME_SIZE)
    volume_type: Literal["standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"]
    encrypted: bool
    delete_on_termination: bool
    kms_key_id: str | None = Field(None, alias="kmsKeyID")


class BlockDeviceMapping(AistackModel):
    device_name: str
    ebs: Ebs
    root_volume: bool


class MetadataOptions(AistackModel):
    http_endpoint: Literal["enabled", "disabled"]
    http_protocol_ipv6: Literal["enabled", "disabled"] = Field(alias="httpProtocolIPv6")
    http_put_response_hop_limit: int = Field(ge=1, le=64)
    http_tokens: Literal["required", "optional"]


class EC2NodeClassSpec(AistackModel):
    role: str = Field(min_length=1, max_length=64)
    ami_selector_terms: tuple[AmiSelectorTerm, ...] = Field(min_length=1, max_length=30)
    subnet_selector_terms: tuple[SelectorTerm, ...] = Field(min_length=1, max_length=30)
    security_group_selector_terms: tuple[SelectorTerm, ...] = Field(min_length=1, max_length=30)
    instance_store_policy: Literal["RAID0"] | None = None
    metadata_options: MetadataOptions
    block_device_mappings: tuple[BlockDeviceMapping, ...] = Field(max_length=50)
    associate_public_ip_address: bool | None = Field(None, alias="associatePublicIPAddress")
    detailed_monitoring: bool | None = None
    tags: dict[str, str] | None = None

    @field_validator("tags")
    @classmethod
    def _unrestricted_tags(cls, tags: dict[str, str] | None) -> dict[str, str] | None:
        # CEL on spec.tags: Karpenter owns these keys.
        for key in tags or {}:
            if (
                not key
                or key.startswith("kubernetes.io/cluster")
                or key
                in (
                    "eks:eks-cluster-name",
                    "karpenter.sh/nodepool",
                    "karpenter.sh/nodeclaim",
                    "karpenter.k8s.aws/ec2nodeclass",
                )
            ):
                raise ValueError(f"tag {key!r} is restricted by the EC2NodeClass CRD")
        return tags

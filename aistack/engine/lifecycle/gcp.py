"""How Google Cloud keeps names between deployments: one rule per resource kind, with its
source (the Terraform Google provider that pulumi-gcp wraps, at commit 0a67500, and
Google's documentation). Every name is scoped by the project, and by its location where
the API scopes it so."""

from __future__ import annotations

import json

from aistack.engine.graph import Resource
from aistack.engine.lifecycle.model import CloudName, Fate, Meets, NameRule

__all__ = ["RULES"]


def _named(field: str, *, located: bool = True, parent: str | None = None):
    def identity(resource: Resource, project: str, region: str) -> CloudName | None:
        name = resource.inputs.get(field)
        if not isinstance(name, str) or not name:
            return None
        scope = [str(resource.inputs.get("project") or project)]
        if located:
            scope.append(
                str(
                    resource.inputs.get("location")
                    or resource.inputs.get("region")
                    or resource.inputs.get("zone")
                    or region
                )
            )
        if parent is not None:
            scope.append(str(resource.inputs.get(parent, "")))
        return CloudName(resource.type, tuple(scope), name)

    return identity


def _binding(*fields: str):
    """A binding two stacks can both declare: named by what it binds."""

    def identity(resource: Resource, project: str, region: str) -> CloudName:
        key = {f: resource.inputs.get(f) for f in fields}
        return CloudName(
            resource.type,
            (str(resource.inputs.get("project") or project),),
            json.dumps(key, sort_keys=True),
        )

    return identity


def _quota(resource: Resource, project: str, region: str) -> CloudName:
    # "There is only one QuotaPreference resource for a quota value targeting a unique set
    # of dimensions" (Cloud Quotas API, QuotaPreference): the quota and its dimensions
    # name it, whatever id the create passes.
    dimensions = resource.inputs.get("dimensions") or {}
    return CloudName(
        resource.type,
        (str(resource.inputs.get("parent") or f"projects/{project}"),),
        json.dumps({"quotaId": resource.inputs.get("quotaId"), **dimensions}, sort_keys=True),
    )


def _service_fate(resource: Resource) -> Fate:
    return Fate.GONE if resource.inputs.get("disableOnDestroy", True) else Fate.KEPT


RULES: tuple[NameRule, ...] = (
    NameRule(
        "gcp:logging/projectBucketConfig:ProjectBucketConfig",
        _named("bucketId"),
        on_delete=Fate.SOFT_DELETED,
        hold_days=7,
        # resource_logging_bucket_config.go `resourceLoggingBucketConfigAcquireOrCreate`:
        # GET the id, PATCH what it finds; a DELETE_REQUESTED bucket refuses the PATCH
        # ("Buckets must be in an ACTIVE state to be modified",
        # GoogleCloudPlatform/cloud-foundation-fabric#1898).
        meets_live=Meets.ADOPT,
        meets_soft_deleted=Meets.CONFLICT,
        source="Cloud Logging keeps a deleted bucket DELETE_REQUESTED for 7 days; the "
        "provider's acquire-or-create PATCHes it and is refused",
    ),
    NameRule(
        "gcp:projects/iAMCustomRole:IAMCustomRole",
        _named("roleId", located=False),
        on_delete=Fate.SOFT_DELETED,
        hold_days=7,
        meets_soft_deleted=Meets.UNDELETE,
        source="resource_google_project_iam_custom_role.go: an active role 'already exists "
        "and must be imported'; a soft-deleted one is undeleted",
    ),
    NameRule(
        "gcp:serviceaccount/account:Account",
        _named("accountId", located=False),
        source="IAM: a service account id is unique in its project (409 on create)",
    ),
    NameRule(
        "gcp:iam/workloadIdentityPool:WorkloadIdentityPool",
        _named("workloadIdentityPoolId", located=False),
        on_delete=Fate.SOFT_DELETED,
        hold_days=30,
        source="IAM: a deleted pool can be undeleted for 30 days and its id is not "
        "reusable meanwhile (cloud.google.com/iam/docs/manage-workload-identity-pools-providers)",
    ),
    NameRule(
        "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider",
        _named("workloadIdentityPoolProviderId", located=False, parent="workloadIdentityPoolId"),
        on_delete=Fate.SOFT_DELETED,
        hold_days=30,
        source="IAM: a deleted provider is kept 30 days, can be undeleted, and its id is "
        "not reusable meanwhile (cloud.google.com/iam/docs/manage-workload-identity-pools-"
        "providers)",
    ),
    NameRule(
        "gcp:cloudquota/sQuotaPreference:SQuotaPreference",
        _quota,
        on_delete=Fate.KEPT,
        binding=True,
        source="Cloud Quotas: preferences cannot be deleted, and there is one per quota and "
        "dimensions (resource_cloud_quotas_quota_preference.go: delete only forgets)",
    ),
    NameRule(
        "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager",
        _named("name"),
        source="Compute Engine: a group name is unique in its region (409)",
    ),
    NameRule(
        "gcp:container/cluster:Cluster",
        _named("name"),
        source="GKE: a cluster name is unique in its location",
    ),
    NameRule(
        "gcp:container/nodePool:NodePool",
        _named("name", parent="cluster"),
        source="GKE: a node pool name is unique in its cluster",
    ),
    NameRule(
        "gcp:artifactregistry/repository:Repository",
        _named("repositoryId"),
        source="Artifact Registry: a repository id is unique in its location",
    ),
    NameRule(
        "gcp:logging/projectExclusion:ProjectExclusion",
        _named("name", located=False),
        source="Logging: an exclusion id is unique in the project",
    ),
    NameRule(
        "gcp:cloudfunctionsv2/function:Function",
        _named("name"),
        source="Cloud Functions: a function name is unique in its location",
    ),
    NameRule(
        "gcp:workbench/instance:Instance",
        _named("name"),
        source="Workbench: an instance name is unique in its location",
    ),
    NameRule(
        "gcp:storage/bucket:Bucket",
        lambda r, p, g: (
            CloudName(r.type, ("global",), r.inputs["name"])
            if isinstance(r.inputs.get("name"), str)
            else None
        ),
        source="Cloud Storage: bucket names are global",
    ),
    NameRule(
        "gcp:kms/keyRing:KeyRing",
        _named("name"),
        on_delete=Fate.KEPT,
        source="Cloud KMS: key rings cannot be deleted",
    ),
    NameRule(
        "gcp:kms/cryptoKey:CryptoKey",
        _named("name", located=False, parent="keyRing"),
        on_delete=Fate.KEPT,
        source="Cloud KMS: keys cannot be deleted (destroy schedules their versions)",
    ),
    NameRule(
        "gcp:projects/service:Service",
        _binding("service"),
        meets_live=Meets.ADOPT,
        binding=True,
        fate_of=_service_fate,
        source="Service Usage: enabling an enabled API is a no-op",
    ),
    NameRule(
        "gcp:projects/iAMMember:IAMMember",
        _binding("role", "member", "condition"),
        meets_live=Meets.ADOPT,
        binding=True,
        source="IAM: a non-authoritative member is one binding; deleting it removes it for "
        "every declarer",
    ),
    NameRule(
        "gcp:projects/iAMAuditConfig:IAMAuditConfig",
        _binding("service"),
        meets_live=Meets.ADOPT,
        binding=True,
        source="IAM: an audit config is authoritative for its service in the project",
    ),
)

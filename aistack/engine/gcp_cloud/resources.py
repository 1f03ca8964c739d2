"""The simulated GCP's answer to one `gcp:` registration: `resource()` sets what every type
shares (project, the provider-side `deletionPolicy` default, effective labels), hands the
type to the module that knows its API, and names the rest by the generic
`projects/<p>/<location>/<collection>/<name>` path. IAM member ids are built here, for
every type that has them."""

from __future__ import annotations

from typing import Any

from pulumi.runtime import MockResourceArgs

from aistack.engine.context import SimContext
from aistack.engine.gcp_cloud.api_enablement import SERVICE
from aistack.engine.gcp_cloud.artifact_registry import registry_resource
from aistack.engine.gcp_cloud.budget_guard import budget_guard_resource
from aistack.engine.gcp_cloud.compute_engine import COMPUTE_ENGINE_TYPES, compute_engine_resource
from aistack.engine.gcp_cloud.compute_network import network_resource
from aistack.engine.gcp_cloud.container import container_resource
from aistack.engine.gcp_cloud.identity import check_principals, identity_resource
from aistack.engine.gcp_cloud.kms import kms_resource
from aistack.engine.gcp_cloud.load_balancing import LOAD_BALANCING_TYPES, load_balancing_resource
from aistack.engine.gcp_cloud.project import digest, module_and_kind, physical_name
from aistack.engine.gcp_cloud.quotas import QUOTA_PREFERENCE, quota_preference
from aistack.engine.gcp_cloud.storage import storage_resource
from aistack.engine.gcp_cloud.workbench import WORKBENCH_INSTANCE, workbench_resource

__all__ = ["resource"]

#: Resources that take pulumi-gcp 10's `deletion_policy` among those the simulation answers.
_DELETION_POLICY = {
    "gcp:storage/bucket:Bucket",
    "gcp:storage/bucketObject:BucketObject",
    "gcp:kms/cryptoKey:CryptoKey",
    SERVICE,
    "gcp:artifactregistry/repository:Repository",
    "gcp:serviceaccount/account:Account",
    "gcp:iam/workloadIdentityPool:WorkloadIdentityPool",
    "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider",
    "gcp:billing/budget:Budget",
    "gcp:pubsub/topic:Topic",
    "gcp:monitoring/notificationChannel:NotificationChannel",
    "gcp:monitoring/alertPolicy:AlertPolicy",
    "gcp:projects/iAMCustomRole:IAMCustomRole",
    "gcp:cloudfunctionsv2/function:Function",
    "gcp:compute/network:Network",
    "gcp:compute/subnetwork:Subnetwork",
    "gcp:compute/firewall:Firewall",
    "gcp:compute/route:Route",
    "gcp:compute/router:Router",
    "gcp:compute/routerNat:RouterNat",
    "gcp:dns/managedZone:ManagedZone",
    "gcp:dns/recordSet:RecordSet",
    "gcp:container/cluster:Cluster",
    "gcp:container/nodePool:NodePool",
    WORKBENCH_INSTANCE,
    *COMPUTE_ENGINE_TYPES,
    *LOAD_BALANCING_TYPES,
}


def resource(
    ctx: SimContext, args: MockResourceArgs, inputs: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The id and outputs GCP returns for one `gcp:` registration."""
    project = ctx.gcp_project(inputs, args.provider)
    region = ctx.gcp_region(inputs, args.provider)
    module, kind = module_and_kind(args.typ)
    name = physical_name(args)
    out = dict(inputs)
    out.setdefault("project", project)
    if args.typ in _DELETION_POLICY:
        out.setdefault("deletionPolicy", "DELETE")
    if isinstance(inputs.get("labels"), dict):
        default_labels = ctx.providers.get(args.provider or "", {}).get("defaultLabels") or {}
        if not isinstance(default_labels, dict):
            default_labels = {}
        merged = {**default_labels, **inputs["labels"]}
        out.setdefault("effectiveLabels", merged)
        out.setdefault("pulumiLabels", merged)
    typ = args.typ

    storage = storage_resource(typ, project, name, args.name, inputs, out)
    if storage is not None:
        return storage
    if typ == SERVICE:
        # Terraform's google_project_service id: `<project>/<service>`.
        resource_id = f"{project}/{inputs.get('service', '')}"
        return resource_id, out
    kms = kms_resource(typ, project, region, name, inputs, out)
    if kms is not None:
        return kms
    if typ == QUOTA_PREFERENCE:
        return quota_preference(ctx, args, inputs, out)
    check_principals(typ, inputs)
    identity = identity_resource(typ, project, name, inputs, out)
    if identity is not None:
        return identity
    registry = registry_resource(typ, project, region, inputs, out)
    if registry is not None:
        return registry
    network = network_resource(ctx, typ, project, region, name, inputs, out)
    if network is not None:
        return network
    container = container_resource(typ, project, region, name, inputs, out)
    if container is not None:
        return container
    workbench = workbench_resource(typ, project, name, inputs, out)
    if workbench is not None:
        return workbench
    compute_engine = compute_engine_resource(typ, project, region, name, inputs, out)
    if compute_engine is not None:
        return compute_engine
    load_balancing = load_balancing_resource(typ, project, region, name, inputs, out)
    if load_balancing is not None:
        return load_balancing
    budget_guard = budget_guard_resource(typ, project, region, name, args.name, inputs, out)
    if budget_guard is not None:
        return budget_guard, out
    if typ == "gcp:projects/iAMAuditConfig:IAMAuditConfig":
        # Terraform's google_project_iam_audit_config id: `<project> <service>` (its import
        # form), with the policy's etag.
        resource_id = f"{project} {inputs.get('service', '')}"
        out.setdefault("etag", f"BwY{digest(resource_id, length=8)}=")
        return resource_id, out
    if typ == "gcp:cloudrunv2/serviceIamMember:ServiceIamMember":
        # Terraform's google_cloud_run_v2_service_iam_member id: `<service path> <role> <member>`.
        location = str(inputs.get("location") or region)
        service = f"projects/{project}/locations/{location}/services/{inputs.get('name', '')}"
        resource_id = f"{service} {inputs.get('role', '')} {inputs.get('member', '')}"
        out.setdefault("etag", f"BwY{digest(resource_id, length=8)}=")
        return resource_id, out
    if kind.endswith("IAMMember") or kind.endswith("IAMBinding"):
        # IAM member ids as the provider writes them: `<resource> <role> <member>`
        # (plus the condition's title when there is one).
        target = next(
            (
                str(inputs[key])
                for key in ("cryptoKeyId", "bucket", "project", "serviceAccountId")
                if inputs.get(key)
            ),
            project,
        )
        if kind.startswith("Bucket"):
            target = f"b/{target}"
        member = inputs.get("member") or ",".join(inputs.get("members") or [])
        resource_id = " ".join(str(p) for p in (target, inputs.get("role", ""), member) if p)
        condition = inputs.get("condition") or {}
        if condition.get("title"):
            resource_id += f" {condition['title']}"
        out.setdefault("etag", f"BwY{digest(resource_id, length=8)}=")
        return resource_id, out

    # Everything else: the generic `projects/<p>/<location>/<collection>/<name>` path.
    if "zone" in inputs:
        location = f"zones/{inputs['zone']}"
    elif kind in ("Network", "Firewall"):
        location = "global"
    else:
        location = f"regions/{region}"
    collection = kind[0].lower() + kind[1:] + "s"
    resource_id = f"projects/{project}/{location}/{collection}/{name}"
    out.setdefault("name", name)
    out.setdefault("selfLink", f"https://www.googleapis.com/{module}/v1/{resource_id}")
    out.setdefault("id", resource_id)
    return resource_id, out

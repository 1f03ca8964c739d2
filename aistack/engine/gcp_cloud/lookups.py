"""Lookups of what a project already holds, answered from `SimContext.existing` (what
earlier deployments left: engine.lifecycle.Account.existing). Components ask them before
they create a resource whose name outlives a `destroy`, to take the old one over with the
`import` option rather than meet it with a 409.

As the provider answers (terraform-provider-google): `getRepositories` lists a location's
repositories and is empty when there are none; the workload identity pool lookups and
`compute.getInstance` fail with "not found" for an id nobody holds, and for a soft-deleted
pool or provider too (the IAM API keeps it 30 days; the provider's decoder drops a
DELETED one)."""

from __future__ import annotations

from typing import Any

from aistack.engine.context import Invoke, NotFound, SimContext

__all__ = ["AR_REPOSITORY", "WIF_POOL", "WIF_PROVIDER", "WORKBENCH", "lookups"]

AR_REPOSITORY = "gcp:artifactregistry/repository:Repository"
WIF_POOL = "gcp:iam/workloadIdentityPool:WorkloadIdentityPool"
WIF_PROVIDER = "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider"
WORKBENCH = "gcp:workbench/instance:Instance"


def lookups(ctx: SimContext) -> dict[str, Invoke]:
    """The lookup invokes, by token."""

    def held(kind: str, scope: tuple[str, ...]) -> dict[str, dict[str, Any]]:
        # A soft-deleted one is not found: the provider's decoders drop a DELETED pool or
        # provider (resource_iam_workload_identity_pool.go), and a deleted repository or
        # VM is gone from the API's answers.
        return {
            name: dict(outputs)
            for (held_kind, held_scope, name), outputs in ctx.existing.items()
            if held_kind == kind and held_scope == scope and outputs.get("state") != "DELETED"
        }

    def repositories(args: dict[str, Any], provider: str) -> dict[str, Any]:
        project = ctx.gcp_project(args, provider)
        location = str(args.get("location") or ctx.gcp_region(args, provider))
        prefix = f"projects/{project}/locations/{location}/repositories/"
        found = [
            {
                "id": prefix + name,
                "repositoryId": name,
                "format": outputs.get("format", "DOCKER"),
                "description": outputs.get("description", ""),
                "createTime": "2026-01-01T00:00:00Z",
                "updateTime": "2026-01-01T00:00:00Z",
            }
            for name, outputs in sorted(held(AR_REPOSITORY, (project, location)).items())
        ]
        return {
            "id": prefix.rstrip("/"),
            "location": location,
            "project": project,
            "repositories": found,
        }

    def pool(args: dict[str, Any], provider: str) -> dict[str, Any]:
        project = ctx.gcp_project(args, provider)
        pool_id = str(args.get("workloadIdentityPoolId") or "")
        outputs = held(WIF_POOL, (project,)).get(pool_id)
        if outputs is None:
            raise NotFound(
                f"projects/{project}/locations/global/workloadIdentityPools/{pool_id} not found"
            )
        return {
            "id": f"projects/{project}/locations/global/workloadIdentityPools/{pool_id}",
            "name": str(outputs.get("name") or pool_id),
            "workloadIdentityPoolId": pool_id,
            "project": project,
            "state": "ACTIVE",
        }

    def pool_provider(args: dict[str, Any], provider: str) -> dict[str, Any]:
        project = ctx.gcp_project(args, provider)
        pool_id = str(args.get("workloadIdentityPoolId") or "")
        provider_id = str(args.get("workloadIdentityPoolProviderId") or "")
        outputs = held(WIF_PROVIDER, (project, pool_id)).get(provider_id)
        if outputs is None:
            raise NotFound(
                f"projects/{project}/locations/global/workloadIdentityPools/{pool_id}/"
                f"providers/{provider_id} not found"
            )
        return {
            "id": f"projects/{project}/locations/global/workloadIdentityPools/{pool_id}/"
            f"providers/{provider_id}",
            "name": str(outputs.get("name") or provider_id),
            "workloadIdentityPoolId": pool_id,
            "workloadIdentityPoolProviderId": provider_id,
            "project": project,
            "state": "ACTIVE",
        }

    def vm(args: dict[str, Any], provider: str) -> dict[str, Any]:
        # Only the VMs Workbench instances run as: the groups' VMs are not named ahead.
        project = ctx.gcp_project(args, provider)
        zone = str(args.get("zone") or "")
        name = str(args.get("name") or "")
        outputs = held(WORKBENCH, (project, zone)).get(name)
        if outputs is None:
            raise NotFound(f"projects/{project}/zones/{zone}/instances/{name} not found (404)")
        boot = (outputs.get("gceSetup") or {}).get("bootDisk") or {}
        key = boot.get("kmsKey")
        return {
            "id": f"projects/{project}/zones/{zone}/instances/{name}",
            "name": name,
            "zone": zone,
            "project": project,
            "bootDisks": [{"kmsKeySelfLink": f"{key}/cryptoKeyVersions/1" if key else ""}],
        }

    return {
        "gcp:compute/getInstance:getInstance": vm,
        "gcp:artifactregistry/getRepositories:getRepositories": repositories,
        "gcp:iam/getWorkloadIdentityPool:getWorkloadIdentityPool": pool,
        "gcp:iam/getWorkloadIdentityPoolProvider:getWorkloadIdentityPoolProvider": pool_provider,
    }

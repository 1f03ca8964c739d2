"""The GCP invokes the simulated cloud answers: the client config, the project, the Cloud
Storage service agent, a region's zones and a zone's GPU machine types (from aistack's
catalog), Cloud Quotas' QuotaInfo, and the lookups of what earlier deployments left
(`lookups`). Any other `gcp:` invoke fails loudly in `SimulatedCloud.call`."""

from __future__ import annotations

import re
from typing import Any

from aistack.engine.context import Invoke, SimContext
from aistack.engine.gcp_cloud import compute_network, quotas
from aistack.engine.gcp_cloud.lookups import lookups
from aistack.engine.gcp_cloud.project import SimulatedGcpError, project_number

__all__ = ["ACCELERATOR_TYPES", "invokes"]


def invokes(ctx: SimContext) -> dict[str, Invoke]:
    """The GCP invokes the simulated cloud answers, by token."""

    def client_config(args: dict[str, Any], provider: str) -> dict[str, Any]:
        return {
            "project": ctx.gcp_project(args, provider),
            "region": ctx.gcp_region(args, provider),
            "zone": f"{ctx.gcp_region(args, provider)}-a",
            "accessToken": "simulated",
            "id": "client-config",
        }

    def get_project(args: dict[str, Any], provider: str) -> dict[str, Any]:
        project = str(args.get("projectId") or ctx.gcp_project(args, provider))
        return {
            "projectId": project,
            "name": project,
            "number": project_number(project),
            "id": f"projects/{project}",
            "labels": {},
            "effectiveLabels": {},
            "autoCreateNetwork": True,
        }

    def storage_service_agent(args: dict[str, Any], provider: str) -> dict[str, Any]:
        # Cloud Storage docs, "Service agents": the project's Cloud Storage service agent
        # is service-<PROJECT_NUMBER>@gs-project-accounts.iam.gserviceaccount.com.
        project = ctx.gcp_project(args, provider)
        email = f"service-{project_number(project)}@gs-project-accounts.iam.gserviceaccount.com"
        return {
            "emailAddress": email,
            "member": f"serviceAccount:{email}",
            "project": project,
            "id": email,
        }

    def logging_cmek_settings(args: dict[str, Any], provider: str) -> dict[str, Any]:
        # Logging's getCmekSettings: the project's Logging service account, which must hold
        # Encrypter/Decrypter on a log bucket's key (pulumi-gcp
        # ProjectBucketConfigCmekSettings.service_account_id). Its form here is the
        # Logging service agent's, service-<PROJECT_NUMBER>@gcp-sa-logging; the program
        # uses whatever the API answers.
        project = ctx.gcp_project(args, provider)
        agent = f"service-{project_number(project)}@gcp-sa-logging.iam.gserviceaccount.com"
        return {
            "id": f"projects/{project}/cmekSettings",
            "name": f"projects/{project}/cmekSettings",
            "project": project,
            "serviceAccountId": agent,
            "kmsKeyName": "",
            "kmsKeyVersionName": "",
        }

    def machine_types(args: dict[str, Any], provider: str) -> dict[str, Any]:
        return _machine_types(ctx, args, provider)

    def quota_info(args: dict[str, Any], provider: str) -> dict[str, Any]:
        return quotas.quota_info(ctx, args)

    def zones(args: dict[str, Any], provider: str) -> dict[str, Any]:
        return compute_network.zones(ctx, args, provider)

    return {
        "gcp:organizations/getClientConfig:getClientConfig": client_config,
        "gcp:organizations/getProject:getProject": get_project,
        "gcp:storage/getProjectServiceAccount:getProjectServiceAccount": storage_service_agent,
        "gcp:compute/getMachineTypes:getMachineTypes": machine_types,
        "gcp:cloudquota/getSQuotaInfo:getSQuotaInfo": quota_info,
        "gcp:compute/getZones:getZones": zones,
        "gcp:logging/getProjectCmekSettings:getProjectCmekSettings": logging_cmek_settings,
        **lookups(ctx),
    }


#: The accelerator type each catalogued machine family carries (Compute Engine docs, "GPU
#: machine types"): the name `guest_accelerators` and quota dimensions use.
ACCELERATOR_TYPES = {
    "g2-standard": "nvidia-l4",
    "a2-highgpu": "nvidia-tesla-a100",
    "a2-megagpu": "nvidia-tesla-a100",
    "a2-ultragpu": "nvidia-a100-80gb",
    "a3-highgpu": "nvidia-h100-80gb",
    "a3-megagpu": "nvidia-h100-mega-80gb",
}
_NAME_FILTER = re.compile(r'\s*name\s*=\s*"?([a-z0-9-]+)"?\s*')


def _machine_types(ctx: SimContext, args: dict[str, Any], provider: str) -> dict[str, Any]:
    """Machine types a zone offers, from the GPU catalog (GPU types only, as catalogued)."""
    from aistack import catalog

    zone = str(args.get("zone") or "")
    if not zone:
        raise SimulatedGcpError("getMachineTypes needs a zone, e.g. 'europe-west4-b'.")
    region = zone.rsplit("-", 1)[0]
    wanted: str | None = None
    if args.get("filter"):
        match = _NAME_FILTER.fullmatch(str(args["filter"]))
        if match is None:
            raise SimulatedGcpError(
                f"the simulated cloud answers getMachineTypes filters of the form "
                f"'name = <type>' only, not {args['filter']!r}."
            )
        wanted = match.group(1)
    project = ctx.gcp_project(args, provider)
    rows = []
    for known in catalog.instance_types("gcp"):
        if wanted and known.name != wanted:
            continue
        if not known.offered_in(region) or zone not in known.zones(region):
            continue
        link = (
            f"https://www.googleapis.com/compute/v1/projects/{project}/zones/{zone}/"
            f"machineTypes/{known.name}"
        )
        rows.append(
            {
                "name": known.name,
                "guestCpus": known.vcpus,
                "memoryMb": int(known.memory_gib * 1024),
                "accelerators": [
                    {
                        "guestAcceleratorType": ACCELERATOR_TYPES[known.family],
                        "guestAcceleratorCount": known.gpu_count,
                    }
                ],
                "bundledLocalSsds": (
                    [{"defaultInterface": "NVME", "partitionCount": known.nvme_disks}]
                    if known.nvme_disks
                    else []
                ),
                "architecture": "X86_64",
                "deprecateds": [],
                "description": f"{known.vcpus} vCPUs, {known.gpu_count} {known.gpu_label}",
                "isSharedCpus": False,
                "maximumPersistentDisks": 128,
                "maximumPersistentDisksSizeGb": 263168,
                "selfLink": link,
            }
        )
    return {
        "machineTypes": rows,
        "zone": zone,
        "project": project,
        "filter": args.get("filter") or "",
        "id": f"projects/{project}/zones/{zone}",
    }

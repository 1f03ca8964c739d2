"""Vertex AI Workbench in the simulated GCP: instances as the Notebooks API v2 returns them.

- an instance's id is `projects/<p>/locations/<zone>/instances/<name>` (the provider's
  id_format, magic-modules `mmv1/products/workbench/Instance.yaml`), its `name` the short
  id (flattened from the self link), its `proxyUri` the JupyterLab host behind the
  Workbench proxy (`<hash>-dot-<region>.notebooks.googleusercontent.com`, none when proxy
  access is disabled), `state` ACTIVE or STOPPED after `desiredState`, `healthState`
  HEALTHY, `creator` the deployer, the service account's scopes set to cloud-platform (the
  API sets them: pulumi-gcp InstanceGceSetupServiceAccount.scopes), and the API's defaults
  filled in (machine type n1-standard-4, boot disk 150 GB, data disk 100 GB, GMEK);
- what the API refuses fails the registration, each with its reason: a location that is
  not a zone (instances are zonal), an instance id Compute Engine would not take as a VM
  name, more than one service account, network interface or accelerator configuration
  ("Currently supports only one", pulumi-gcp docstrings), an accelerator type outside the
  API's enum, CMEK without a key, and a non-integer `idle-timeout-seconds`.
"""

from __future__ import annotations

import re
from typing import Any

from aistack.engine.gcp_cloud.project import SimulatedGcpError, digest

__all__ = ["WORKBENCH_INSTANCE", "workbench_resource"]

WORKBENCH_INSTANCE = "gcp:workbench/instance:Instance"
_ZONE = re.compile(r"([a-z]+-[a-z]+\d+)-[a-z]")
_NAME = re.compile(r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?")
#: pulumi-gcp InstanceGceSetupAcceleratorConfigArgs.type "Possible values".
_ACCELERATORS = {
    "NVIDIA_TESLA_P100",
    "NVIDIA_TESLA_V100",
    "NVIDIA_TESLA_P4",
    "NVIDIA_TESLA_T4",
    "NVIDIA_TESLA_A100",
    "NVIDIA_A100_80GB",
    "NVIDIA_L4",
    "NVIDIA_H100_80GB",
    "NVIDIA_H100_MEGA_80GB",
    "NVIDIA_H200_141GB",
    "NVIDIA_B200",
    "NVIDIA_RTX6000",
    "NVIDIA_TESLA_T4_VWS",
    "NVIDIA_TESLA_P100_VWS",
    "NVIDIA_TESLA_P4_VWS",
}
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"


def workbench_resource(
    typ: str, project: str, name: str, inputs: dict[str, Any], out: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    """The id and outputs of a Workbench instance; None for other types."""
    if typ != WORKBENCH_INSTANCE:
        return None
    location = str(inputs.get("location") or "")
    zone = _ZONE.fullmatch(location)
    if zone is None:
        raise SimulatedGcpError(
            f"googleapi: Error 400: location {location!r} is not a zone: Workbench instances "
            "are zonal (e.g. europe-west4-a)."
        )
    if not _NAME.fullmatch(name):
        raise SimulatedGcpError(
            f"googleapi: Error 400: instance id {name!r} is invalid: 1-63 lowercase letters, "
            "digits and hyphens, starting with a letter and not ending with a hyphen."
        )
    setup = dict(inputs.get("gceSetup") or {})
    for key, what in (
        ("serviceAccounts", "service account"),
        ("networkInterfaces", "network interface"),
        ("acceleratorConfigs", "accelerator configuration"),
    ):
        if len(setup.get(key) or []) > 1:
            raise SimulatedGcpError(
                f"googleapi: Error 400: gce_setup.{key}: currently supports only one {what}."
            )
    for accelerator in setup.get("acceleratorConfigs") or []:
        if str(accelerator.get("type") or "") not in _ACCELERATORS:
            raise SimulatedGcpError(
                f"googleapi: Error 400: acceleratorConfigs.type {accelerator.get('type')!r} "
                f"is not one of {sorted(_ACCELERATORS)}."
            )
    for disk_key in ("bootDisk", "dataDisks"):
        disk = setup.get(disk_key) or {}
        if disk.get("diskEncryption") == "CMEK" and not disk.get("kmsKey"):
            raise SimulatedGcpError(
                f"googleapi: Error 400: gce_setup.{disk_key}: disk_encryption CMEK needs kms_key."
            )
    metadata = setup.get("metadata") or {}
    timeout = metadata.get("idle-timeout-seconds")
    if timeout is not None and not str(timeout).isdigit():
        raise SimulatedGcpError(
            f"googleapi: Error 400: metadata idle-timeout-seconds {timeout!r} is not an "
            "integer number of seconds."
        )

    resource_id = f"projects/{project}/locations/{location}/instances/{name}"
    accounts = [
        {**account, "scopes": [CLOUD_PLATFORM]} for account in setup.get("serviceAccounts") or []
    ]
    setup.setdefault("machineType", "n1-standard-4")
    setup["serviceAccounts"] = accounts
    setup["bootDisk"] = {
        "diskSizeGb": "150",
        "diskType": "PD_STANDARD",
        "diskEncryption": "GMEK",
        **(setup.get("bootDisk") or {}),
    }
    setup["dataDisks"] = {
        "diskSizeGb": "100",
        "diskType": "PD_STANDARD",
        "diskEncryption": "GMEK",
        **(setup.get("dataDisks") or {}),
    }
    setup.setdefault("disablePublicIp", False)
    setup["computeInstanceId"] = str(int(digest("vm", resource_id, length=12), 16) % 10**19)
    region = zone.group(1)
    host = f"{digest('proxy', resource_id, length=16)}-dot-{region}"
    proxy = "" if inputs.get("disableProxyAccess") else f"{host}.notebooks.googleusercontent.com"
    desired = str(inputs.get("desiredState") or "ACTIVE")
    out.update(
        name=name,
        location=location,
        gceSetup=setup,
        proxyUri=proxy,
        state="STOPPED" if desired == "STOPPED" else "ACTIVE",
        desiredState=desired,
        healthState="HEALTHY",
        healthInfos=[],
        creator=f"deployer@{project}.iam.gserviceaccount.com",
        createTime="2026-12-01T00:00:00.000Z",
        updateTime="2026-12-01T00:00:00.000Z",
        upgradeHistories=[],
        enableDeletionProtection=bool(inputs.get("enableDeletionProtection", False)),
        disableProxyAccess=bool(inputs.get("disableProxyAccess", False)),
    )
    return resource_id, out

"""Compute Engine VMs and Cloud Logging routing in the simulated GCP: regional instance
templates, regional managed instance groups, health checks, log buckets and sinks.

Ids and self-links in the APIs' formats: `projects/<p>/regions/<r>/instanceTemplates/<n>`
`projects/<p>/regions/<r>/
instanceGroupManagers/<n>` with its `instanceGroup` URL, `projects/<p>/global/healthChecks/
<n>`, `projects/<p>/locations/<l>/buckets/<id>` (Logging API LogBucket.name) and
`projects/<p>/sinks/<n>` with a `writerIdentity`. Refused as the APIs refuse them, each
with its source:

- a SCRATCH (local SSD) disk of another size than 375 GB, or not of type local-ssd
  (pulumi-gcp RegionInstanceTemplateDisk `disk_size_gb`: "for SCRATCH disks, the size must
  be exactly 375GB");
- Spot or preemptible scheduling that asks for automatic restart or live migration (pulumi-gcp
  RegionInstanceTemplateScheduling: preemptible VMs need `automatic_restart = false` and
  `on_host_maintenance = "TERMINATE"`);
- a GPU machine type (a2, a3, g2) that asks to live-migrate (Compute Engine docs, "GPU host
  maintenance": GPU VMs must stop for host maintenance), or that declares guest
  accelerators (Compute Engine docs, "GPU machine types": those types attach their GPUs);
- `max_run_duration` with a termination action other than DELETE (pulumi-gcp scheduling
  `max_run_duration`: "Only support DELETE instance_termination_action at this point");
- a log bucket retention outside 1-3650 days or in the `global` location when aistack
  asked for a region is not refused (the API takes global): rules judge that.
"""

from __future__ import annotations

from typing import Any

from aistack.engine.gcp_cloud.project import SimulatedGcpError, digest, project_number

__all__ = ["COMPUTE_ENGINE_TYPES", "compute_engine_resource"]

COMPUTE = "https://www.googleapis.com/compute/v1/"
TEMPLATE = "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate"
GROUP = "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager"
HEALTH_CHECK = "gcp:compute/healthCheck:HealthCheck"
LOG_BUCKET = "gcp:logging/projectBucketConfig:ProjectBucketConfig"
LOG_SINK = "gcp:logging/projectSink:ProjectSink"
COMPUTE_ENGINE_TYPES = (TEMPLATE, GROUP, HEALTH_CHECK, LOG_BUCKET, LOG_SINK)
_GPU_FAMILIES = ("a2-", "a3-", "a4-", "g2-")


def compute_engine_resource(
    typ: str, project: str, region: str, name: str, inputs: dict[str, Any], out: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    """The id and outputs of the types above; None for other types."""
    if typ == TEMPLATE:
        _check_template(name, inputs)
        location = str(inputs.get("region") or region)
        resource_id = f"projects/{project}/regions/{location}/instanceTemplates/{name}"
        out.update(name=name, selfLink=COMPUTE + resource_id)
        return resource_id, out
    if typ == GROUP:
        location = str(inputs.get("region") or region)
        resource_id = f"projects/{project}/regions/{location}/instanceGroupManagers/{name}"
        out.update(
            name=name,
            selfLink=COMPUTE + resource_id,
            instanceGroup=f"{COMPUTE}projects/{project}/regions/{location}/instanceGroups/{name}",
            fingerprint=digest(resource_id, length=12),
        )
        return resource_id, out
    if typ == HEALTH_CHECK:
        resource_id = f"projects/{project}/global/healthChecks/{name}"
        kind = next(
            (k for k in ("tcp", "http", "https", "ssl", "grpc") if inputs.get(f"{k}HealthCheck")),
            "tcp",
        )
        out.update(name=name, selfLink=COMPUTE + resource_id, type=kind.upper())
        return resource_id, out
    if typ == LOG_BUCKET:
        location = str(inputs.get("location") or "global")
        resource_id = (
            f"projects/{project}/locations/{location}/buckets/{inputs.get('bucketId', name)}"
        )
        out.update(name=resource_id, lifecycleState="ACTIVE")
        return resource_id, out
    if typ == LOG_SINK:
        resource_id = f"projects/{project}/sinks/{name}"
        # Logging API, LogSink.writerIdentity: a unique writer is the project's Logging
        # service agent, service-<NUMBER>@gcp-sa-logging.iam.gserviceaccount.com.
        number = project_number(project)
        out.update(
            name=name,
            writerIdentity=f"serviceAccount:service-{number}@gcp-sa-logging.iam.gserviceaccount.com",
        )
        return resource_id, out
    return None


def _check_template(name: str, inputs: dict[str, Any]) -> None:
    machine = str(inputs.get("machineType") or "")
    for disk in inputs.get("disks") or []:
        if disk.get("type") == "SCRATCH" and (
            disk.get("diskType") != "local-ssd" or int(disk.get("diskSizeGb") or 375) != 375
        ):
            raise SimulatedGcpError(
                f"googleapi: Error 400: Invalid value for field 'resource.properties.disks': "
                f"a SCRATCH disk of {name} must be a local-ssd of exactly 375 GB."
            )
    scheduling = inputs.get("scheduling") or {}
    spot = scheduling.get("provisioningModel") == "SPOT" or scheduling.get("preemptible")
    # Only explicit values: left unset, Compute Engine picks TERMINATE and no restart for
    # Spot VMs itself.
    migrates = scheduling.get("onHostMaintenance") == "MIGRATE"
    if spot and (scheduling.get("automaticRestart") is True or migrates):
        raise SimulatedGcpError(
            "googleapi: Error 400: Invalid value for field 'resource.properties.scheduling': "
            "preemptible and Spot VMs need automaticRestart false and onHostMaintenance "
            "TERMINATE."
        )
    if machine.startswith(_GPU_FAMILIES):
        if migrates:
            raise SimulatedGcpError(
                "googleapi: Error 400: Instances with guest accelerators do not support live "
                f"migration ({machine}): set onHostMaintenance TERMINATE."
            )
        if inputs.get("guestAccelerators"):
            raise SimulatedGcpError(
                f"googleapi: Error 400: {machine} comes with its GPUs; guestAccelerators "
                "cannot be set on accelerator-optimized machine types."
            )
    if scheduling.get("maxRunDuration") and scheduling.get("instanceTerminationAction") != "DELETE":
        raise SimulatedGcpError(
            "googleapi: Error 400: maxRunDuration needs instanceTerminationAction DELETE."
        )

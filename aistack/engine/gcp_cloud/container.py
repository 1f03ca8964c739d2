"""GKE in the simulated GCP: clusters and node pools as the Kubernetes Engine API returns them.

- a cluster's id is `projects/<p>/locations/<l>/clusters/<name>` (Terraform's
  google_container_cluster id), its `selfLink` the container API's
  `https://container.googleapis.com/v1/projects/<p>/locations/<l>/clusters/<name>`, its
  `endpoint` a private IP inside the master /28 for a private-endpoint cluster (an
  external IP otherwise), `masterAuth.clusterCaCertificate` a base64 PEM;
- a node pool's id is `projects/<p>/locations/<l>/clusters/<c>/nodePools/<name>`;
- what GKE refuses fails the registration, each with the cited reason: names over 40
  characters, `remove_default_node_pool` with no initial node, the Calico network policy
  addon together with Dataplane V2, a Spot pool with queued provisioning, autoscaling
  total and per-zone limits together, a local SSD count a machine with bundled SSDs does
  not have.
"""

from __future__ import annotations

import base64
import ipaddress
import re
from typing import Any

from aistack.engine.gcp_cloud.project import SimulatedGcpError, digest

__all__ = ["CLUSTER", "NODE_POOL", "container_resource"]

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
#: GKE API, projects.locations.clusters / nodePools create: names of at most 40 lowercase
#: letters, digits and hyphens, starting with a letter and ending with a letter or digit.
_NAME = re.compile(r"[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?")
_CLUSTER_ID = re.compile(r"projects/([^/]+)/locations/([^/]+)/clusters/([^/]+)")


def _check_name(kind: str, name: str) -> None:
    if not _NAME.fullmatch(name):
        raise SimulatedGcpError(
            f"googleapi: Error 400: {kind} name {name!r} is invalid: at most 40 lowercase "
            "letters, digits and hyphens, starting with a letter and ending with a letter or "
            "digit."
        )


def container_resource(
    typ: str, project: str, region: str, name: str, inputs: dict[str, Any], out: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    """The id and outputs of a GKE cluster or node pool; None for other types."""
    if typ == CLUSTER:
        return _cluster(project, region, name, inputs, out)
    if typ == NODE_POOL:
        return _node_pool(project, region, name, inputs, out)
    return None


def _cluster(
    project: str, region: str, name: str, inputs: dict[str, Any], out: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    _check_name("cluster", name)
    if inputs.get("removeDefaultNodePool") and not inputs.get("initialNodeCount"):
        # The default pool is created before it is removed, and GKE creates no pool of 0
        # nodes (pulumi-gcp `remove_default_node_pool`/`initial_node_count` docstrings).
        raise SimulatedGcpError(
            "googleapi: Error 400: Cluster.initial_node_count must be greater than zero "
            "(remove_default_node_pool still creates the default pool first)."
        )
    policy = inputs.get("networkPolicy") or {}
    if inputs.get("datapathProvider") == "ADVANCED_DATAPATH" and policy.get("enabled"):
        # GKE docs, "Dataplane V2": network policy enforcement is built in; the Calico
        # NetworkPolicy addon cannot be enabled on a Dataplane V2 cluster.
        raise SimulatedGcpError(
            "googleapi: Error 400: Enabling NetworkPolicy for clusters with "
            "DatapathProvider=ADVANCED_DATAPATH is not allowed."
        )
    location = str(inputs.get("location") or region)
    resource_id = f"projects/{project}/locations/{location}/clusters/{name}"
    private = inputs.get("privateClusterConfig") or {}
    if private.get("enablePrivateEndpoint") and private.get("masterIpv4CidrBlock"):
        master = ipaddress.ip_network(str(private["masterIpv4CidrBlock"]))
        endpoint = str(master.network_address + 2)
    else:
        octets = bytes.fromhex(digest("endpoint", resource_id, length=6))
        endpoint = f"34.{octets[0]}.{octets[1]}.{octets[2]}"
    # A PEM certificate's base64 as masterAuth returns it (not a real certificate).
    body = base64.b64encode(f"aistack-simulated-ca:{resource_id}".encode()).decode()
    pem = f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n"
    master_auth = dict(inputs.get("masterAuth") or {})
    master_auth["clusterCaCertificate"] = base64.b64encode(pem.encode()).decode()
    workload = inputs.get("workloadIdentityConfig") or {}
    out.update(
        name=name,
        location=location,
        endpoint=endpoint,
        masterAuth=master_auth,
        selfLink=f"https://container.googleapis.com/v1/{resource_id}",
        masterVersion="1.33.5-gke.1201000",
        labelFingerprint=digest("labels", resource_id, length=8),
        operation="",
        workloadIdentityConfig=workload,
        deletionProtection=inputs.get("deletionProtection", True),
    )
    return resource_id, out


def _node_pool(
    project: str, region: str, name: str, inputs: dict[str, Any], out: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    _check_name("node pool", name)
    cluster = str(inputs.get("cluster") or "")
    match = _CLUSTER_ID.fullmatch(cluster)
    if match:
        cluster_path = cluster
    else:
        location = str(inputs.get("location") or region)
        cluster_path = f"projects/{project}/locations/{location}/clusters/{cluster}"
    config = inputs.get("nodeConfig") or {}
    if config.get("spot") and (inputs.get("queuedProvisioning") or {}).get("enabled"):
        # GKE docs, flex-start with queued provisioning: not with Spot VMs.
        raise SimulatedGcpError(
            "googleapi: Error 400: queued provisioning cannot be used with Spot VMs."
        )
    scaling = inputs.get("autoscaling") or {}
    totals = "totalMinNodeCount" in scaling or "totalMaxNodeCount" in scaling
    per_zone = "minNodeCount" in scaling or "maxNodeCount" in scaling
    if totals and per_zone:
        # pulumi-gcp NodePoolAutoscaling: total limits "cannot be used with per zone limits".
        raise SimulatedGcpError(
            "googleapi: Error 400: autoscaling total and per-zone node limits are exclusive."
        )
    _check_local_ssds(config)
    resource_id = f"{cluster_path}/nodePools/{name}"
    out.update(
        name=name,
        location=cluster_path.split("/")[3],
        instanceGroupUrls=[],
        managedInstanceGroupUrls=[],
        operation="",
        version="1.33.5-gke.1201000",
    )
    return resource_id, out


def _check_local_ssds(config: dict[str, Any]) -> None:
    from aistack import catalog

    machine = catalog.find("gcp", str(config.get("machineType") or ""))
    ssd = config.get("ephemeralStorageLocalSsdConfig") or {}
    count = ssd.get("localSsdCount")
    if machine is None or not machine.nvme_disks or count in (None, 0):
        return
    if int(count) != machine.nvme_disks:
        # Machines with bundled local SSD attach their fixed count (Compute Engine docs,
        # "About Local SSD disks"; GKE: 0 means that default on such machine types).
        raise SimulatedGcpError(
            f"googleapi: Error 400: {machine.name} has {machine.nvme_disks} local SSDs; "
            f"local_ssd_count {count} is invalid for it."
        )

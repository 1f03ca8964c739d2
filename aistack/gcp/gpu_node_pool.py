"""`gcp.GpuNodePool`: a GKE GPU node pool that scales to zero, on Spot, on-demand or flex-start.

The cloud half of training on GKE (issue 12 `gke`, issue 14 deliverable 6): nodes appear
when Kueue admits a job and the cluster autoscaler scales up, and go when they are empty.

- autoscaling from 0 (`total_min_node_count = 0`) to an explicit maximum, the cost cap and
  the quota size (C1, C5); `location_policy = ANY` for Spot and flex-start, so the
  autoscaler takes whichever zone has capacity;
- only the zones of the region that offer the machine type (catalog, C2);
- GPUs declared with their driver installed by GKE (`gpu_driver_installation_config`);
- taints set explicitly: `nvidia.com/gpu=present:NoSchedule` (GKE adds it only when the
  cluster also has non-GPU pools: terraform-google-kubernetes-engine#703) and, on Spot,
  `cloud.google.com/gke-spot=true:NoSchedule`, so only pods that tolerate preemption land;
- node labels of the queue/pool contract (`aistack.dev/pool`, `aistack.dev/capacity`) and
  `kueue_flavors()` for `k8s.TrainingQueue`;
- local SSD as the node's ephemeral storage (emptyDir caches on NVMe, D3), the machine's
  bundled count where it has one;
- `max_run_duration` (T5): no node lives longer, whatever runs on it;
- shielded nodes with secure boot and integrity monitoring, the GKE metadata server (pods
  never see the node's credentials, C6), the cluster's node service account, autorepair and
  autoupgrade (autorepair off for flex-start, as GKE requires);
- `quota_needs()` so `gcp.GpuQuota` files the pool's maximum (C1).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import pulumi
import pulumi_gcp as gcp
from pydantic import Field, field_validator, model_validator

from aistack import catalog
from aistack.config import AistackModel, Governance
from aistack.contracts.capacity import CapacityNeed
from aistack.contracts.k8s import CAPACITY_LABEL, POOL_LABEL
from aistack.errors import Problems
from aistack.gcp._base import LOCAL_SSD_GB, catalogued_gpu_machine, child_opts, labels_for
from aistack.gcp.gke_cluster import NODE_SCOPES, GkeCluster, cluster_name_problem

__all__ = [
    "ACCELERATOR_TYPES",
    "CAPACITY_LABEL",
    "FLEX_START_MAX_HOURS",
    "GPU_TAINT",
    "GpuNodePool",
    "GpuNodePoolArgs",
    "LOCAL_SSD_COUNTS",
    "POOL_LABEL",
    "SPOT_TAINT",
]

TOKEN = "aistack:index:GcpGpuNodePool"
GPU_RESOURCE = "nvidia.com/gpu"
#: GKE's own Spot node label (GKE docs, "Spot VMs": `cloud.google.com/gke-spot: "true"`).
GKE_SPOT_LABEL = "cloud.google.com/gke-spot"
#: GKE's flex-start node label (GKE docs, "About flex-start provisioning mode").
GKE_FLEX_START_LABEL = "cloud.google.com/gke-flex-start"
#: (key, value, GKE API effect). GKE API NodeTaint effects are NO_SCHEDULE,
#: PREFER_NO_SCHEDULE and NO_EXECUTE (the Kubernetes NoSchedule, ...).
GPU_TAINT = (GPU_RESOURCE, "present", "NO_SCHEDULE")
SPOT_TAINT = (GKE_SPOT_LABEL, "true", "NO_SCHEDULE")

#: Compute Engine accelerator type per catalogued machine family (Compute Engine docs, "GPU
#: machine types": G2 nvidia-l4, A2 Standard nvidia-tesla-a100, A2 Ultra nvidia-a100-80gb,
#: A3 High nvidia-h100-80gb, A3 Mega nvidia-h100-mega-80gb). GKE takes them with the count
#: the machine type comes with (GKE docs, "Run GPUs in Standard node pools": `--accelerator
#: type=nvidia-l4,count=1,gpu-driver-version=default` with g2-standard-8).
ACCELERATOR_TYPES = {
    "g2-standard": "nvidia-l4",
    "a2-highgpu": "nvidia-tesla-a100",
    "a2-megagpu": "nvidia-tesla-a100",
    "a2-ultragpu": "nvidia-a100-80gb",
    "a3-highgpu": "nvidia-h100-80gb",
    "a3-megagpu": "nvidia-h100-mega-80gb",
}
#: Local SSDs a machine type may attach when it has none bundled (Compute Engine docs,
#: "About Local SSD disks", valid numbers of Local SSD disks per machine type: G2 and A2
#: Standard take fixed counts). Bundled types (A2 Ultra, A3) take the catalog's count.
LOCAL_SSD_COUNTS: dict[str, tuple[int, ...]] = {
    "g2-standard-4": (1,),
    "g2-standard-8": (1,),
    "g2-standard-12": (1,),
    "g2-standard-16": (1,),
    "g2-standard-24": (2,),
    "g2-standard-32": (1,),
    "g2-standard-48": (4,),
    "g2-standard-96": (8,),
    "a2-highgpu-1g": (1, 2, 4, 8),
    "a2-highgpu-2g": (2, 4, 8),
    "a2-highgpu-4g": (4, 8),
    "a2-highgpu-8g": (8,),
    "a2-megagpu-16g": (8,),
}
#: Flex-start VMs run at most seven days (GKE docs, "About flex-start provisioning mode":
#: "up to seven days"), and need GKE 1.32.2-gke.1652000 or later for GPUs.
FLEX_START_MAX_HOURS = 7 * 24

Market = Literal["spot", "on-demand", "flex-start"]
DriverVersion = Literal["DEFAULT", "LATEST"]


class GpuNodePoolArgs(AistackModel):
    """A GPU node pool on a GkeCluster: machine, market, maximum, node lifetime."""

    governance: Governance
    machine_type: str = Field(
        description="A GPU machine type from the catalog, e.g. 'g2-standard-8' (1 x L4) or "
        "'a3-highgpu-8g' (8 x H100). Required; its GPUs, zones and local SSDs come from it."
    )
    market: Market = Field(
        "spot",
        description="'spot' (default: preemptible, a fraction of the price; jobs resume "
        "from checkpoints, T2), 'on-demand', or 'flex-start' (Dynamic Workload Scheduler: "
        "queued until the capacity exists, at most 7 days a node).",
    )
    max_nodes: int = Field(
        ge=1,
        le=1000,
        description="Most nodes the pool may run, across its zones: the cost cap and the "
        "GPU quota it needs (C1, C3). Required, no default.",
    )
    workload: Literal["training", "serving"] = Field(
        "training",
        description="What the pool runs, labelled on its nodes' VMs: 'training' (default; "
        "the budget kill switch may stop it, nodes live at most maxNodeHours) or 'serving' "
        "(no node lifetime by default: nodes created together would end together, and with "
        "them every replica of the model).",
    )
    max_node_hours: float | None = Field(
        24,
        gt=0,
        description="Hours a node may live, whatever runs on it (node `max_run_duration`, "
        "T5). Default 24 for training pools, none for serving pools; at most 168 for "
        "flex-start, where it is required. null: no node lifetime (rule AIS-T5-03 then "
        "fails a training pool), for GKE versions that refuse the field.",
    )
    local_ssds: int | None = Field(
        None,
        ge=1,
        description="Local SSDs (375 GB NVMe each) backing the node's ephemeral storage, "
        "for emptyDir dataset caches (D3). Default: the machine's bundled count (A2 Ultra, "
        "A3), else the smallest count Compute Engine allows for it.",
    )
    allow_boot_disk_ephemeral_storage: bool = Field(
        False,
        description="Keep ephemeral storage on the boot disk (no local SSD). Off: training "
        "caches datasets on local NVMe (D3).",
    )
    zones: tuple[str, ...] | None = Field(
        None,
        description="Zones of the cluster's region for the nodes; default: every zone the "
        "catalog says offers the machine type (C2). Each must offer it.",
    )
    gpu_driver_version: DriverVersion = Field(
        "DEFAULT",
        description="GPU driver GKE installs: DEFAULT (the version's default) or LATEST. "
        "Changing it replaces the pool (terraform-provider-google#23248).",
    )
    queued_provisioning: bool = Field(
        False,
        description="flex-start only: nodes obtainable exclusively through "
        "ProvisioningRequests (Kueue's provisioning admission check), all-or-nothing.",
    )
    disk_size_gb: int = Field(200, ge=10, description="Boot disk size (pd-balanced).")
    node_pool_name: str | None = Field(
        None, description="The pool's GKE name (40 characters at most); default: the name."
    )

    @field_validator("machine_type")
    @classmethod
    def _a_catalogued_gpu_machine(cls, machine: str) -> str:
        return catalogued_gpu_machine(machine)

    @model_validator(mode="before")
    @classmethod
    def _serving_nodes_live_on(cls, data: Any) -> Any:
        # A serving pool's nodes are not time-boxed unless asked (AIS-T5-03): GKE would end
        # every node of a pool created together within the same hour, replicas included.
        unset = isinstance(data, dict) and not {"maxNodeHours", "max_node_hours"} & set(data)
        if unset and data.get("workload") == "serving":
            return {**data, "max_node_hours": None}
        return data

    @model_validator(mode="after")
    def _market_fits(self) -> GpuNodePoolArgs:
        if self.queued_provisioning and self.market != "flex-start":
            raise ValueError(
                "queuedProvisioning needs market 'flex-start' (GKE: queued provisioning is "
                "flex-start's all-or-nothing mode; Spot and queued provisioning exclude each "
                "other). Fix: set market: flex-start, or drop queuedProvisioning."
            )
        if self.market == "flex-start" and self.max_node_hours is None:
            raise ValueError(
                "flex-start nodes need a maximum run duration (Compute Engine: FLEX_START "
                "requires max_run_duration). Fix: set maxNodeHours (at most 168)."
            )
        if self.market == "flex-start" and (self.max_node_hours or 0) > FLEX_START_MAX_HOURS:
            raise ValueError(
                f"flex-start nodes live at most {FLEX_START_MAX_HOURS} hours (7 days), not "
                f"{self.max_node_hours:g}. Fix: set maxNodeHours to 168 or less."
            )
        return self

    @property
    def machine(self) -> catalog.InstanceType:
        return catalog.get(self.machine_type, cloud="gcp")

    @property
    def capacity(self) -> Literal["spot", "on-demand"]:
        # Flex-start nodes are not preempted: they run to their max_run_duration.
        return "spot" if self.market == "spot" else "on-demand"

    def local_ssd_count(self) -> int:
        machine = self.machine
        if machine.nvme_disks:
            return machine.nvme_disks
        if self.local_ssds is not None:
            return self.local_ssds
        return LOCAL_SSD_COUNTS.get(self.machine_type, (1,))[0]

    def ephemeral_storage_gb(self) -> int:
        """The disk under a node's kubelet: its local SSDs, or the boot disk without them."""
        if self.allow_boot_disk_ephemeral_storage:
            return self.disk_size_gb
        return self.local_ssd_count() * LOCAL_SSD_GB

    def node_labels(self, pool: str) -> dict[str, str]:
        """The labels the nodes of a pool named `pool` carry."""
        labels = {POOL_LABEL: pool, CAPACITY_LABEL: self.capacity}
        if self.market == "flex-start":
            labels["aistack.dev/provisioning"] = "flex-start"
        return labels

    def kueue_flavors(self, pool: str) -> list[dict[str, Any]]:
        """The flavor a pool named `pool` with these args gives (`GpuNodePool.
        kueue_flavors()`): known before the pool registers anything, so a stack can
        validate its queue first."""
        node_labels = self.node_labels(pool)
        tolerations: list[dict[str, Any]] = [
            {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
        ]
        if self.market == "spot":
            node_labels[GKE_SPOT_LABEL] = "true"
            spot = {"key": GKE_SPOT_LABEL, "operator": "Equal", "value": "true"}
            tolerations.append({**spot, "effect": "NoSchedule"})
        return [
            {
                "name": f"{pool}-{self.capacity}",
                "capacity": self.capacity,
                "nodeLabels": node_labels,
                "tolerations": tolerations,
                "gpus": self.max_nodes * self.machine.gpu_count,
                "gpuResource": GPU_RESOURCE,
                # Kueue's quota of node-local disk: what the pool's nodes have at most.
                "ephemeralStorage": f"{self.max_nodes * self.ephemeral_storage_gb()}G",
            }
        ]


class GpuNodePool(pulumi.ComponentResource):
    """A GPU node pool on a GkeCluster, 0 to `max_nodes`, tainted and labelled for Kueue."""

    args: GpuNodePoolArgs
    node_pool: gcp.container.NodePool
    node_pool_id: pulumi.Output[str]
    zones: tuple[str, ...]

    def __init__(
        self,
        name: str,
        args: GpuNodePoolArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        cluster: GkeCluster | None = None,
    ) -> None:
        """`cluster`: the GkeCluster the pool joins (its region, project and node service
        account)."""

        def checks(args: GpuNodePoolArgs) -> None:
            problems = Problems()
            assert cluster is not None
            region = cluster.region
            machine = args.machine
            reason = cluster_name_problem(args.node_pool_name or name)
            if reason:
                problems.add(
                    f"{name}.nodePoolName", reason, "set nodePoolName to a name GKE accepts."
                )
            if not machine.offered_in(region):
                problems.add(
                    f"{name}.machineType",
                    f"{machine.name} is not offered in the cluster's region {region} (C2).",
                    f"use a cluster in one of {list(machine.regions)}, or another machine.",
                )
            else:
                offered = machine.zones(region)
                for i, zone in enumerate(args.zones or ()):
                    if zone not in offered:
                        problems.add(
                            f"{name}.zones.{i}",
                            f"{zone} does not offer {machine.name} (C2).",
                            f"use zones among {list(offered)}.",
                        )
            if args.market == "on-demand" and "on-demand" not in _markets(machine):
                problems.add(
                    f"{name}.market",
                    f"{machine.name} is not sold on-demand: {machine.notes}",
                    "use market spot or flex-start, or the 8-GPU shape.",
                )
            allowed = LOCAL_SSD_COUNTS.get(args.machine_type)
            if args.local_ssds is not None:
                if machine.nvme_disks and args.local_ssds != machine.nvme_disks:
                    problems.add(
                        f"{name}.localSsds",
                        f"{machine.name} comes with {machine.nvme_disks} local SSDs bundled; "
                        "GKE takes them all or none.",
                        "leave localSsds unset.",
                    )
                elif allowed and args.local_ssds not in allowed:
                    problems.add(
                        f"{name}.localSsds",
                        f"{machine.name} attaches {list(allowed)} local SSDs, not "
                        f"{args.local_ssds}.",
                        f"use one of {list(allowed)}.",
                    )
            problems.raise_if_any()

        args = GpuNodePoolArgs.validate_with(args, checks, where=name, wiring={"cluster": cluster})[
            0
        ]
        assert cluster is not None
        super().__init__(TOKEN, name, {"machineType": args.machine_type}, opts)
        self.args = args
        self.cluster = cluster
        self.region = cluster.region
        self.project = cluster.project
        self.node_pool_name = args.node_pool_name or name
        self._name = name
        machine = args.machine
        self.zones = tuple(args.zones or machine.zones(cluster.region))
        flex = args.market == "flex-start"

        taints = [GPU_TAINT, *([SPOT_TAINT] if args.market == "spot" else [])]
        self.node_labels = self._node_labels()
        ssds = 0 if args.allow_boot_disk_ephemeral_storage else args.local_ssd_count()
        accelerator_type = ACCELERATOR_TYPES[machine.family]
        self.node_pool = gcp.container.NodePool(
            f"{name}-pool",
            name=self.node_pool_name,
            project=cluster.project,
            cluster=cluster.cluster_id,
            location=cluster.region,
            node_locations=list(self.zones),
            # Scale from zero: no GPU node runs (or bills) until a job needs it (C5). Flex-
            # start and queued pools must start empty (GKE docs, flex-start: --num-nodes=0).
            initial_node_count=0,
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=0,
                total_max_node_count=args.max_nodes,
                # ANY: the autoscaler takes the zone with capacity, as Spot and flex-start
                # need (GKE docs, "Spot VMs" best practices; flex-start requires it).
                location_policy="ANY" if args.market != "on-demand" else "BALANCED",
            ),
            # Flex-start nodes cannot be repaired in place (GKE: --no-enable-autorepair with
            # flex-start; ai-on-gke dws-flex-training setup.sh).
            management=gcp.container.NodePoolManagementArgs(
                auto_repair=not flex, auto_upgrade=True
            ),
            upgrade_settings=gcp.container.NodePoolUpgradeSettingsArgs(
                strategy="SURGE", max_surge=1, max_unavailable=0
            ),
            queued_provisioning=gcp.container.NodePoolQueuedProvisioningArgs(enabled=True)
            if args.queued_provisioning
            else None,
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=args.machine_type,
                # The cluster's node key (GkeCluster.node_disk_key; enabling() waits for its
                # grant to the Compute Engine service agent).
                boot_disk_kms_key=cluster.node_disk_key,
                spot=args.market == "spot",
                flex_start=True if flex else None,
                # Flex-start capacity is never a reservation's (GKE flex-start:
                # --reservation-affinity=none).
                reservation_affinity=gcp.container.NodePoolNodeConfigReservationAffinityArgs(
                    consume_reservation_type="NO_RESERVATION"
                )
                if flex
                else None,
                max_run_duration=f"{math.ceil(args.max_node_hours * 3600)}s"
                if args.max_node_hours is not None
                else None,
                guest_accelerators=[
                    gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
                        type=accelerator_type,
                        count=machine.gpu_count,
                        gpu_driver_installation_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
                            gpu_driver_version=args.gpu_driver_version
                        ),
                    )
                ],
                ephemeral_storage_local_ssd_config=gcp.container.NodePoolNodeConfigEphemeralStorageLocalSsdConfigArgs(
                    local_ssd_count=ssds
                )
                if ssds
                else None,
                image_type="COS_CONTAINERD",
                disk_type="pd-balanced",
                disk_size_gb=args.disk_size_gb,
                service_account=cluster.node_service_account_email,
                oauth_scopes=list(NODE_SCOPES),
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
                    mode="GKE_METADATA"
                ),
                shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                    enable_secure_boot=True, enable_integrity_monitoring=True
                ),
                labels=self.node_labels,
                taints=[
                    gcp.container.NodePoolNodeConfigTaintArgs(key=k, value=v, effect=effect)
                    for k, v, effect in taints
                ],
                resource_labels=labels_for(args.governance, workload=args.workload),
            ),
            opts=child_opts(self, depends_on=cluster.enabling()),
        )
        self.node_pool_id = self.node_pool.id
        self.register_outputs(
            {
                "node_pool_id": self.node_pool_id,
                "node_pool_name": self.node_pool_name,
                "max_nodes": args.max_nodes,
                "market": args.market,
                "zones": list(self.zones),
            }
        )

    def _node_labels(self) -> dict[str, str]:
        return self.args.node_labels(self._name)

    @property
    def max_gpus(self) -> int:
        return self.args.max_nodes * self.args.machine.gpu_count

    def kueue_flavors(self) -> list[dict[str, Any]]:
        """The pool's Kueue ResourceFlavor, as `k8s.TrainingQueue(flavors=...)` takes it:
        plain values, one flavor (a pool offers one capacity type)."""
        return self.args.kueue_flavors(self._name)

    def quota_needs(self) -> list[CapacityNeed]:
        """The GPU quota the pool needs at its maximum, plus one surge node for upgrades.
        Flex-start VMs count against the preemptible GPU quota, as Spot does (Managed
        Service for Apache Spark docs, "Use Dynamic Workload Scheduler": flex-start
        "consumes the preemptible version of the GPU quota")."""
        return [
            CapacityNeed(
                pool=self._name,
                region=self.region,
                machine_types=(self.args.machine_type,),
                max_nodes=self.args.max_nodes,
                market="on-demand" if self.args.market == "on-demand" else "spot",
                surge_nodes=1,
            )
        ]


def _markets(machine: catalog.InstanceType) -> tuple[str, ...]:
    # The catalog notes say which A3 shapes are Spot/flex-start only.
    if "only as Spot" in machine.notes and not machine.name.endswith("-8g"):
        return ("spot", "flex-start")
    return ("spot", "on-demand", "flex-start")

"""`gcp.TrainingPool`: GPU VMs on Spot in a managed instance group that starts empty,
caches on local SSD, resumes from checkpoints and deletes its own idle VMs.

The `mig` scheduler (issue 12 deliverable 2; the `gke` half is gcp.GkeCluster +
gcp.GpuNodePool + k8s.TrainingQueue):

- a regional instance template: Spot (`provisioning_model SPOT`, preemptible, no automatic
  restart) with `instance_termination_action DELETE`, so a preempted VM is deleted, not
  stopped with its disks still billed, and the group creates a fresh one that resumes from
  the last checkpoint (T1, T2); `on_host_maintenance TERMINATE`, which every GPU VM needs,
  also on a2/a3/g2 whose GPUs come with the machine type and are therefore not declared as
  guest accelerators (Compute Engine docs, "GPU machine types": the accelerator-optimized
  types attach their GPUs automatically); `max_run_duration` (T5); local SSD scratch disks,
  375 GB NVMe each, the smallest count Compute Engine allows for the type, none declared
  on types with bundled local SSD (they come with it, D3); shielded VM; no external IP;
  OS Login and no project-wide SSH keys; the training tier's own service account;
- the node bootstrap of `aistack.node` as the `startup-script` (GCP blocks on): the local
  SSDs striped, the pinned dataset version synced from the same-region bucket (D3, D4),
  checkpoints flushed on a preemption or host-maintenance notice and restored at boot,
  the idle watchdog and wall clock deleting the VM *through the group* (C5, T5), GPU
  metrics and logs through the Ops Agent (T3, T6);
- a regional managed instance group with target size 0 that `pulumi up` never resets
  (`ignore_changes` on targetSize: runs and watchdogs own the size) and autohealing on a
  TCP health check of the port the Network lets Google's checkers reach;
- alert policies on the Ops Agent's GPU metric: starvation (T3) and idle GPUs (C5);
- the pool's logs routed to a regional log bucket with a retention (T6, C4);
- `submit_command`: a run is one VM created in the group with the run's manifest (run id,
  seed, commit, config hash, dataset version, image) as per-instance metadata and as
  `manifest.json` beside its checkpoints (D4, E3-E5);
- `quota_needs()` for gcp.GpuQuota (C1).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Literal

import pulumi
import pulumi_gcp as gcp
from pydantic import Field, field_validator

from aistack import catalog
from aistack.config import AistackModel, Governance
from aistack.contracts.capacity import CapacityNeed
from aistack.contracts.gcp import MAX_NODES_VARIABLE
from aistack.contracts.images import pinned_image
from aistack.errors import Problems
from aistack.gcp._base import (
    LOCAL_SSD_GB,
    catalogued_gpu_machine,
    child_opts,
    labels_for,
    resource_id_from,
    scoped_id,
)
from aistack.gcp._boot_image import pinned_boot_image
from aistack.gcp._kms import compute_disk_key
from aistack.gcp._logs import regional_log_bucket
from aistack.gcp.gpu_node_pool import LOCAL_SSD_COUNTS
from aistack.gcp.gpu_node_pool import _markets as markets_of
from aistack.node import NodeBootstrapConfig, render_startup_script

with warnings.catch_warnings():
    # Touching pulumi_gcp.monitoring imports it, and its deprecated getSecretVersion warns
    # (as in budget_guard): silenced once here.
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"pulumi_gcp(\.|$)")
    _ = gcp.monitoring.AlertPolicy, gcp.logging.ProjectSink, gcp.compute.RegionInstanceTemplate

if TYPE_CHECKING:
    from aistack.gcp.dataset_bucket import DatasetBucket
    from aistack.gcp.network import Network
    from aistack.gcp.project_services import ProjectServices

__all__ = [
    "GPU_UTILIZATION_METRIC",
    "LOCAL_SSD_GB",
    "TrainingPool",
    "TrainingPoolArgs",
    "local_ssd_count",
]

TOKEN = "aistack:index:GcpTrainingPool"
#: The Ops Agent's GPU utilisation metric, read through NVML on every GPU VM (Cloud
#: Monitoring, "Ops Agent metrics": agent.googleapis.com/gpu/utilization, percent per GPU).
GPU_UTILIZATION_METRIC = "agent.googleapis.com/gpu/utilization"
#: The machine families whose GPUs come with the machine type (Compute Engine docs, "GPU
#: machine types": A2, A3 and G2 attach their GPUs automatically; guest accelerators are
#: declared only for N1).
BUNDLED_GPU_FAMILIES = ("a2-", "a3-", "g2-")
#: Cloud Logging log buckets keep logs 1 to 3650 days (Logging API, LogBucket.retentionDays).
_RETENTION = (1, 3650)
API_SERVICES = (
    "compute.googleapis.com",
    "storage.googleapis.com",
    "logging.googleapis.com",
    "monitoring.googleapis.com",
    # The log bucket's key (aistack.gcp._logs.log_bucket_key).
    "cloudkms.googleapis.com",
)
#: What a VM needs to delete itself through its group: the group update (deleteInstances)
#: and the instance deletion it performs (Compute Engine IAM permissions reference).
WATCHDOG_PERMISSIONS = (
    "compute.instanceGroupManagers.get",
    "compute.instanceGroupManagers.update",
    "compute.instances.delete",
)
NODE_ROLES = ("roles/logging.logWriter", "roles/monitoring.metricWriter")


def local_ssd_count(machine: catalog.InstanceType, requested: int | None = None) -> int:
    """Local SSDs a VM of `machine` gets: its bundled count, else `requested`, else the
    smallest count Compute Engine allows for it (the rule gcp.GpuNodePool uses too)."""
    if machine.nvme_disks:
        return machine.nvme_disks
    if requested is not None:
        return requested
    return LOCAL_SSD_COUNTS.get(machine.name, (1,))[0]


class TrainingPoolArgs(AistackModel):
    """A Spot GPU training pool on Compute Engine: machine, maximum, limits, data."""

    output_keywords = frozenset({"notification_channels"})

    governance: Governance
    region: str = Field(
        description="The pool's region: must equal the dataset and checkpoint buckets' (D2) "
        "and be allowed (C4)."
    )
    scheduler: Literal["mig", "gke"] = Field(
        "mig",
        description="'mig': VMs in a managed instance group (this component). 'gke' is "
        "gcp.GkeCluster with gcp.GpuNodePool and k8s.TrainingQueue, not this component.",
    )
    machine_type: str = Field(
        description="A GPU machine type from the catalog, e.g. 'g2-standard-8' (1 x L4) or "
        "'a3-highgpu-8g' (8 x H100); its GPUs and bundled local SSDs come with it."
    )
    market: Literal["spot", "on-demand"] = Field(
        "spot", description="Spot (default): a fraction of the price; runs resume (T1, T2)."
    )
    max_nodes: int = Field(ge=1, le=1000, description="Most VMs at once: the cost cap. Required.")
    image: str = Field(description="Training image by digest (E1): repo@sha256:<64 hex>.")
    source_image: str = Field(
        description="The VM's boot image, pinned by name: projects/<p>/global/images/<name> "
        "(not a family/ reference, which changes under the pool, E1). It needs the NVIDIA "
        "driver built in (the VMs boot with Secure Boot and no internet path), gcloud and "
        "the Ops Agent: a Deep Learning VM `-nvidia-<driver>-v<date>` image (others of "
        "that project are refused) or the team's own (docs/real-boot.md).",
    )
    max_runtime_minutes: int = Field(
        ge=10,
        description="Hard wall-clock limit per VM (T5): `max_run_duration` and the node's "
        "own clock. Required.",
    )
    idle_minutes: int = Field(30, ge=5, description="Idle minutes before a VM deletes itself.")
    idle_gpu_util_percent: int = Field(5, ge=0, le=100, description="Idle below this GPU %.")
    starvation_gpu_util_percent: int = Field(
        40, ge=1, le=100, description="Alert when running VMs average GPU use below this (T3)."
    )
    starvation_minutes: int = Field(30, ge=5, description="...for this long (T3).")
    local_ssds: int | None = Field(
        None,
        ge=1,
        description="Local SSDs (375 GB NVMe each) for the dataset cache (D3). Default: the "
        "machine's bundled count (A2 Ultra, A3), else the smallest count it allows.",
    )
    boot_disk_gb: int = Field(200, ge=50, description="Boot disk (pd-balanced) size.")
    dataset_prefix: str = Field(
        "", description="Prefix in the dataset bucket holding one sub-prefix per version."
    )
    dataset_version: str | None = Field(
        None, description="Pinned dataset version; default: the dataset bucket's (D4)."
    )
    checkpoint_prefix: str = Field("runs", description="Prefix for checkpoints and manifests.")
    log_retention_days: int = Field(
        90, description="Days the pool's regional log bucket keeps logs (T6), 1 to 3650."
    )
    gpu_metrics: Literal["nvml", "dcgm"] = Field(
        "nvml", description="The Ops Agent's GPU metrics (see aistack.node.ops_agent_config)."
    )
    notification_channels: tuple[str, ...] = Field(
        (), description="Monitoring notification channel ids the alert policies notify."
    )

    @field_validator("machine_type")
    @classmethod
    def _a_catalogued_gpu_machine(cls, machine: str) -> str:
        return catalogued_gpu_machine(machine)

    @field_validator("image")
    @classmethod
    def _image_by_digest(cls, image: str) -> str:
        return pinned_image(image, "image")

    @field_validator("source_image")
    @classmethod
    def _pinned_boot_image(cls, image: str) -> str:
        return pinned_boot_image(image)

    @field_validator("log_retention_days")
    @classmethod
    def _retention(cls, days: int) -> int:
        if not _RETENTION[0] <= days <= _RETENTION[1]:
            raise ValueError(f"{days} is not a log bucket retention. Fix: use 1 to 3650 days (T6).")
        return days

    @property
    def machine(self) -> catalog.InstanceType:
        return catalog.get(self.machine_type, cloud="gcp")


class TrainingPool(pulumi.ComponentResource):
    """Spot GPU VMs in a regional managed instance group, 0 to `max_nodes`."""

    args: TrainingPoolArgs
    template: gcp.compute.RegionInstanceTemplate
    group: gcp.compute.RegionInstanceGroupManager
    group_name: str

    def __init__(
        self,
        name: str,
        args: TrainingPoolArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        services: ProjectServices | None = None,
        network: Network | None = None,
        dataset: DatasetBucket | None = None,
        checkpoints: DatasetBucket | None = None,
        notification_channels: pulumi.Input[list[str]] | None = None,
    ) -> None:
        """`services`: the stack's ProjectServices. `network`: the gcp.Network whose
        training tier (subnet, service account, zones, health-check port) the VMs use.
        `dataset` / `checkpoints`: DatasetBuckets of kind 'dataset' and 'checkpoints' in
        the pool's region. `notification_channels` may be Outputs (e.g. a BudgetGuard's)."""
        group_name = scoped_id(f"{resource_id_from(name)}-mig", limit=63)

        def checks(args: TrainingPoolArgs) -> None:
            self._check(name, args, group_name, services, network, dataset, checkpoints)

        # Everything, wiring included, is checked before anything exists.
        args = TrainingPoolArgs.validate_with(
            args,
            checks,
            where=name,
            wiring={
                "services": services,
                "network": network,
                "dataset": dataset,
                "checkpoints": checkpoints,
            },
        )[0]
        assert services and network and dataset and checkpoints
        super().__init__(
            TOKEN,
            name,
            {"scheduler": args.scheduler, "region": args.region, "market": args.market},
            opts,
        )
        self.args = args
        self._name = name
        self.region = args.region
        self.project = services.project
        self.group_name = group_name
        self.zones = tuple(network.zones("training"))
        self.dataset_version = args.dataset_version or (
            dataset.args.dataset.version if dataset.args.dataset else "unset"
        )
        # Every resource waits for the APIs it is created through.
        self._api_deps = services.enabling(*API_SERVICES)
        self.labels = labels_for(args.governance, workload="training", **{"aistack-pool": name})
        # The VMs run as the network's training account: the firewall admits them by it.
        self.service_account_email = network.service_account("training")
        dataset_prefix = args.dataset_prefix.strip("/")
        checkpoint_prefix = args.checkpoint_prefix.strip("/")

        self._grant_identity(dataset, checkpoints, dataset_prefix, checkpoint_prefix)
        self._vm_template(network, dataset, checkpoints, dataset_prefix, checkpoint_prefix)
        self._instance_group(network)
        self._observability(notification_channels)
        self._outputs()

    # ---- the steps, in the order they run -------------------------------------------------

    def _grant_identity(
        self,
        dataset: DatasetBucket,
        checkpoints: DatasetBucket,
        dataset_prefix: str,
        checkpoint_prefix: str,
    ) -> None:
        """What the training account may do: write logs and metrics, read the dataset,
        write checkpoints, and delete its own VM through its group (and nothing else's)."""
        name, apis, group_name = self._name, self._api_deps, self.group_name
        member = pulumi.Output.concat("serviceAccount:", self.service_account_email)
        self.node_grants = [
            gcp.projects.IAMMember(
                f"{name}-{role.rsplit('.', 1)[-1].lower()}",
                project=self.project,
                role=role,
                member=member,
                opts=child_opts(self, depends_on=apis),
            )
            for role in NODE_ROLES
        ]
        self.dataset_grant = dataset.grant_read(member, prefix=dataset_prefix, name=name)
        self.checkpoint_grant = checkpoints.grant_write(member, prefix=checkpoint_prefix, name=name)
        self.watchdog_role = gcp.projects.IAMCustomRole(
            f"{name}-watchdog",
            project=self.project,
            role_id=_custom_role_id(name),
            title=f"aistack {name}: a VM deletes itself through its group"[:100],
            description="aistack idle watchdog and wall clock (C5, T5)",
            permissions=list(WATCHDOG_PERMISSIONS),
            opts=child_opts(self, depends_on=apis),
        )
        group_path = f"projects/{self.project}/regions/{self.region}/instanceGroupManagers/"
        self.watchdog_grant = gcp.projects.IAMMember(
            f"{name}-watchdog-grant",
            project=self.project,
            role=self.watchdog_role.name,
            member=member,
            # IAM Conditions (resource attributes): only this group, and only its VMs,
            # whose names start with the group's base instance name.
            condition=gcp.projects.IAMMemberConditionArgs(
                title=f"aistack-{group_name}"[:100],
                description=f"only the group {group_name} and its VMs",
                expression=(
                    f'resource.name == "{group_path}{group_name}" || '
                    f'resource.name.extract("/instances/{{vm}}").startsWith("{group_name}-")'
                ),
            ),
            opts=child_opts(self, depends_on=apis),
        )

    def _vm_template(
        self,
        network: Network,
        dataset: DatasetBucket,
        checkpoints: DatasetBucket,
        dataset_prefix: str,
        checkpoint_prefix: str,
    ) -> None:
        """The VM every run gets: Spot (or on-demand), deleted rather than stopped, a
        wall-clock limit, local SSDs, no external IP, and the node bootstrap as its
        startup script once the buckets' names are known."""
        args, name, machine = self.args, self._name, self.args.machine
        apis, labels = self._api_deps, self.labels
        self.dataset_uri = dataset.bucket_name.apply(
            lambda bucket: f"gs://{bucket}/{dataset_prefix}".rstrip("/")
        )
        self.checkpoint_uri = checkpoints.bucket_name.apply(
            lambda bucket: f"gs://{bucket}/{checkpoint_prefix}".rstrip("/")
        )
        self.startup_script = pulumi.Output.all(self.dataset_uri, self.checkpoint_uri).apply(
            lambda uris: self._startup_script(args, uris[0], uris[1])
        )
        ssds = local_ssd_count(machine, args.local_ssds)
        self.local_ssds = ssds
        spot = args.market == "spot"
        # The boot disk under a customer key, as every store of the stack (it holds the
        # images the node pulled and what the run wrote outside the buckets).
        disk_key, self.disk_key_grant = compute_disk_key(
            self, name, project=self.project, region=args.region, labels=labels, depends_on=apis
        )
        disks = [
            gcp.compute.RegionInstanceTemplateDiskArgs(
                boot=True,
                auto_delete=True,
                source_image=args.source_image,
                disk_type="pd-balanced",
                disk_size_gb=args.boot_disk_gb,
                disk_encryption_key=gcp.compute.RegionInstanceTemplateDiskDiskEncryptionKeyArgs(
                    kms_key_self_link=disk_key
                ),
            ),
            # Bundled local SSDs come with the machine type (A2 Ultra, A3): none declared.
            *(
                gcp.compute.RegionInstanceTemplateDiskArgs(
                    type="SCRATCH",
                    disk_type="local-ssd",
                    interface="NVME",
                    disk_size_gb=LOCAL_SSD_GB,
                    auto_delete=True,
                )
                for _ in range(0 if machine.nvme_disks else ssds)
            ),
        ]
        self.template = gcp.compute.RegionInstanceTemplate(
            f"{name}-template",
            project=self.project,
            region=args.region,
            description=f"aistack training pool {name}",
            machine_type=args.machine_type,
            disks=disks,
            # a2/a3/g2: the GPUs come with the machine type; declaring them is an error.
            guest_accelerators=None,
            network_interfaces=[
                # No access_configs: no external IP; egress through Private Google Access
                # or the Network's NAT.
                gcp.compute.RegionInstanceTemplateNetworkInterfaceArgs(
                    subnetwork=network.subnet_self_link("training")
                )
            ],
            scheduling=gcp.compute.RegionInstanceTemplateSchedulingArgs(
                provisioning_model="SPOT" if spot else "STANDARD",
                preemptible=spot,
                # Spot requires automatic_restart false (pulumi-gcp scheduling docstring).
                automatic_restart=not spot,
                # GPU VMs cannot live-migrate (Compute Engine docs, "GPU host maintenance").
                on_host_maintenance="TERMINATE",
                # DELETE, not STOP: a stopped VM keeps billing its disks, and the group
                # replaces a deleted one; max_run_duration takes only DELETE.
                instance_termination_action="DELETE",
                max_run_duration=gcp.compute.RegionInstanceTemplateSchedulingMaxRunDurationArgs(
                    seconds=args.max_runtime_minutes * 60
                ),
            ),
            shielded_instance_config=gcp.compute.RegionInstanceTemplateShieldedInstanceConfigArgs(
                enable_secure_boot=True, enable_vtpm=True, enable_integrity_monitoring=True
            ),
            service_account=gcp.compute.RegionInstanceTemplateServiceAccountArgs(
                email=self.service_account_email,
                # IAM decides what the account may do; the scope only must not narrow it.
                scopes=["https://www.googleapis.com/auth/cloud-platform"],
            ),
            metadata={
                "startup-script": self.startup_script,
                "enable-oslogin": "TRUE",
                "block-project-ssh-keys": "TRUE",
                # The boot writes what it lacks to aistack/ guest attributes (node_report in
                # the node's lib.sh); the metadata server takes them only with this on
                # (compute/docs/metadata/manage-guest-attributes).
                "enable-guest-attributes": "TRUE",
                "aistack-image": args.image,
                "aistack-dataset-version": self.dataset_version,
                "aistack-pool": name,
            },
            labels=labels,
            # The whole network (its firewall rules) when it is the component itself.
            opts=child_opts(
                self,
                depends_on=[
                    *apis,
                    self.disk_key_grant,
                    *([network] if isinstance(network, pulumi.Resource) else []),
                ],
            ),
        )

    def _instance_group(self, network: Network) -> None:
        """The regional group: 0 VMs until a run asks (`pulumi up` never resets the size),
        autohealing on the port the network lets Google's health checkers reach."""
        args, name, apis, group_name = self.args, self._name, self._api_deps, self.group_name
        port = network.args.training_health_check_port
        self.health_check = gcp.compute.HealthCheck(
            f"{name}-health",
            project=self.project,
            description=f"aistack training pool {name}: the VM is up",
            tcp_health_check=gcp.compute.HealthCheckTcpHealthCheckArgs(port=port),
            check_interval_sec=60,
            timeout_sec=10,
            healthy_threshold=1,
            # Five misses in a row (5 minutes) before the group recreates a VM: a busy
            # trainer must not look dead.
            unhealthy_threshold=5,
            log_config=gcp.compute.HealthCheckLogConfigArgs(enable=True),
            opts=child_opts(self, depends_on=apis),
        )
        self.group = gcp.compute.RegionInstanceGroupManager(
            f"{name}-mig",
            name=group_name,
            project=self.project,
            region=args.region,
            base_instance_name=group_name,
            description=f"aistack training pool {name}",
            versions=[
                # A template is immutable: a change replaces it under a new auto-name, so
                # its self link changes and the group picks the new one up.
                gcp.compute.RegionInstanceGroupManagerVersionArgs(
                    name="primary", instance_template=self.template.self_link
                )
            ],
            # Start empty (C5): runs add VMs (submit_command), watchdogs remove them.
            target_size=0,
            distribution_policy_zones=list(self.zones),
            # One zone per group at a time: multi-node runs stay close for NCCL.
            distribution_policy_target_shape="ANY_SINGLE_ZONE",
            update_policy=gcp.compute.RegionInstanceGroupManagerUpdatePolicyArgs(
                # A new template applies to new VMs; running runs are not replaced.
                type="OPPORTUNISTIC",
                minimal_action="REPLACE",
                # Only EVEN distribution redistributes (MIG docs, "Regional MIGs").
                instance_redistribution_type="NONE",
                max_surge_fixed=0,
                # Regional groups: 0 or at least the number of zones (MIG update docs).
                max_unavailable_fixed=len(self.zones),
            ),
            auto_healing_policies=gcp.compute.RegionInstanceGroupManagerAutoHealingPoliciesArgs(
                health_check=self.health_check.id,
                # Boot, driver load, dataset sync: ten minutes before the first verdict.
                initial_delay_sec=600,
            ),
            wait_for_instances=False,
            # Runs and watchdogs own the size between deployments; `pulumi up` must not
            # reset a running pool to 0.
            opts=child_opts(self, depends_on=apis, ignore_changes=["targetSize"]),
        )
        self.group_id = self.group.id

    def _observability(self, notification_channels: pulumi.Input[list[str]] | None) -> None:
        """Alerts on starved (T3) and idle (C5) GPUs, and the VMs' logs in a regional log
        bucket with a retention (T6)."""
        args, name, apis, group_name = self.args, self._name, self._api_deps, self.group_name
        channels = notification_channels or list(args.notification_channels) or None
        self.starvation_alert = self._alert(
            "gpu-starvation",
            f"Pool {name}: average GPU utilisation below {args.starvation_gpu_util_percent}% "
            f"for {args.starvation_minutes} minutes while VMs run. Profile the data "
            "pipeline (checklist T3).",
            reducer="REDUCE_MEAN",
            threshold=args.starvation_gpu_util_percent,
            minutes=args.starvation_minutes,
            channels=channels,
        )
        self.idle_alert = self._alert(
            "gpu-idle",
            f"Pool {name}: every GPU below {args.idle_gpu_util_percent}% for "
            f"{args.idle_minutes + 15} minutes: the VMs' idle watchdog should have deleted "
            "them (checklist C5). Resize the group to 0.",
            reducer="REDUCE_MAX",
            threshold=args.idle_gpu_util_percent,
            minutes=args.idle_minutes + 15,
            channels=channels,
        )
        self.log_bucket, self.log_sink = regional_log_bucket(
            self,
            name,
            project=self.project,
            region=args.region,
            bucket_id=scoped_id(f"{resource_id_from(name)}-logs", limit=100),
            retention_days=args.log_retention_days,
            # Every log of the group's VMs: the Ops Agent's, the startup script's, syslog.
            log_filter=(
                'resource.type="gce_instance" AND '
                f'labels."compute.googleapis.com/resource_name"=~"^{group_name}-"'
            ),
            what=f"training pool {name}",
            contents="node and trainer logs",
            labels=labels_for(args.governance, workload="training"),
            depends_on=apis,
        )

    def _outputs(self) -> None:
        args, group_name = self.args, self.group_name
        self.register_outputs(
            {
                "scheduler": args.scheduler,
                "region": args.region,
                "group_name": group_name,
                "template": self.template.self_link,
                "service_account": self.service_account_email,
                "dataset_uri": self.dataset_uri,
                "dataset_version": self.dataset_version,
                "checkpoint_uri": self.checkpoint_uri,
                "log_bucket": self.log_bucket.id,
                "max_gpus": self.max_gpus,
                "submit_command": self.submit_command(),
            }
        )

    # ---- validation ------------------------------------------------------------------------

    @staticmethod
    def _check(
        name: str,
        args: TrainingPoolArgs,
        group_name: str,
        services: ProjectServices | None,
        network: Network | None,
        dataset: DatasetBucket | None,
        checkpoints: DatasetBucket | None,
    ) -> None:
        problems = Problems()
        if args.scheduler == "gke":
            problems.add(
                f"{name}.scheduler",
                "'gke' is not this component: on GKE the pool is a node pool and the queue "
                "is Kueue.",
                "use gcp.GkeCluster with gcp.GpuNodePool (and k8s.TrainingQueue on it).",
            )
        found = args.governance.region_problem(args.region, f"{name}.region", cloud="gcp")
        if found:
            problems.items.append(found)
        if len(group_name) > 63:
            problems.add(
                f"{name}",
                f"gives the group name {group_name!r}, over Compute Engine's 63 characters.",
                "use a shorter component name.",
            )
        assert services is not None and network is not None
        assert dataset is not None and checkpoints is not None
        problems.items.extend(services.missing(*API_SERVICES, where=name))
        machine = args.machine
        if not machine.offered_in(args.region):
            problems.add(
                f"{name}.machineType",
                f"{machine.name} is not offered in {args.region} (C2).",
                f"use a region among {list(machine.regions)}, or another machine.",
            )
        if args.market == "on-demand" and "on-demand" not in markets_of(machine):
            problems.add(
                f"{name}.market",
                f"{machine.name} is not sold on-demand: {machine.notes}",
                "use market spot, or the 8-GPU shape.",
            )
        allowed = LOCAL_SSD_COUNTS.get(args.machine_type)
        if args.local_ssds is not None:
            if machine.nvme_disks and args.local_ssds != machine.nvme_disks:
                problems.add(
                    f"{name}.localSsds",
                    f"{machine.name} comes with {machine.nvme_disks} local SSDs bundled.",
                    "leave localSsds unset.",
                )
            elif allowed and args.local_ssds not in allowed:
                problems.add(
                    f"{name}.localSsds",
                    f"{machine.name} attaches {list(allowed)} local SSDs, not {args.local_ssds}.",
                    f"use one of {list(allowed)}.",
                )
        for label, bucket, kind in (
            ("dataset", dataset, "dataset"),
            ("checkpoints", checkpoints, "checkpoints"),
        ):
            if bucket.region.lower() != args.region.lower():
                problems.add(
                    f"{name}.region",
                    f"the {label} bucket is in {bucket.region} but the pool is in "
                    f"{args.region}: every epoch would cross regions, slowly and billed "
                    "(checklist D2).",
                    f"put the pool in {bucket.region}, or the data in {args.region}.",
                )
            if bucket.args.kind != kind:
                problems.add(
                    f"{name}.{label}",
                    f"is a {bucket.args.kind!r} bucket.",
                    f"pass the DatasetBucket of kind {kind!r}.",
                )
        if network.region != args.region:
            problems.add(
                f"{name}.region",
                f"the network's subnets are in {network.region}, the pool in {args.region}.",
                "use the network of the pool's region.",
            )
        elif "training" not in network.subnetworks:
            problems.add(
                f"{name}.network",
                "has no training tier.",
                "list the pool's machine type in the network's trainingMachineTypes.",
            )
        else:
            if network.args.training_health_check_port is None:
                problems.add(
                    f"{name}.network",
                    "lets no health checker reach training VMs (trainingHealthCheckPort "
                    "unset): the group's autohealing would see every VM unhealthy and "
                    "recreate it.",
                    "set trainingHealthCheckPort on the network, e.g. 22.",
                )
            if machine.offered_in(args.region) and not network.zones("training"):
                problems.add(
                    f"{name}.network",
                    "plans no training zone that offers the pool's machine type (C2).",
                    f"add {machine.name} to the network's trainingMachineTypes.",
                )
        problems.raise_if_any()

    # ---- pieces ---------------------------------------------------------------------------

    def _startup_script(self, args: TrainingPoolArgs, dataset_uri: str, checkpoint_uri: str) -> str:
        config = NodeBootstrapConfig(
            cloud="gcp",
            scheduler="mig",
            region=args.region,
            instance_group=self.group_name,
            max_runtime_minutes=args.max_runtime_minutes,
            idle_minutes=args.idle_minutes,
            idle_gpu_util_percent=args.idle_gpu_util_percent,
            # OS Login sessions show in `who` and ss; no SSM agent on GCP.
            idle_process_names=(),
            dataset_uri=dataset_uri if self.dataset_version != "unset" else None,
            dataset_version=self.dataset_version if self.dataset_version != "unset" else None,
            checkpoint_uri=checkpoint_uri,
            gpu_metrics=args.gpu_metrics,
        )
        return render_startup_script(config)

    def _alert(
        self,
        role: str,
        documentation: str,
        *,
        reducer: str,
        threshold: int,
        minutes: int,
        channels: Any,
    ) -> gcp.monitoring.AlertPolicy:
        metric_filter = (
            f'metric.type="{GPU_UTILIZATION_METRIC}" AND resource.type="gce_instance" AND '
            f'metadata.user_labels."aistack-pool"="{self.labels["aistack-pool"]}"'
        )
        return gcp.monitoring.AlertPolicy(
            f"{self._name}-{role}",
            project=self.project,
            display_name=f"aistack {self._name}: {role}",
            combiner="OR",
            conditions=[
                gcp.monitoring.AlertPolicyConditionArgs(
                    display_name=f"{role}: GPU utilisation below {threshold}%",
                    condition_threshold=gcp.monitoring.AlertPolicyConditionConditionThresholdArgs(
                        filter=metric_filter,
                        comparison="COMPARISON_LT",
                        threshold_value=threshold,
                        duration=f"{minutes * 60}s",
                        aggregations=[
                            gcp.monitoring.AlertPolicyConditionConditionThresholdAggregationArgs(
                                alignment_period="300s",
                                per_series_aligner="ALIGN_MEAN",
                                cross_series_reducer=reducer,
                                group_by_fields=["resource.label.zone"],
                            )
                        ],
                        # No VMs, no data: nothing is wrong.
                        evaluation_missing_data="EVALUATION_MISSING_DATA_INACTIVE",
                    ),
                )
            ],
            documentation=gcp.monitoring.AlertPolicyDocumentationArgs(
                content=documentation, mime_type="text/markdown"
            ),
            notification_channels=channels,
            user_labels=self.labels,
            opts=child_opts(self, depends_on=self._api_deps),
        )

    @property
    def max_gpus(self) -> int:
        return self.args.max_nodes * self.args.machine.gpu_count

    def submit_command(self) -> pulumi.Output[str]:
        """The commands a user runs for one run, in a subshell (a refusal ends it, not the
        user's shell): the `maxNodes` check, the run's manifest beside its checkpoints, then
        one VM in the group carrying the manifest as per-instance metadata (a preempted VM
        comes back with the same name and metadata, so the run resumes as itself)."""
        args = self.args

        def command(checkpoint_uri: str) -> str:
            manifest = (
                '{"run_id":"%s","seed":"%s","code_commit":"%s","config_hash":"%s",'
                f'"dataset_version":"{self.dataset_version}","image":"{args.image}"}}'
            )
            return (
                "(RUN_ID=${RUN_ID:?set RUN_ID} SEED=${SEED:?set SEED} && "
                f"{self._cap_check()} && "
                "COMMIT=$(git rev-parse HEAD) CONFIG=$(sha256sum config.yaml | cut -c1-12) && "
                f'printf \'{manifest}\' "$RUN_ID" "$SEED" "$COMMIT" "$CONFIG" | '
                f'gcloud storage cp - "{checkpoint_uri}/$RUN_ID/manifest.json" && '
                f"gcloud compute instance-groups managed create-instance {self.group_name} "
                f'--region={args.region} --instance="{self.group_name}-$RUN_ID" '
                '--stateful-metadata="aistack-run-id=$RUN_ID,aistack-seed=$SEED,'
                "aistack-code-commit=$COMMIT,aistack-config-hash=$CONFIG,"
                f'aistack-dataset-version={self.dataset_version}")'
            )

        return self.checkpoint_uri.apply(command)

    def _cap_check(self) -> str:
        """POSIX shell that refuses a run the group has no room for: the group has no
        autoscaler, and `create-instance` adds one VM to its target size (it creates a
        per-instance config, which the group counts: hashicorp/terraform-provider-google
        #20662), so `maxNodes` holds only if every submit reads the target size first. The
        target size counts VMs being created and ones a preemption is recreating, not the
        ones a watchdog deleted through the group (Compute API, InstanceGroupManager.
        targetSize: "You can reduce this number by using the instanceGroupManager
        deleteInstances or abandonInstances methods"). Not atomic: see the docs."""
        args, group = self.args, self.group_name
        raise_it = (
            f"raise maxNodes of pool {self._name} in the stack's config (and the GPU quota "
            "gcp.GpuQuota files for it), run pulumi up and use the new submit_command"
        )
        return (
            f"{MAX_NODES_VARIABLE}={args.max_nodes} && "
            f"SIZE=$(gcloud compute instance-groups managed describe {group} "
            f"--region={args.region} --format='value(targetSize)') && "
            'case "$SIZE" in ""|*[!0-9]*) '
            f'echo "aistack: could not read the size of group {group} (got: $SIZE)." >&2; '
            "exit 1;; esac && "
            f'{{ [ "$SIZE" -lt "${MAX_NODES_VARIABLE}" ] || {{ '
            f'echo "aistack: refused: group {group} already has $SIZE of at most '
            f"${MAX_NODES_VARIABLE} VMs (maxNodes of training pool {self._name}). Wait "
            f'for a run to end, or {raise_it}." >&2; exit 1; }}; }}'
        )

    def quota_needs(self) -> list[CapacityNeed]:
        """The GPU quota the pool needs at its maximum (C1); its updates surge no VM."""
        return [
            CapacityNeed(
                pool=self._name,
                region=self.region,
                machine_types=(self.args.machine_type,),
                max_nodes=self.args.max_nodes,
                market=self.args.market,
            )
        ]


def _custom_role_id(name: str) -> str:
    """A custom role id (`[a-zA-Z0-9_.]{3,64}`, IAM API `roles.create`) from the name."""
    base = "".join(c if c.isalnum() else "_" for c in name)[:40]
    return scoped_id(f"aistack_{base}_watchdog", limit=64, separator="_")

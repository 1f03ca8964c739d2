"""`gcp.Notebook`: a Vertex AI Workbench instance that shuts itself down when idle.

The Google Cloud counterpart of `aws.Notebook`, with its three promises:

- idle shutdown (C5): the `idle-timeout-seconds` metadata, 10 minutes to 24 hours, default
  60 minutes (Workbench's own default is 180). Workbench stops the VM; the disks stay.
- no public access (S1): no external IP (`disable_public_ip`; without it Workbench gives
  the VM an ephemeral external address), in the network's private notebook subnet, shielded
  VM with secure boot, vTPM and integrity monitoring, root access off.
- its own identity (C6): the VM runs as the network's notebook-tier service account (the
  one its firewall rules admit; gcp.WorkloadIdentity's `notebook` workload, which starts
  with no roles), never the Compute Engine default account (Editor on the project). The
  component grants it what a notebook needs: read on the team's dataset bucket and
  `roles/logging.logWriter`, nothing else.

Reachable without an internet route: the network's notebook tier brings private DNS zones
for the domains Workbench uses beyond googleapis.com (`notebooks.cloud.google.com`,
`*.notebooks.googleusercontent.com`, `*.kernels.googleusercontent.com`, ...; gcp.Network
`WORKBENCH_PRIVATE_DNS_DOMAINS`, from the Workbench docs' "Network configuration options"),
answered with the private.googleapis.com addresses its firewall admits.

Same region as the data (D2): the zone is one of the network's notebook zones, in the
dataset bucket's region, offering the machine type (catalog, C2). The boot and data disks
hold the users' work: CMEK-encrypted (a new key, or a shared one), and kept on `pulumi
destroy` unless `allowDestroyWithData`. Why each setting: docs/components/gcp/notebook.md.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_gcp as gcp
from pydantic import Field, field_validator, model_validator

from aistack import catalog
from aistack._adopt import adopting, found
from aistack.config import AistackModel, Governance
from aistack.contracts.capacity import CapacityNeed
from aistack.errors import Problems
from aistack.gcp._base import child_opts, labels_for, resource_id_from, scoped_id, stateful_opts
from aistack.gcp._kms import KMS_ENCRYPTER, stack_key
from aistack.gcp.gpu_node_pool import ACCELERATOR_TYPES
from aistack.gcp.project_services import ProjectServices

if TYPE_CHECKING:
    from aistack.gcp.dataset_bucket import DatasetBucket
    from aistack.gcp.network import Network

__all__ = [
    "DEFAULT_MACHINE_TYPE",
    "IDLE_TIMEOUT_KEY",
    "MAX_IDLE_MINUTES",
    "MIN_IDLE_MINUTES",
    "Notebook",
    "NotebookArgs",
    "RESERVED_METADATA_KEYS",
    "TOKEN",
    "WORKBENCH_ACCELERATORS",
]

TOKEN = "aistack:index:GcpNotebook"
WORKLOAD = "notebook"
NOTEBOOKS_API = "notebooks.googleapis.com"
COMPUTE_API = "compute.googleapis.com"
KMS_API = "cloudkms.googleapis.com"
LOGGING_API = "logging.googleapis.com"
APIS = (NOTEBOOKS_API, COMPUTE_API, KMS_API, LOGGING_API)

#: Workbench's idle shutdown is set by this metadata key, in seconds (Vertex AI Workbench
#: docs, "Manage features through metadata": `idle-timeout-seconds`, an integer, default
#: 10800 = 180 minutes; "Idle shutdown": `gcloud workbench instances create ...
#: --metadata=idle-timeout-seconds=86400`).
IDLE_TIMEOUT_KEY = "idle-timeout-seconds"
#: The inactivity period "can be set to any integer value from 10 to 1440" minutes (Vertex
#: AI Workbench docs, "Idle shutdown"; the Colab/Vertex NotebookIdleShutdownConfig API
#: states the same range, 10 * 60 to 1440 * 60 seconds).
MIN_IDLE_MINUTES = 10
MAX_IDLE_MINUTES = 1440
#: Idle shutdown runs only with guest attributes on (Workbench docs, "Idle shutdown" ->
#: "Requirements for running idle shutdown"); they are on by default, aistack says so.
GUEST_ATTRIBUTES_KEY = "enable-guest-attributes"
#: "Root access" and "Terminal access" (Workbench docs, "Manage features through
#: metadata": `true` turns each off; both default to `false`, i.e. on).
DISABLE_ROOT_KEY = "notebook-disable-root"
DISABLE_TERMINAL_KEY = "notebook-disable-terminal"
#: Keys Workbench reserves for itself and overwrites with its own values (Workbench docs,
#: "Manage features through metadata" -> "Protected metadata keys"; a subset of that list:
#: the ones a user is tempted to set). `install-nvidia-driver` is among them: Workbench
#: installs the GPU driver for an instance with accelerators.
RESERVED_METADATA_KEYS = (
    "install-nvidia-driver",
    "install-monitoring-agent",
    "proxy-mode",
    "proxy-url",
    "serial-port-logging-enable",
    "service-account-mode",
    "shutdown-script",
    "framework",
    "notebooks-api",
    "title",
    "version",
)
#: A CPU machine for editing code, reading samples and submitting jobs; GPUs per notebook
#: when the work needs one (as aws.Notebook defaults to ml.t3.medium).
DEFAULT_MACHINE_TYPE = "e2-standard-4"
#: Compute Engine accelerator type (as GKE and the catalog name them) to the Workbench
#: AcceleratorConfig enum (pulumi-gcp InstanceGceSetupAcceleratorConfigArgs.type: NVIDIA_L4,
#: NVIDIA_TESLA_A100, NVIDIA_A100_80GB, NVIDIA_H100_80GB, NVIDIA_H100_MEGA_80GB, ...).
WORKBENCH_ACCELERATORS = {
    "nvidia-l4": "NVIDIA_L4",
    "nvidia-tesla-a100": "NVIDIA_TESLA_A100",
    "nvidia-a100-80gb": "NVIDIA_A100_80GB",
    "nvidia-h100-80gb": "NVIDIA_H100_80GB",
    "nvidia-h100-mega-80gb": "NVIDIA_H100_MEGA_80GB",
}
#: Workbench's disk defaults (pulumi-gcp InstanceGceSetupBootDiskArgs / DataDisksArgs:
#: boot 150 GB "recommended", data 100 GB), both at most 64000 GB.
BOOT_DISK_GB = 150
DATA_DISK_GB = 100
MAX_DISK_GB = 64000
LOG_WRITER = "roles/logging.logWriter"
#: The Compute Engine default service account: Editor on the project unless an org policy
#: stops the grant (IAM docs, "Service accounts" -> default service accounts).
DEFAULT_COMPUTE_SA = re.compile(r"^\d+-compute@developer\.gserviceaccount\.com$")
#: Compute Engine instance names, which the Workbench instance id becomes (RFC 1035: a
#: lowercase letter, then up to 62 lowercase letters, digits or hyphens, not ending in one).
_INSTANCE_NAME = r"^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$"
_ZONE = re.compile(r"^([a-z]+-[a-z]+\d+)-[a-z]$")
_EMAIL = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"


class NotebookArgs(AistackModel):
    """One Workbench instance: machine, zone, idle timeout, who may use it."""

    governance: Governance = Field(
        description="Owner, cost centre and allowed regions; required. Labels the instance "
        "and key; the zone's region must be among allowedRegions (C4)."
    )
    machine_type: str = Field(
        DEFAULT_MACHINE_TYPE,
        pattern=r"^[a-z0-9]+-[a-z0-9-]+$",
        description="Compute Engine machine type. Default e2-standard-4 (4 vCPU, 16 GB, "
        "about $0.13/hour); a GPU machine from the catalog (e.g. 'g2-standard-8', 1 x L4) "
        "gets its GPUs declared and Workbench installs the driver.",
    )
    zone: str | None = Field(
        None,
        description="Zone of the instance: one of the network's notebook zones, in the "
        "dataset bucket's region (D2), offering the machine type (C2). Default: the first "
        "such zone.",
    )
    idle_minutes: int = Field(
        60,
        ge=MIN_IDLE_MINUTES,
        le=MAX_IDLE_MINUTES,
        description="Minutes without kernel or terminal activity before Workbench stops the "
        "VM (C5; idle-timeout-seconds). Default 60: a forgotten GPU costs an hour, not a "
        "weekend. Workbench accepts 10 to 1440; rule AIS-C5-08 accepts at most 240.",
    )
    owner: str | None = Field(
        None,
        pattern=_EMAIL,
        description="The one user (e-mail) who may open JupyterLab ('Single user' access "
        "mode, instance_owners). Default: every user who may act as the notebook's "
        "service account (roles/iam.serviceAccountUser on it); grant that deliberately.",
    )
    allow_root: bool = Field(
        False,
        description="Let the Jupyter user run sudo. Off (notebook-disable-root): root could "
        "stop the agent that reports activity for idle shutdown, or read the VM's other "
        "credentials.",
    )
    allow_terminal: bool = Field(
        True,
        description="JupyterLab's terminal. On: a notebook cell runs shell commands as the "
        "same user anyway, so turning the terminal off (notebook-disable-terminal) removes "
        "convenience, not capability. Set false where policy asks for it.",
    )
    disable_proxy_access: bool = Field(
        False,
        description="Do not register with the Workbench proxy. Off (the proxy stays): the "
        "proxy is how users reach JupyterLab on an instance with no external IP, over HTTPS "
        "with Google sign-in and IAM; without it the only way in is an SSH tunnel, which "
        "needs an SSH firewall rule (gcp.Network allowIapSsh) and OS-level accounts.",
    )
    boot_disk_gb: int = Field(
        BOOT_DISK_GB, ge=150, le=MAX_DISK_GB, description="Boot disk (PD balanced), GB."
    )
    data_disk_gb: int = Field(
        DATA_DISK_GB,
        ge=10,
        le=MAX_DISK_GB,
        description="Data disk holding /home/jupyter (PD balanced), GB: the users' work.",
    )
    kms_key_name: str | None = Field(
        None,
        pattern=r"^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$",
        description="Share an existing Cloud KMS key (in the instance's region) for the "
        "disks; default: a new key ring and key, rotated every 90 days.",
    )
    allow_google_managed_encryption: bool = Field(
        False,
        description="Encrypt the disks with Google-managed keys (GMEK), no key of the "
        "stack's own. Off: CMEK (checkov CKV2_GCP_27).",
    )
    allow_public_ip: bool = Field(
        False,
        description="Give the VM an external IP. Off: no address the internet can reach; "
        "users come in through the proxy (S1).",
    )
    extra_metadata: dict[str, str] = Field(
        default_factory=dict,
        description="More Workbench metadata (e.g. {'notebook-disable-downloads': 'true'}). "
        "Keys aistack sets, and keys Workbench reserves, are refused.",
    )
    instance_name: str | None = Field(
        None,
        pattern=_INSTANCE_NAME,
        description="The instance id (and VM name): 1-63 lowercase letters, digits and "
        "hyphens, starting with a letter; default: the component name and the stack's digest, "
        "as instance ids are unique in their zone and the project's other stacks pick theirs.",
    )
    allow_destroy_with_data: bool = Field(
        False,
        description="Let `pulumi destroy` delete the instance, its disks and its key. Off: "
        "retained, with deletion protection on and deletion_policy PREVENT (and protected "
        "in prod).",
    )

    @field_validator("extra_metadata")
    @classmethod
    def _metadata_aistack_does_not_set(cls, metadata: dict[str, str]) -> dict[str, str]:
        ours = (IDLE_TIMEOUT_KEY, GUEST_ATTRIBUTES_KEY, DISABLE_ROOT_KEY, DISABLE_TERMINAL_KEY)
        taken = sorted(k for k in metadata if k in ours)
        if taken:
            raise ValueError(
                f"{taken} are set by aistack from the arguments. Fix: use idleMinutes, "
                "allowRoot and allowTerminal."
            )
        reserved = sorted(k for k in metadata if k in RESERVED_METADATA_KEYS)
        if reserved:
            raise ValueError(
                f"{reserved} are reserved by Workbench, which overwrites them (Workbench "
                "docs, 'Protected metadata keys'). Fix: leave them out."
            )
        return metadata

    @model_validator(mode="after")
    def _one_encryption(self) -> NotebookArgs:
        if self.kms_key_name and self.allow_google_managed_encryption:
            raise ValueError(
                "kmsKeyName names a key, allowGoogleManagedEncryption asks for none. Fix: "
                "set one of them."
            )
        return self

    @property
    def machine(self) -> catalog.InstanceType | None:
        """The catalog's entry when the machine type is a GPU machine."""
        return catalog.find("gcp", self.machine_type)

    def metadata(self) -> dict[str, str]:
        return {
            **self.extra_metadata,
            IDLE_TIMEOUT_KEY: str(self.idle_minutes * 60),
            GUEST_ATTRIBUTES_KEY: "true",
            DISABLE_ROOT_KEY: "false" if self.allow_root else "true",
            DISABLE_TERMINAL_KEY: "false" if self.allow_terminal else "true",
        }


def region_of_zone(zone: str) -> str:
    match = _ZONE.fullmatch(zone)
    return match.group(1) if match else zone


def _zones(args: NotebookArgs, network: Network, name: str, problems: Problems) -> str | None:
    """The notebook's zone, or None with the problem recorded."""
    if "notebook" not in network.subnetworks:
        problems.add(
            f"{name}.network",
            f"the network has no notebook tier (its tiers: {list(network.subnetworks)}).",
            "set notebook: true on the network.",
        )
        return None
    region = network.region
    offered = list(network.zones("notebook"))
    machine = args.machine
    if machine is not None:
        if not machine.offered_in(region):
            problems.add(
                f"{name}.machineType",
                f"{machine.name} ({machine.gpu_label}) is not offered in {region} (C2).",
                f"use a network in one of {list(machine.regions)}, or another machine.",
            )
            return None
        offered = [z for z in offered if z in machine.zones(region)]
    if args.zone is not None:
        if args.zone not in offered:
            what = f" offering {machine.name}" if machine is not None else ""
            problems.add(
                f"{name}.zone",
                f"{args.zone} is not one of the network's notebook zones{what} ({offered}).",
                f"use one of {offered}." if offered else "choose another machine type.",
            )
            return None
        return args.zone
    if not offered:
        assert machine is not None
        problems.add(
            f"{name}.machineType",
            f"no notebook zone of {region} offers {machine.name} ({machine.gpu_label}): the "
            f"network plans {list(network.zones('notebook'))} (C2).",
            "add the machine type to the network's notebookMachineTypes, or pick another.",
        )
        return None
    return sorted(offered)[0]


class Notebook(pulumi.ComponentResource):
    """A private Workbench instance with idle shutdown, its own identity and CMEK disks."""

    args: NotebookArgs
    instance: gcp.workbench.Instance
    instance_name: pulumi.Output[str]
    instance_id: pulumi.Output[str]
    proxy_uri: pulumi.Output[str]
    state: pulumi.Output[str]
    service_account_email: pulumi.Output[str]
    kms_key_name: pulumi.Output[str] | None
    zone: str
    region: str

    def __init__(
        self,
        name: str,
        args: NotebookArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        services: ProjectServices | None = None,
        network: Network | None = None,
        bucket: DatasetBucket | None = None,
    ) -> None:
        """`services`: the stack's ProjectServices (its project is the notebook's).
        `network`: the gcp.Network with a notebook tier: the instance sits in its notebook
        subnet and runs as its notebook service account. `bucket`: the team's dataset
        DatasetBucket, in the same region (D2); the notebook may read it."""

        def checks(args: NotebookArgs) -> str:
            problems = Problems()
            assert services is not None and network is not None
            problems.items.extend(services.missing(*APIS, where=name))
            zone = _zones(args, network, name, problems)
            region = region_of_zone(zone) if zone else network.region
            found = args.governance.region_problem(region, f"{name}.zone", cloud="gcp")
            if found:
                problems.items.append(found)
            if network.project != services.project:
                problems.add(
                    f"{name}.network",
                    "the network is in another project than the notebook.",
                    "use the network of this project.",
                )
            if bucket is not None:
                if bucket.args.kind != "dataset":
                    problems.add(
                        f"{name}.bucket",
                        f"the bucket is of kind {bucket.args.kind!r}: a notebook reads the "
                        "team's dataset bucket.",
                        "pass the stack's dataset DatasetBucket.",
                    )
                if str(bucket.region).lower() != region.lower():
                    problems.add(
                        f"{name}.zone",
                        f"the dataset bucket is in {bucket.region}, the notebook in {region}: "
                        "every read would cross regions, slower and billed per GB (D2).",
                        f"use a network and zone in {bucket.region}.",
                    )
            problems.raise_if_any()
            assert zone is not None
            return zone

        args, zone = NotebookArgs.validate_with(
            args, checks, where=name, wiring={"services": services, "network": network}
        )
        assert services is not None and network is not None
        super().__init__(TOKEN, name, {"machineType": args.machine_type, "zone": zone}, opts)
        self.args = args
        self.zone = zone
        self.region = region_of_zone(zone)
        self.project = services.project
        self._name = name
        governance = args.governance
        labels = labels_for(governance, workload=WORKLOAD)
        apis = services.enabling(*APIS)

        def keep(*depends_on: pulumi.Resource, **options: Any) -> pulumi.ResourceOptions:
            # The disks hold the users' work: the instance and its key stay on destroy.
            return stateful_opts(
                self,
                governance,
                allow_destroy=args.allow_destroy_with_data,
                depends_on=[*apis, *depends_on],
                **options,
            )

        deletion_policy = "DELETE" if args.allow_destroy_with_data else "PREVENT"
        # The network's notebook-tier account: its firewall rules admit exactly this account
        # (Private Google Access egress), so the VM reaches Google APIs and the proxy, whose
        # domains the notebook tier's private zones resolve to those addresses.
        self.service_account_email = network.service_account("notebook")
        member = pulumi.Output.concat("serviceAccount:", self.service_account_email)

        self.log_writer = gcp.projects.IAMMember(
            f"{name}-log-writer",
            project=self.project,
            role=LOG_WRITER,
            member=member,
            opts=child_opts(self, depends_on=apis),
        )
        grants: list[pulumi.Resource] = [self.log_writer]
        self.dataset_read: list[gcp.storage.BucketIAMMember] = []
        if bucket is not None:
            self.dataset_read = bucket.grant_read(member, name=name)
            grants += self.dataset_read

        self.key_ring: gcp.kms.KeyRing | None = None
        self.crypto_key: gcp.kms.CryptoKey | None = None
        self.key_grant: gcp.kms.CryptoKeyIAMMember | None = None
        self.kms_key_name = None
        disk_encryption: dict[str, Any] = {"disk_encryption": "GMEK"}
        waits: list[pulumi.Resource] = list(grants)
        instance_name = args.instance_name or scoped_id(resource_id_from(name), limit=63)
        # An instance this stack left on an earlier destroy (retained with the notebooks on
        # its disks) is taken over by the next `up`, not met with a 409 (aistack._adopt).
        left = _left_instance(self.project, zone, instance_name, self)
        if not args.allow_google_managed_encryption:
            # CMEK keys must be in the location of the disks they encrypt: the region.
            self.key_ring, self.crypto_key, key_id = stack_key(
                name,
                args.kms_key_name,
                project=self.project,
                location=self.region,
                labels=labels,
                deletion_policy=deletion_policy,
                opts=keep,
            )
            # The boot and data disks are Compute Engine persistent disks: the Compute
            # Engine service agent encrypts them, so it must hold Encrypter/Decrypter on
            # the key before the instance names it (Compute Engine docs, "Protect resources
            # by using Cloud KMS keys": service-<NUMBER>@compute-system.iam.gserviceaccount.com;
            # Workbench docs, "Customer-managed encryption keys" for instances). The agent's
            # address is the documented form; the page excerpt reached here did not show
            # it in full (verify before relying on it in a locked-down org).
            number = gcp.organizations.get_project_output(
                project_id=self.project,
                opts=pulumi.InvokeOutputOptions(parent=self, depends_on=apis),
            ).number
            self.key_grant = gcp.kms.CryptoKeyIAMMember(
                f"{name}-key-compute-agent",
                crypto_key_id=key_id,
                role=KMS_ENCRYPTER,
                member=pulumi.Output.format(
                    "serviceAccount:service-{0}@compute-system.iam.gserviceaccount.com", number
                ),
                opts=keep(),
            )
            waits.append(self.key_grant)
            self.kms_key_name = key_id
            disk_encryption = {"disk_encryption": "CMEK", "kms_key": key_id}

        machine = args.machine
        accelerators = None
        if machine is not None:
            # G2, A2 and A3 come with their GPUs; Workbench still wants them declared (the
            # pulumi-gcp "Workbench Instance Basic Gpu" example: g2-standard-4 with
            # NVIDIA_L4 x 1) and then installs the driver itself.
            accelerators = [
                gcp.workbench.InstanceGceSetupAcceleratorConfigArgs(
                    type=WORKBENCH_ACCELERATORS[ACCELERATOR_TYPES[machine.family]],
                    core_count=str(machine.gpu_count),
                )
            ]

        self.instance = gcp.workbench.Instance(
            f"{name}-instance",
            name=instance_name,
            project=self.project,
            location=zone,
            gce_setup=gcp.workbench.InstanceGceSetupArgs(
                machine_type=args.machine_type,
                accelerator_configs=accelerators,
                # Without it Workbench gives the VM an ephemeral external IP (Workbench API,
                # GceSetup.networkInterfaces.accessConfigs: "If no accessConfigs specified,
                # the instance will have an external internet access through an ephemeral
                # external IP address").
                disable_public_ip=not args.allow_public_ip,
                network_interfaces=[
                    gcp.workbench.InstanceGceSetupNetworkInterfaceArgs(
                        # Self-links: the provider compares them with the API's relative
                        # paths (magic-modules Instance.yaml: CompareSelfLinkRelativePaths).
                        network=network.network_self_link,
                        subnet=network.subnet_self_link("notebook"),
                        nic_type="GVNIC",
                    )
                ],
                service_accounts=[
                    gcp.workbench.InstanceGceSetupServiceAccountArgs(
                        email=self.service_account_email
                    )
                ],
                shielded_instance_config=gcp.workbench.InstanceGceSetupShieldedInstanceConfigArgs(
                    # Secure boot is off by default on Workbench (pulumi-gcp docstring).
                    enable_secure_boot=True,
                    enable_vtpm=True,
                    enable_integrity_monitoring=True,
                ),
                boot_disk=gcp.workbench.InstanceGceSetupBootDiskArgs(
                    disk_size_gb=str(args.boot_disk_gb),
                    disk_type="PD_BALANCED",
                    **disk_encryption,
                ),
                data_disks=gcp.workbench.InstanceGceSetupDataDisksArgs(
                    disk_size_gb=str(args.data_disk_gb),
                    disk_type="PD_BALANCED",
                    **disk_encryption,
                ),
                enable_ip_forwarding=False,
                metadata=args.metadata(),
            ),
            disable_proxy_access=args.disable_proxy_access,
            instance_owners=[args.owner] if args.owner else None,
            # Started on create; idle shutdown stops it, and users start it again.
            desired_state="ACTIVE",
            enable_deletion_protection=not args.allow_destroy_with_data,
            deletion_policy=deletion_policy,
            labels=labels,
            # The grants first: the VM's first boot reads the data and writes logs.
            # Fixed at creation: the disks' keys (an instance taken over keeps the key it
            # was created with, kept too), and the owners, which the API takes on create
            # only and never returns (terraform-provider-google
            # resource_workbench_instance.go: instance_owners ForceNew, "Input only"), so
            # an import would otherwise see a change that replaces the instance.
            opts=adopting(
                keep(
                    *waits,
                    ignore_changes=[
                        "gceSetup.bootDisk.kmsKey",
                        "gceSetup.dataDisks.kmsKey",
                        "instanceOwners",
                    ],
                ),
                left,
            ),
        )
        self.instance_name = self.instance.name
        self.instance_id = self.instance.id
        self.proxy_uri = self.instance.proxy_uri
        self.state = self.instance.state
        outputs: dict[str, object] = {
            "instance_name": self.instance_name,
            "instance_id": self.instance_id,
            "proxy_uri": self.proxy_uri,
            "state": self.state,
            "service_account_email": self.service_account_email,
            "zone": zone,
            "region": self.region,
            "machine_type": args.machine_type,
            "idle_minutes": args.idle_minutes,
        }
        if self.kms_key_name is not None:
            outputs["kms_key_name"] = self.kms_key_name
        self.register_outputs(outputs)

    def quota_needs(self) -> list[CapacityNeed]:
        """The on-demand GPU quota a GPU notebook needs in its region (one VM, never Spot:
        a notebook preempted mid-session loses its kernels' state); none for CPU ones. So
        `gcp.GpuQuota(pools=[..., notebook])` files it with the pools'."""
        if self.args.machine is None:
            return []
        return [
            CapacityNeed(
                pool=self._name,
                region=self.region,
                machine_types=(self.args.machine_type,),
                max_nodes=1,
                market="on-demand",
            )
        ]


def _left_instance(
    project: str, zone: str, instance_name: str, parent: pulumi.Resource
) -> str | None:
    """The import id of the Workbench instance `instance_name` in `zone` if the project
    already holds it (what an earlier destroy of this stack retained, or this stack's own
    on a later `up`), else None. The provider has no Workbench instance lookup, so the
    Compute Engine VM the instance runs as is looked up: by the instance's name in its
    zone. That the VM carries the instance's name is how Workbench instances show in
    `gcloud compute instances list`, not a documented contract: verify it on a real
    project before relying on it (docs/real-boot.md)."""
    vm = found(
        lambda: gcp.compute.get_instance(
            name=instance_name,
            zone=zone,
            project=project,
            opts=pulumi.InvokeOptions(parent=parent),
        )
    )
    if vm is None or not getattr(vm, "name", None):
        return None
    return f"projects/{project}/locations/{zone}/instances/{instance_name}"

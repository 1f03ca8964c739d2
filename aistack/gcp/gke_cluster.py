"""`gcp.GkeCluster`: a private, regional GKE Standard cluster for training, secure by default.

The cluster half of the `gke` scheduler (issue 12; the Kubernetes half is `aistack.k8s`).
What it sets and why (docs/components/gcp/gke-cluster.md has the long form):

- private nodes (no external IPs) and a control plane reachable only on its private
  endpoint, from the given authorized networks; `allow_public_endpoint` opens the public
  endpoint to those networks only, never to 0.0.0.0/0 (checkov CKV_GCP_18/20/64);
- Workload Identity Federation for GKE (`workload_pool = <project>.svc.id.goog`), so pods
  act as service accounts without keys (C6); node pools run the GKE metadata server;
- a dedicated node service account with the minimal node roles, never the Compute Engine
  default account (Editor) (C6);
- Dataplane V2 (`ADVANCED_DATAPATH`), which enforces NetworkPolicy: without an enforcing
  CNI a NetworkPolicy is accepted and silently ignored (S1, k8s.TeamNamespace's
  default-deny);
- a release channel (auto-upgrades with Google's patches), shielded nodes, no client
  certificate, no legacy ABAC, Binary Authorization evaluation on the project policy;
- managed Prometheus with the managed DCGM GPU metrics (T3, C5 alerts read them), system
  and workload logs to Cloud Logging (T6), cost allocation on (C3);
- the Gateway API (serving) and the Cloud Storage FUSE CSI driver (datasets mounted from
  the same-region bucket, D2/D3);
- deletion protection on, and Kubernetes Secrets encrypted with a customer key: the one
  given (`secrets_kms_key`) or one of the cluster's own.

The default node pool is removed (GKE needs `initial_node_count >= 1` to create it first:
research §D1.10) and a small autoscaled system pool runs kube-system, the Kueue and
GMP controllers, which tolerate no GPU taint. GPU capacity comes from `gcp.GpuNodePool`s
on this cluster.

The network is wiring, not configuration made here: `network`, `subnetwork` and the pods
and services secondary range names are plain Inputs, e.g. from `gcp.Network`'s outputs or
from a VPC that exists already (docs page, "Joining the network").
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import pulumi
import pulumi_gcp as gcp
from pydantic import AfterValidator, Field, field_validator

from aistack.config import AistackModel, Governance
from aistack.contracts.k8s import POOL_LABEL
from aistack.errors import Problems
from aistack.gcp._base import child_opts, labels_for, resource_id_from, scoped_id
from aistack.gcp._kms import KMS_ENCRYPTER, compute_disk_key, customer_key
from aistack.gcp._logs import KMS_API, regional_log_bucket
from aistack.gcp.dataset_bucket import DatasetBucket
from aistack.gcp.project_services import ProjectServices
from aistack.gcp.workload_identity import account_id_for

__all__ = [
    "AuthorizedNetwork",
    "GkeCluster",
    "GkeClusterArgs",
    "InputStr",
    "NODE_ROLES",
    "NODE_SCOPES",
    "cluster_name_problem",
]

TOKEN = "aistack:index:GcpGkeCluster"
CONTAINER_API = "container.googleapis.com"
COMPUTE_API = "compute.googleapis.com"
IAM_API = "iam.googleapis.com"
BINARY_AUTHORIZATION_API = "binaryauthorization.googleapis.com"
APIS = (CONTAINER_API, COMPUTE_API, IAM_API)
LOGGING_API = "logging.googleapis.com"

#: The minimal roles of a node service account (GKE docs, "Harden your cluster's security":
#: use least privilege IAM service accounts — logging.logWriter, monitoring.metricWriter,
#: monitoring.viewer, stackdriver.resourceMetadata.writer; "Configure GKE node service
#: accounts": roles/container.defaultNodeServiceAccount bundles the same writer
#: permissions; pulling images from Artifact Registry needs artifactregistry.reader). No
#: role grants data: workloads reach buckets as their own accounts (Workload Identity).
NODE_ROLES = (
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/monitoring.viewer",
    "roles/stackdriver.resourceMetadata.writer",
    "roles/artifactregistry.reader",
)
#: Google recommends the cloud-platform scope with a least-privilege account: IAM, not
#: scopes, then decides (Compute Engine docs, "Service accounts", access scopes best
#: practice). Narrow scopes would only break Google-managed agents.
NODE_SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
#: GKE cluster and node pool names: at most 40 characters, lowercase letters, digits and
#: hyphens, starting with a letter and not ending with a hyphen (GKE API,
#: projects.locations.clusters.create: "name"; research §D1.4).
NAME = re.compile(r"[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?")
NAME_MAX = 40
#: The control plane's private range in a private cluster: an RFC 1918 /28 (pulumi-gcp
#: `master_ipv4_cidr_block` docstring: "it must be a /28 subnet").
MASTER_PREFIX = 28


def _an_input(value: Any) -> Any:
    if isinstance(value, str | pulumi.Output):
        return value
    raise ValueError(
        f"expected a string or a pulumi Output, got {type(value).__name__}. Fix: pass the "
        "self-link or name itself, or the Output another component exposes."
    )


#: A string known now, or an Output another component resolves (a self-link, a name).
InputStr = Annotated[Any, AfterValidator(_an_input)]


def cluster_name_problem(name: str) -> str | None:
    """Why GKE refuses `name` as a cluster or node pool name, or None."""
    if len(name) > NAME_MAX or not NAME.fullmatch(name):
        return (
            f"{name!r} is not a GKE name: at most {NAME_MAX} lowercase letters, digits and "
            "hyphens, starting with a letter, not ending with a hyphen."
        )
    return None


class AuthorizedNetwork(AistackModel):
    """A network allowed to reach the control plane (master authorized networks)."""

    cidr_block: str = Field(description="CIDR allowed to reach the control plane.")
    display_name: str = Field("", max_length=100, description="What the range is.")

    @field_validator("cidr_block")
    @classmethod
    def _a_network(cls, cidr: str) -> str:
        try:
            network = ipaddress.ip_network(cidr, strict=True)
        except ValueError as error:
            raise ValueError(f"{cidr!r} is not a CIDR block ({error}).") from None
        if network.prefixlen == 0:
            raise ValueError(
                f"{cidr!r} admits the whole internet to the control plane (CKV_GCP_18). Fix: "
                "list the ranges that deploy and operate the cluster."
            )
        return str(network)


class GkeClusterArgs(AistackModel):
    """A private regional GKE Standard cluster and its node service account."""

    region: str = Field(
        description="Region of the (regional) cluster, e.g. 'europe-west4'; required. "
        "Must be in governance.allowedRegions (C4) and equal the dataset buckets' region "
        "(D2)."
    )
    governance: Governance
    cluster_name: str | None = Field(
        None,
        description="The cluster's GKE name (at most 40 characters); default: the logical "
        "name and the stack's digest (a cluster name is unique in its location, and the "
        "project's other stacks pick theirs). Fixed: GKE cannot rename a cluster.",
    )
    network: InputStr = Field(
        description="The VPC's self-link or id, e.g. gcp.Network's `network_self_link`. Required."
    )
    subnetwork: InputStr = Field(
        description="The nodes' subnetwork self-link or id, in `region`, with Private "
        "Google Access on (private nodes reach Google APIs through it). Required."
    )
    pods_range_name: InputStr = Field(
        description="Name of the subnetwork's secondary range for pods (VPC-native)."
    )
    services_range_name: InputStr = Field(
        description="Name of the subnetwork's secondary range for Services."
    )
    master_ipv4_cidr_block: str = Field(
        "172.16.0.0/28",
        description="The control plane's private /28, unused elsewhere in the VPC. "
        "Default 172.16.0.0/28.",
    )
    authorized_networks: tuple[AuthorizedNetwork, ...] = Field(
        (),
        description="Ranges that may reach the control plane, e.g. the VPC range of a "
        "bastion or CI runner. Default none: only the cluster's own VPC, privately.",
    )
    allow_public_endpoint: bool = Field(
        False,
        description="Serve the control plane on a public IP too, reachable from "
        "`authorized_networks` only (which must then be set). Off: private endpoint only; "
        "deploy from inside the VPC or with allow_dns_endpoint.",
    )
    allow_dns_endpoint: bool = Field(
        False,
        description="Enable the control plane's DNS endpoint from outside the VPC; every "
        "request still needs IAM (GKE docs, 'About network isolation': DNS-based "
        "endpoint). A way to deploy a private cluster from a laptop or CI. Default off.",
    )
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = Field(
        "REGULAR",
        description="GKE release channel: Google upgrades the control plane and nodes "
        "with patches. Default REGULAR.",
    )
    system_machine_type: str = Field(
        "e2-standard-4",
        description="Machine type of the system pool (kube-system, operators). Default "
        "e2-standard-4.",
    )
    system_max_nodes: int = Field(
        3, ge=1, le=20, description="Most nodes in the system pool (it keeps at least 1)."
    )
    gateway_api_channel: Literal["CHANNEL_STANDARD", "CHANNEL_DISABLED"] = Field(
        "CHANNEL_STANDARD",
        description="Gateway API CRDs GKE installs and manages (HTTPRoute for serving). "
        "Default the standard channel.",
    )
    secrets_kms_key: str | None = Field(
        None,
        pattern=r"^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$",
        description="Cloud KMS key (in the cluster's region) encrypting Kubernetes Secrets "
        "in etcd on top of Google's encryption; the GKE service agent needs "
        "Encrypter/Decrypter on it. Default: a key of the cluster's own, granted to the "
        "GKE service agent.",
    )
    allow_google_managed_secrets: bool = Field(
        False,
        description="Leave Kubernetes Secrets under Google's default encryption only (no "
        "application-layer key). Default off: the stacks keep every store under a "
        "customer key.",
    )
    rbac_security_group: str | None = Field(
        None,
        pattern=r"^gke-security-groups@[a-z0-9.-]+$",
        description="Google Groups for RBAC ('gke-security-groups@<domain>'): needs a "
        "Google Workspace or Cloud Identity organisation. Default none.",
    )
    node_account_id: str | None = Field(
        None,
        pattern=r"^[a-z](?:[-a-z0-9]{4,28}[a-z0-9])$",
        description="Account id of the node service account; default `<name>-nodes`, "
        "shortened to 30 characters.",
    )
    allow_destroy: bool = Field(
        False,
        description="Create the cluster without deletion protection. Off: `pulumi destroy` "
        "fails until an `up` turns protection off (deliberate, two steps).",
    )
    log_retention_days: int = Field(
        90,
        ge=1,
        le=3650,
        description="Days the cluster's regional log bucket keeps its system and workload "
        "logs (T6); Cloud Logging buckets keep 1 to 3650 days.",
    )

    @field_validator("master_ipv4_cidr_block")
    @classmethod
    def _a_private_slash_28(cls, cidr: str) -> str:
        try:
            network = ipaddress.ip_network(cidr, strict=True)
        except ValueError as error:
            raise ValueError(f"{cidr!r} is not a CIDR block ({error}).") from None
        if network.prefixlen != MASTER_PREFIX or not network.is_private:
            raise ValueError(
                f"{cidr!r}: the control plane range must be a private (RFC 1918) /28. Fix: "
                "use an unused /28 such as 172.16.0.0/28."
            )
        return str(network)


class GkeCluster(pulumi.ComponentResource):
    """A private regional GKE cluster, its node service account and a system pool."""

    args: GkeClusterArgs
    cluster: gcp.container.Cluster
    system_pool: gcp.container.NodePool
    node_service_account: gcp.serviceaccount.Account
    log_bucket: gcp.logging.ProjectBucketConfig
    log_sink: gcp.logging.ProjectSink
    #: The cluster's id, `projects/<p>/locations/<region>/clusters/<name>`: what node pools
    #: take as `cluster`.
    cluster_id: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    cluster_ca_certificate: pulumi.Output[str]
    #: `<project>.svc.id.goog`: the pool Kubernetes service accounts federate through.
    workload_pool: str
    node_service_account_email: pulumi.Output[str]
    node_disk_key: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: GkeClusterArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        services: ProjectServices | None = None,
        datasets: Sequence[DatasetBucket] = (),
    ) -> None:
        """`services`: the stack's ProjectServices (its project holds the cluster; every
        resource waits for the APIs). `datasets`: the buckets the cluster's jobs read,
        which must be in the cluster's region (D2)."""

        def checks(args: GkeClusterArgs) -> None:
            problems = Problems()
            found = args.governance.region_problem(args.region, f"{name}.region", cloud="gcp")
            if found:
                problems.items.append(found)
            reason = cluster_name_problem(args.cluster_name or name)
            if reason:
                problems.add(
                    f"{name}.clusterName",
                    reason,
                    "set clusterName to a name GKE accepts (or rename the component).",
                )
            if args.allow_public_endpoint and not args.authorized_networks:
                problems.add(
                    f"{name}.authorizedNetworks",
                    "a public endpoint with no authorized networks admits no one: an exposed "
                    "address that serves nobody.",
                    "list the ranges that operate the cluster, or keep the endpoint private.",
                )
            if not args.allow_public_endpoint:
                for i, net in enumerate(args.authorized_networks):
                    if not ipaddress.ip_network(net.cidr_block).is_private:
                        problems.add(
                            f"{name}.authorizedNetworks.{i}.cidrBlock",
                            f"{net.cidr_block} is a public range, and the endpoint is "
                            "private: it could never connect.",
                            "use a VPC (RFC 1918) range, or set allowPublicEndpoint.",
                        )
            for i, bucket in enumerate(datasets):
                if bucket.region.lower() != args.region.lower():
                    problems.add(
                        f"{name}.datasets.{i}",
                        f"the bucket is in {bucket.region}, the cluster in {args.region}: "
                        "every read would cross regions, billed and slower (D2).",
                        "put the cluster in the data's region, or copy the data there.",
                    )
            assert services is not None
            problems.items.extend(
                services.missing(*APIS, BINARY_AUTHORIZATION_API, LOGGING_API, KMS_API, where=name)
            )
            problems.raise_if_any()

        args = GkeClusterArgs.validate_with(
            args, checks, where=name, wiring={"services": services}
        )[0]
        assert services is not None
        super().__init__(TOKEN, name, {"region": args.region}, opts)
        self.args = args
        self.project = services.project
        self.region = args.region
        self.cluster_name = args.cluster_name or scoped_id(resource_id_from(name), limit=NAME_MAX)
        self._name = name
        self.workload_pool = f"{self.project}.svc.id.goog"
        apis = services.enabling(*APIS, BINARY_AUTHORIZATION_API, KMS_API)
        labels = labels_for(args.governance, workload="training")

        self.node_service_account = gcp.serviceaccount.Account(
            f"{name}-nodes",
            project=self.project,
            account_id=args.node_account_id or account_id_for(resource_id_from(name), "nodes"),
            display_name=f"GKE nodes of {self.cluster_name}"[:100],
            description="aistack: the node service account (logs, metrics, image pulls only)",
            opts=child_opts(self, depends_on=apis),
        )
        # The grants before the cluster: GKE checks the node account's permissions when it
        # creates nodes, and IAM is eventually consistent (research §D1.2).
        self.node_grants = [
            gcp.projects.IAMMember(
                f"{name}-nodes-{resource_id_from(role.rsplit('/', 1)[-1])}",
                project=self.project,
                role=role,
                member=self.node_service_account.member,
                opts=child_opts(self, depends_on=apis),
            )
            for role in NODE_ROLES
        ]

        secrets_key = self._secrets_key(name, args, apis, labels)
        # The nodes' boot disks, every pool's, under the cluster's node key (GKE docs,
        # "Use customer-managed encryption keys (CMEK) in GKE": node boot disks; the Compute
        # Engine service agent encrypts them).
        self.node_disk_key, self.node_disk_key_grant = compute_disk_key(
            self, f"{name}-nodes", project=self.project, region=args.region, labels=labels,
            depends_on=list(apis),
        )  # fmt: skip
        self.cluster = gcp.container.Cluster(
            f"{name}-cluster",
            name=self.cluster_name,
            project=self.project,
            location=args.region,
            network=args.network,
            subnetwork=args.subnetwork,
            # The default pool is created, then removed: GKE refuses a cluster with no
            # nodes, so initial_node_count must be at least 1 (pulumi-gcp
            # `remove_default_node_pool` docstring; research §D1.10).
            remove_default_node_pool=True,
            initial_node_count=1,
            # That short-lived default pool still runs as the node account, hardened like
            # the others (checkov CKV_GCP_68/69/72 read the cluster's node_config too).
            node_config=gcp.container.ClusterNodeConfigArgs(
                boot_disk_kms_key=self.node_disk_key,
                service_account=self.node_service_account.email,
                oauth_scopes=list(NODE_SCOPES),
                workload_metadata_config=gcp.container.ClusterNodeConfigWorkloadMetadataConfigArgs(
                    mode="GKE_METADATA"
                ),
                shielded_instance_config=gcp.container.ClusterNodeConfigShieldedInstanceConfigArgs(
                    enable_secure_boot=True, enable_integrity_monitoring=True
                ),
                resource_labels=labels,
            ),
            networking_mode="VPC_NATIVE",
            ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(
                cluster_secondary_range_name=args.pods_range_name,
                services_secondary_range_name=args.services_range_name,
            ),
            private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(
                enable_private_nodes=True,
                enable_private_endpoint=not args.allow_public_endpoint,
                master_ipv4_cidr_block=args.master_ipv4_cidr_block,
            ),
            master_authorized_networks_config=gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
                cidr_blocks=[
                    gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(
                        cidr_block=n.cidr_block, display_name=n.display_name or None
                    )
                    for n in args.authorized_networks
                ],
                # Not every Google Cloud VM's public IP: only the listed ranges.
                gcp_public_cidrs_access_enabled=False,
            ),
            control_plane_endpoints_config=gcp.container.ClusterControlPlaneEndpointsConfigArgs(
                dns_endpoint_config=gcp.container.ClusterControlPlaneEndpointsConfigDnsEndpointConfigArgs(
                    allow_external_traffic=args.allow_dns_endpoint
                )
            ),
            # Dataplane V2 enforces NetworkPolicy itself; the Calico `network_policy` addon
            # must stay off with it (GKE docs, "Dataplane V2": network policy enforcement
            # is built in). checkov CKV_GCP_12 reads exactly this pair.
            datapath_provider="ADVANCED_DATAPATH",
            network_policy=gcp.container.ClusterNetworkPolicyArgs(
                enabled=False, provider="PROVIDER_UNSPECIFIED"
            ),
            workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
                workload_pool=self.workload_pool
            ),
            release_channel=gcp.container.ClusterReleaseChannelArgs(channel=args.release_channel),
            enable_shielded_nodes=True,
            enable_legacy_abac=False,
            enable_intranode_visibility=True,
            master_auth=gcp.container.ClusterMasterAuthArgs(
                client_certificate_config=gcp.container.ClusterMasterAuthClientCertificateConfigArgs(
                    issue_client_certificate=False
                )
            ),
            # The project's Binary Authorization policy decides (a fresh project's policy
            # admits every image; a team tightens it to digests it trusts, E1).
            binary_authorization=gcp.container.ClusterBinaryAuthorizationArgs(
                evaluation_mode="PROJECT_SINGLETON_POLICY_ENFORCE"
            ),
            authenticator_groups_config=(
                gcp.container.ClusterAuthenticatorGroupsConfigArgs(
                    security_group=args.rbac_security_group
                )
                if args.rbac_security_group
                else None
            ),
            # T6: system and workload logs to Cloud Logging (routed to the retained regional
            # bucket below).
            logging_config=gcp.container.ClusterLoggingConfigArgs(
                enable_components=["SYSTEM_COMPONENTS", "WORKLOADS"]
            ),
            # T3/C5: GPU utilisation for the idle and starvation alerts. DCGM is a
            # managed-metrics package: GKE installs DCGM-Exporter and a ClusterPodMonitoring
            # sending to Managed Service for Prometheus, which must be on (GKE docs,
            # "Collect and view DCGM metrics": on by default for clusters created at
            # 1.32.1-gke.1357000 or later, enabled explicitly on earlier versions). pulumi-
            # gcp lists DCGM among `enable_components` (JOBSET needs 1.32.1-gke.1357001).
            monitoring_config=gcp.container.ClusterMonitoringConfigArgs(
                enable_components=["SYSTEM_COMPONENTS", "DCGM"],
                managed_prometheus=gcp.container.ClusterMonitoringConfigManagedPrometheusArgs(
                    enabled=True
                ),
            ),
            gateway_api_config=gcp.container.ClusterGatewayApiConfigArgs(
                channel=args.gateway_api_channel
            ),
            addons_config=gcp.container.ClusterAddonsConfigArgs(
                gcs_fuse_csi_driver_config=gcp.container.ClusterAddonsConfigGcsFuseCsiDriverConfigArgs(
                    enabled=True
                ),
                http_load_balancing=gcp.container.ClusterAddonsConfigHttpLoadBalancingArgs(
                    disabled=False
                ),
            ),
            cost_management_config=gcp.container.ClusterCostManagementConfigArgs(enabled=True),
            database_encryption=gcp.container.ClusterDatabaseEncryptionArgs(
                state="ENCRYPTED", key_name=secrets_key
            )
            if secrets_key is not None
            else None,
            resource_labels=labels,
            deletion_protection=not args.allow_destroy,
            opts=child_opts(
                self,
                depends_on=[
                    *apis,
                    *self.node_grants,
                    self.node_disk_key_grant,
                    *filter(None, [self.secrets_key_grant]),
                ],
            ),
        )

        self.system_pool = gcp.container.NodePool(
            f"{name}-system",
            name="system",
            project=self.project,
            cluster=self.cluster.id,
            location=args.region,
            initial_node_count=1,
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=1,
                total_max_node_count=args.system_max_nodes,
                location_policy="BALANCED",
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=args.system_machine_type,
                disk_type="pd-balanced",
                boot_disk_kms_key=self.node_disk_key,
                image_type="COS_CONTAINERD",
                service_account=self.node_service_account.email,
                oauth_scopes=list(NODE_SCOPES),
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
                    mode="GKE_METADATA"
                ),
                shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                    enable_secure_boot=True, enable_integrity_monitoring=True
                ),
                labels={POOL_LABEL: "system"},
                # Not "training": the budget kill switch scales node pools labelled training
                # to zero, and without its system pool the cluster runs nothing, serving
                # and the kill switch's own resume included.
                resource_labels=labels_for(args.governance, workload="system"),
            ),
            opts=child_opts(self, depends_on=apis),
        )

        # T6, C4: the cluster's logs (pods, nodes, control plane) to a regional bucket that
        # keeps them, instead of only the global _Default bucket's 30 days.
        self.log_bucket, self.log_sink = regional_log_bucket(
            self,
            name,
            project=self.project,
            region=args.region,
            bucket_id=scoped_id(f"{resource_id_from(self.cluster_name)}-gke-logs", limit=100),
            retention_days=args.log_retention_days,
            # The monitored resources of GKE logs (Cloud Logging docs, "GKE logs"): containers,
            # pods, nodes and the cluster's own, all labelled with the cluster's name.
            log_filter=(
                'resource.type=("k8s_container" OR "k8s_pod" OR "k8s_node" OR "k8s_cluster") '
                f'AND resource.labels.cluster_name="{self.cluster_name}"'
            ),
            what=f"GKE cluster {self.cluster_name}",
            contents="system and workload logs",
            labels=labels_for(args.governance, workload="system"),
            depends_on=services.enabling(LOGGING_API, KMS_API),
        )

        self.cluster_id = self.cluster.id
        self.endpoint = self.cluster.endpoint
        self.cluster_ca_certificate = self.cluster.master_auth.cluster_ca_certificate
        self.node_service_account_email = self.node_service_account.email
        self.register_outputs(
            {
                "cluster_id": self.cluster_id,
                "cluster_name": self.cluster_name,
                "endpoint": self.endpoint,
                "workload_pool": self.workload_pool,
                "node_service_account_email": self.node_service_account_email,
                "node_disk_key": self.node_disk_key,
                "region": args.region,
            }
        )

    def _secrets_key(
        self,
        name: str,
        args: GkeClusterArgs,
        apis: Sequence[pulumi.Resource],
        labels: dict[str, str],
    ) -> pulumi.Input[str] | None:
        """The key Kubernetes Secrets are encrypted with in etcd (application-layer
        secrets encryption): the one given, else one of the cluster's own, in its region,
        with Encrypter/Decrypter for the GKE service agent
        (service-<PROJECT_NUMBER>@container-engine-robot.iam.gserviceaccount.com; GKE docs,
        "Encrypt secrets at the application layer"), granted before the cluster names it."""
        self.secrets_key_grant: gcp.kms.CryptoKeyIAMMember | None = None
        if args.allow_google_managed_secrets:
            return None
        if args.secrets_kms_key:
            return args.secrets_kms_key
        _, key = customer_key(
            f"{name}-secrets",
            project=self.project,
            location=args.region,
            labels=labels,
            # Secrets written under a destroyed key cannot be read: kept with the cluster.
            deletion_policy="DELETE" if args.allow_destroy else "PREVENT",
            opts=lambda: child_opts(self, depends_on=list(apis)),
        )
        number = gcp.organizations.get_project_output(
            project_id=self.project,
            opts=pulumi.InvokeOutputOptions(parent=self, depends_on=list(apis)),
        ).number
        self.secrets_key_grant = gcp.kms.CryptoKeyIAMMember(
            f"{name}-secrets-key-gke",
            crypto_key_id=key.id,
            role=KMS_ENCRYPTER,
            member=pulumi.Output.format(
                "serviceAccount:service-{0}@container-engine-robot.iam.gserviceaccount.com",
                number,
            ),
            opts=child_opts(self, depends_on=list(apis)),
        )
        return key.id

    def enabling(self) -> list[pulumi.Resource]:
        """What a node pool on this cluster waits for: the cluster, the node grants and the
        grant of the nodes' disk key."""
        return [self.cluster, *self.node_grants, self.node_disk_key_grant]

    def kubeconfig(self) -> pulumi.Output[str]:
        """A kubeconfig for a `kubernetes.Provider` on this cluster, authenticating with
        `gke-gcloud-auth-plugin` (GKE docs, "Install kubectl and configure cluster
        access"): no static credential in the stack's state."""
        return pulumi.Output.format(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: {0}\n  cluster:\n"
            "    server: https://{1}\n    certificate-authority-data: {2}\n"
            "contexts:\n- name: {0}\n  context: {{cluster: {0}, user: {0}}}\n"
            "current-context: {0}\nusers:\n- name: {0}\n  user:\n    exec:\n"
            "      apiVersion: client.authentication.k8s.io/v1beta1\n"
            "      command: gke-gcloud-auth-plugin\n      provideClusterInfo: true\n"
            "      interactiveMode: Never\n",
            self.cluster_name,
            self.endpoint,
            self.cluster_ca_certificate,
        )

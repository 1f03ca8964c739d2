"""GCP programs the scan tests run checkov over.

`foundation` is a team's first GCP stack (ProjectServices, a logs and a dataset
DatasetBucket, a prefix-scoped grant): its scan must be clean under the skip list.
`mappings` registers each mapped Google type twice, `ok-<type>` compliant and
`bad-<type>` violating one named checkov check, so each test proves the converter writes
the attribute that check reads (a check that saw nothing would pass or fail both alike).
"""

from __future__ import annotations

import pulumi_gcp as gcp

from aistack import gcp as aistack_gcp

PROJECT = "team-ml-prod"
REGION = "europe-west4"
CONFIG = {"gcp:project": PROJECT, "gcp:region": REGION}
GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "research-1234",
    "environment": "dev",
    "allowedRegions": [REGION],
    "dataClassification": "confidential",
}
TRAINER = f"serviceAccount:trainer@{PROJECT}.iam.gserviceaccount.com"
DATASET = {
    "name": "support-tickets",
    "version": "2024-06-01",
    "source": "https://internal.example.com/exports/tickets",
    "licence": "proprietary",
}


def foundation() -> None:
    apis = aistack_gcp.ProjectServices("apis", {"project": PROJECT})
    logs = aistack_gcp.DatasetBucket(
        "logs", {"kind": "logs", "region": REGION, "governance": GOVERNANCE}, services=apis
    )
    data = aistack_gcp.DatasetBucket(
        "data",
        {"kind": "dataset", "region": REGION, "governance": GOVERNANCE, "dataset": DATASET},
        services=apis,
        access_logs=logs,
    )
    data.grant_read(TRAINER, prefix="train", name="trainer")
    data.grant_write(TRAINER, prefix="checkpoints", name="writer")


def mappings() -> None:  # noqa: PLR0915 - one pair per mapped type, read top to bottom
    c = gcp.compute
    for ok in (True, False):
        p = "ok" if ok else "bad"
        # -- storage, KMS, Pub/Sub, Artifact Registry: encryption and public access --
        logs = gcp.storage.Bucket(f"{p}-logs", location=REGION)
        gcp.storage.Bucket(
            f"{p}-bucket",
            location=REGION,
            uniform_bucket_level_access=ok,
            public_access_prevention="enforced" if ok else "inherited",
            versioning=gcp.storage.BucketVersioningArgs(enabled=ok),
            logging=gcp.storage.BucketLoggingArgs(log_bucket=logs.name) if ok else None,
            lifecycle_rules=[
                gcp.storage.BucketLifecycleRuleArgs(
                    action=gcp.storage.BucketLifecycleRuleActionArgs(type="Delete"),
                    condition=gcp.storage.BucketLifecycleRuleConditionArgs(
                        age=30, matches_prefixes=["tmp/"]
                    ),
                )
            ],
        )
        gcp.storage.BucketIAMMember(
            f"{p}-bucket-reader",
            bucket=logs.name,
            role="roles/storage.objectViewer",
            member=TRAINER if ok else "allUsers",
        )
        ring = gcp.kms.KeyRing(f"{p}-ring", location=REGION)
        key = gcp.kms.CryptoKey(
            f"{p}-key", key_ring=ring.id, rotation_period="7776000s" if ok else "31536000s"
        )
        gcp.kms.CryptoKeyIAMMember(
            f"{p}-key-user",
            crypto_key_id=key.id,
            role="roles/cloudkms.cryptoKeyEncrypterDecrypter",
            member=TRAINER if ok else "allAuthenticatedUsers",
        )
        topic = gcp.pubsub.Topic(f"{p}-topic", kms_key_name=key.id if ok else None)
        gcp.pubsub.TopicIAMMember(
            f"{p}-topic-publisher",
            topic=topic.name,
            role="roles/pubsub.publisher",
            member=TRAINER if ok else "allUsers",
        )
        repository = gcp.artifactregistry.Repository(
            f"{p}-repository",
            location=REGION,
            repository_id=f"{p}-images",
            format="DOCKER",
            kms_key_name=key.id if ok else None,
        )
        gcp.artifactregistry.RepositoryIamMember(
            f"{p}-repository-reader",
            repository=repository.name,
            location=REGION,
            role="roles/artifactregistry.reader",
            member=TRAINER if ok else "allUsers",
        )
        # -- identity --
        account = gcp.serviceaccount.Account(f"{p}-account", account_id=f"{p}-trainer")
        gcp.serviceaccount.IAMMember(
            f"{p}-account-user",
            service_account_id=account.name,
            role="roles/iam.workloadIdentityUser",
            member=f"serviceAccount:{PROJECT}.svc.id.goog[training/trainer]",
        )
        gcp.projects.IAMMember(
            f"{p}-project-member",
            project=PROJECT,
            role="roles/logging.logWriter" if ok else "roles/editor",
            member=TRAINER,
        )
        pool = gcp.iam.WorkloadIdentityPool(f"{p}-pool", workload_identity_pool_id=f"{p}-ci")
        gcp.iam.WorkloadIdentityPoolProvider(
            f"{p}-github",
            workload_identity_pool_id=pool.workload_identity_pool_id,
            workload_identity_pool_provider_id="github",
            attribute_mapping={
                "google.subject": "assertion.sub",
                "attribute.repository": "assertion.repository",
            },
            # IAM refuses a GitHub provider without a condition, so the violating one has a
            # condition that pins only the owner: any of its repositories may sign in.
            attribute_condition=(
                "assertion.sub == 'repo:example/ml:ref:refs/heads/main'"
                if ok
                else "assertion.repository_owner == 'example'"
            ),
            oidc=gcp.iam.WorkloadIdentityPoolProviderOidcArgs(
                issuer_uri="https://token.actions.githubusercontent.com"
            ),
        )
        # Another OIDC issuer: a provider without any condition is accepted by IAM.
        gcp.iam.WorkloadIdentityPoolProvider(
            f"{p}-oidc",
            workload_identity_pool_id=pool.workload_identity_pool_id,
            workload_identity_pool_provider_id="gitlab",
            attribute_mapping={"google.subject": "assertion.sub"},
            attribute_condition="assertion.namespace_path == 'example'" if ok else None,
            oidc=gcp.iam.WorkloadIdentityPoolProviderOidcArgs(issuer_uri="https://gitlab.com"),
        )
        # -- budgets, quota, the kill-switch function --
        gcp.billing.Budget(
            f"{p}-budget",
            billing_account="000000-000000-000000",
            amount=gcp.billing.BudgetAmountArgs(
                specified_amount=gcp.billing.BudgetAmountSpecifiedAmountArgs(units="1000")
            ),
            threshold_rules=[gcp.billing.BudgetThresholdRuleArgs(threshold_percent=0.5)],
        )
        gcp.cloudquota.SQuotaPreference(
            f"{p}-gpu-quota",
            parent=f"projects/{PROJECT}",
            service="compute.googleapis.com",
            # One preference per quota and dimensions (the API answers 409 to a second).
            quota_id=("" if ok else "PREEMPTIBLE-") + "NVIDIA-L4-GPUS-per-project-region",
            dimensions={"region": REGION},
            quota_config=gcp.cloudquota.SQuotaPreferenceQuotaConfigArgs(preferred_value="8"),
            # The Cloud Quotas API refuses an increase without one (simulated as it answers).
            contact_email="ml-platform@example.com",
        )
        function = gcp.cloudfunctionsv2.Function(
            f"{p}-function",
            location=REGION,
            service_config=gcp.cloudfunctionsv2.FunctionServiceConfigArgs(
                ingress_settings="ALLOW_INTERNAL_ONLY" if ok else "ALLOW_ALL",
                service_account_email=account.email,
            ),
        )
        gcp.cloudfunctionsv2.FunctionIamMember(
            f"{p}-function-invoker",
            cloud_function=function.name,
            location=REGION,
            role="roles/run.invoker",
            member=TRAINER if ok else "allUsers",
        )
        # -- network and instances --
        network = c.Network(f"{p}-network", auto_create_subnetworks=False)
        subnet = c.Subnetwork(
            f"{p}-subnet",
            network=network.id,
            ip_cidr_range="10.0.0.0/20",
            region=REGION,
            private_ip_google_access=ok,
            log_config=c.SubnetworkLogConfigArgs(aggregation_interval="INTERVAL_5_SEC")
            if ok
            else None,
            secondary_ip_ranges=[
                c.SubnetworkSecondaryIpRangeArgs(range_name="pods", ip_cidr_range="10.4.0.0/14")
            ],
        )
        c.Firewall(
            f"{p}-firewall",
            network=network.id,
            direction="INGRESS",
            allows=[c.FirewallAllowArgs(protocol="tcp", ports=["22"])],
            source_ranges=["35.235.240.0/20"] if ok else ["0.0.0.0/0"],
        )
        router = c.Router(f"{p}-router", network=network.id, region=REGION)
        c.RouterNat(
            f"{p}-nat",
            router=router.name,
            region=REGION,
            nat_ip_allocate_option="AUTO_ONLY",
            source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
            subnetworks=[
                c.RouterNatSubnetworkArgs(
                    name=subnet.id, source_ip_ranges_to_nats=["ALL_IP_RANGES"]
                )
            ],
        )
        template = c.InstanceTemplate(
            f"{p}-template",
            machine_type="g2-standard-8",
            disks=[c.InstanceTemplateDiskArgs(source_image="debian-cloud/debian-12", boot=True)],
            network_interfaces=[
                c.InstanceTemplateNetworkInterfaceArgs(
                    subnetwork=subnet.id,
                    access_configs=[]
                    if ok
                    else [c.InstanceTemplateNetworkInterfaceAccessConfigArgs()],
                )
            ],
            shielded_instance_config=c.InstanceTemplateShieldedInstanceConfigArgs(
                enable_secure_boot=True, enable_vtpm=ok, enable_integrity_monitoring=True
            ),
            metadata={"block-project-ssh-keys": "true" if ok else "false"},
            service_account=c.InstanceTemplateServiceAccountArgs(
                email=account.email, scopes=["cloud-platform"]
            ),
        )
        c.RegionInstanceGroupManager(
            f"{p}-group",
            base_instance_name=f"{p}-train",
            region=REGION,
            versions=[c.RegionInstanceGroupManagerVersionArgs(instance_template=template.id)],
            target_size=0,
        )
        # -- GKE --
        cluster = gcp.container.Cluster(
            f"{p}-cluster",
            location=REGION,
            network=network.id,
            subnetwork=subnet.id,
            remove_default_node_pool=True,
            initial_node_count=1,
            private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(
                enable_private_nodes=True, master_ipv4_cidr_block="172.16.0.0/28"
            )
            if ok
            else None,
        )
        gcp.container.NodePool(
            f"{p}-pool-gpu",
            cluster=cluster.id,
            location=REGION,
            management=gcp.container.NodePoolManagementArgs(auto_upgrade=ok, auto_repair=True),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type="g2-standard-8",
                service_account=account.email,
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
                    mode="GKE_METADATA" if ok else "GCE_METADATA"
                ),
                guest_accelerators=[
                    gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(type="nvidia-l4", count=1)
                ],
                taints=[
                    gcp.container.NodePoolNodeConfigTaintArgs(
                        key="nvidia.com/gpu", value="present", effect="NO_SCHEDULE"
                    )
                ],
            ),
        )


def network() -> None:
    """gcp.Network with every option on (NAT, proxy-only subnet, IAP SSH, notebooks): its
    scan must be clean, the firewall and subnetwork checks passing."""
    apis = aistack_gcp.ProjectServices("apis", {"project": PROJECT})
    ids = aistack_gcp.WorkloadIdentity("ids", {"governance": GOVERNANCE}, services=apis)
    aistack_gcp.Network(
        "net",
        {
            "governance": GOVERNANCE,
            "region": REGION,
            "trainingMachineTypes": ["a3-highgpu-8g"],
            "inferenceMachineTypes": ["g2-standard-8"],
            "notebook": True,
            "nat": True,
            "proxyOnlySubnet": True,
            "allowIapSsh": True,
        },
        services=apis,
        identity=ids,
    )


def gke() -> None:
    """A team's GKE training cluster with a Spot L4 pool and its GPU quota."""
    apis = aistack_gcp.ProjectServices("apis", {"project": PROJECT})
    cluster = aistack_gcp.GkeCluster(
        "train",
        {
            "region": REGION,
            "governance": GOVERNANCE,
            "network": f"projects/{PROJECT}/global/networks/ml",
            "subnetwork": f"projects/{PROJECT}/regions/{REGION}/subnetworks/train",
            "podsRangeName": "pods",
            "servicesRangeName": "services",
        },
        services=apis,
    )
    pool = aistack_gcp.GpuNodePool(
        "l4-spot",
        {"governance": GOVERNANCE, "machineType": "g2-standard-8", "maxNodes": 4},
        cluster=cluster,
    )
    aistack_gcp.GpuQuota(
        "quota",
        {"governance": GOVERNANCE, "contactEmail": "ml-platform@example.com"},
        services=apis,
        pools=[pool],
    )


def notebook() -> None:
    """A team's GPU notebook beside its dataset: gcp.Notebook on gcp.Network's notebook
    tier, reading a gcp.DatasetBucket. checkov's Workbench graph checks (CKV2_GCP_27 CMEK
    disks, CKV2_GCP_28 no public IP) must pass, and nothing fail."""
    apis = aistack_gcp.ProjectServices("apis", {"project": PROJECT})
    ids = aistack_gcp.WorkloadIdentity("ids", {"governance": GOVERNANCE}, services=apis)
    logs = aistack_gcp.DatasetBucket(
        "logs", {"kind": "logs", "region": REGION, "governance": GOVERNANCE}, services=apis
    )
    data = aistack_gcp.DatasetBucket(
        "data",
        {"kind": "dataset", "region": REGION, "governance": GOVERNANCE, "dataset": DATASET},
        services=apis,
        access_logs=logs,
    )
    net = aistack_gcp.Network(
        "net",
        {
            "governance": GOVERNANCE,
            "region": REGION,
            "trainingMachineTypes": ["g2-standard-8"],
            "notebook": True,
            "notebookMachineTypes": ["g2-standard-8"],
        },
        services=apis,
        identity=ids,
        dataset=data,
    )
    aistack_gcp.Notebook(
        "nb",
        {"governance": GOVERNANCE, "machineType": "g2-standard-8", "owner": "ana@example.com"},
        services=apis,
        network=net,
        bucket=data,
    )

"""What the component package's codegen and adapters both read: the package's name and
version, its components (from aistack's registry, aistack/_registry.py) and their wiring.

Neither codegen.py nor adapters.py imports the other: codegen renders args.py, which the
adapters import, and then the schema, which Pulumi infers from the adapter classes its
caller hands it (`codegen.main` imports them after writing args.py); both read `WIRING`.
"""

import importlib
import importlib.metadata

from aistack._registry import COMPONENTS, ComponentSpec

__all__ = [
    "ADAPTERS_MODULE",
    "PACKAGE",
    "SPECS",
    "VERSION",
    "WIRING",
    "Wiring",
]

PACKAGE = "aistack"
VERSION = importlib.metadata.version("aistack")

#: Every component by its token's name (`AwsDatasetBucket`), in the registry's order: the
#: order args.py is written in.
SPECS: dict[str, ComponentSpec] = {spec.name: spec for spec in COMPONENTS}

#: The module holding one adapter class per component, named as its token's name.
ADAPTERS_MODULE = "aistack_components.adapters"


Wiring = tuple[str, str, bool, str]


def _identity(workload: str) -> list[Wiring]:
    return [
        (
            "instance_role_arn",
            "str",
            True,
            f'The role the nodes run as (AwsWorkloadIdentity roleArns["{workload}"]).',
        ),
        (
            "instance_profile_arn",
            "str",
            True,
            f'Its instance profile (AwsWorkloadIdentity instanceProfileArns["{workload}"]).',
        ),
    ]


def _bucket(label: str, kind: str, use: str) -> list[Wiring]:
    return [
        (
            f"{label}_bucket_name",
            "str",
            True,
            f"The {label} bucket's bucketName (an AwsDatasetBucket of kind {kind} in the same "
            f"region). {use}",
        ),
        (f"{label}_bucket_arn", "str", True, f"The {label} bucket's bucketArn."),
        (
            f"{label}_kms_key_arn",
            "str",
            True,
            f"The {label} bucket's kmsKeyArn: its readers decrypt with it, through S3 only.",
        ),
    ]


def _tier(tier: str) -> list[Wiring]:
    return [
        ("subnet_ids", "list[str]", True, f"The network's {tier}SubnetIds: where nodes run."),
        (
            "security_group_id",
            "str",
            True,
            f"The network's {tier}SecurityGroupId: the nodes' security group.",
        ),
    ]


def _gcp_services() -> list[Wiring]:
    return [
        (
            "project",
            "plain:str",
            True,
            "The project ID (plain: names and checks use it): the GcpProjectServices' project.",
        ),
        (
            "enabled_services",
            "list[str]",
            True,
            "The GcpProjectServices' enabledServices: every resource here waits for the APIs "
            "it enables (a fresh project refuses calls to an API that is still turning on).",
        ),
    ]


#: Per token, the inputs that wire it to other components by id or ARN (component objects
#: cannot cross languages): (name, type, required, description). `pulumi.Input` unless the
#: type says `plain:` (a value the component needs while it builds, not an Output).
WIRING: dict[str, list[Wiring]] = {
    "AwsDatasetBucket": [
        (
            "access_logs_bucket_name",
            "str",
            False,
            "Name of the stack's logs bucket (an AwsDatasetBucket of kind logs in the same "
            "region): S3 server access logs for this bucket go there, under s3-access/<name>/.",
        ),
    ],
    "AwsTrainingPool": [
        *_tier("training"),
        *_identity("training"),
        (
            "job_role_arn",
            "str",
            False,
            "The role Batch jobs run as (AwsWorkloadIdentity "
            'roleArns["training-job"]); required for the batch scheduler.',
        ),
        *_bucket("dataset", "dataset", "Nodes and jobs read datasetPrefix from it."),
        *_bucket("checkpoints", "checkpoints", "Nodes and jobs write checkpointPrefix to it."),
    ],
    "AwsAuditTrail": [
        (
            "data_bucket_arns",
            "list[str]",
            False,
            "The bucketArn of each AwsDatasetBucket whose object reads and writes the trail "
            "records (the personal-data buckets, D5), as a list literal: the trail writes "
            "one selector prefix per bucket.",
        ),
    ],
    "AwsInferenceTier": [
        ("vpc_id", "str", True, "The network's vpcId."),
        *_tier("inference"),
        (
            "alb_subnet_ids",
            "list[str]",
            True,
            "The network's albSubnetIds (public ones when the network has publicEndpoint).",
        ),
        ("alb_security_group_id", "str", True, "The network's albSecurityGroupId."),
        (
            "vpc_cidr_block",
            "plain:str",
            True,
            "The network's cidrBlock (plain: it is written into the gateway's configuration): "
            "the only sources whose X-Forwarded-For the gateway trusts. Only the load balancer "
            "reaches the nodes.",
        ),
        *_identity("inference"),
        *_bucket("models", "models", "Nodes read <modelName>/ from it, nothing else."),
    ],
    "GcpDatasetBucket": [
        *_gcp_services(),
        (
            "access_logs_bucket_name",
            "str",
            False,
            "Name of the project's logs bucket (a GcpDatasetBucket of kind logs): this "
            "bucket's usage logs go there, under usage/<name>.",
        ),
    ],
    "GcpWorkloadIdentity": [
        *_gcp_services(),
        (
            "cluster_id",
            "str",
            False,
            "The id of the GKE cluster (with Workload Identity) whose pool "
            "<project>.svc.id.goog the Kubernetes bindings name: they wait for it. Needed "
            "for kubernetesServiceAccounts unless workloadPoolExists.",
        ),
    ],
    "GcpContainerRegistry": _gcp_services(),
    "GcpAuditLogs": _gcp_services(),
    "GcpBudgetGuard": [
        *_gcp_services(),
        (
            "access_logs_bucket_name",
            "str",
            False,
            "Name of the project's logs bucket (a GcpDatasetBucket of kind logs): the guard's "
            "state bucket's usage logs go there, under usage/<name>.",
        ),
    ],
    "GcpGpuQuota": _gcp_services(),
    "GcpNetwork": [
        *_gcp_services(),
        (
            "service_accounts",
            "plain:dict[str, pulumi.Input[str]]",
            True,
            "The service account e-mail each tier runs as, by tier (training, inference, "
            "notebook; GcpWorkloadIdentity emails[...]): the firewall rules name them. The "
            "tiers are plain: they are checked against the network's tiers.",
        ),
        (
            "dataset_region",
            "plain:str",
            False,
            "The dataset GcpDatasetBucket's region (plain: checked before anything is "
            "created): the network must be in it (D2).",
        ),
    ],
    "GcpGkeCluster": _gcp_services(),
    "GcpNotebook": [
        *_gcp_services(),
        (
            "network_region",
            "plain:str",
            True,
            "The GcpNetwork's region (plain: the notebook's zone is chosen from it while it "
            "builds, among the zones offering its machine type).",
        ),
        (
            "network_self_link",
            "str",
            True,
            "The GcpNetwork's networkSelfLink: the VPC the instance is in.",
        ),
        (
            "notebook_subnet_self_link",
            "str",
            True,
            'The GcpNetwork\'s subnetSelfLinks["notebook"]: the private subnet of its '
            "notebook tier.",
        ),
        (
            "service_account_email",
            "str",
            True,
            "The account the VM runs as: the one the network's notebook tier admits "
            '(GcpWorkloadIdentity emails["notebook"]).',
        ),
        (
            "dataset_bucket_name",
            "str",
            False,
            "The team's dataset GcpDatasetBucket's bucketName: the notebook may read it.",
        ),
        (
            "dataset_region",
            "plain:str",
            False,
            "That bucket's region (plain: checked before anything is created): the notebook "
            "must be in it (D2). Required with datasetBucketName.",
        ),
    ],
    "GcpTrainingPool": [
        *_gcp_services(),
        (
            "training_subnet_self_link",
            "str",
            True,
            "The GcpNetwork's subnetSelfLinks[\"training\"]: the VMs' subnet (no external IP).",
        ),
        (
            "training_service_account_email",
            "str",
            True,
            "The service account the network's training firewall rules name (its "
            "serviceAccounts training entry): the VMs run as it.",
        ),
        (
            "training_zones",
            "plain:list[str]",
            True,
            "The GcpNetwork's plannedZones[\"training\"] (plain: the group's zones).",
        ),
        (
            "training_health_check_port",
            "plain:int",
            True,
            "The GcpNetwork's trainingHealthCheckPort (plain): the autohealing check's port.",
        ),
        (
            "dataset_bucket_name",
            "str",
            True,
            "The dataset GcpDatasetBucket's bucket name (kind dataset, the pool's region).",
        ),
        (
            "checkpoints_bucket_name",
            "str",
            True,
            "The checkpoints GcpDatasetBucket's bucket name (kind checkpoints, same region).",
        ),
    ],
    "GcpInferenceTier": [
        *_gcp_services(),
        ("network_id", "str", True, "The GcpNetwork's networkId: the forwarding rule's VPC."),
        (
            "inference_subnet_self_link",
            "str",
            True,
            "The GcpNetwork's subnetSelfLinks[\"inference\"]: the VMs' subnet (no external IP).",
        ),
        (
            "inference_service_account_email",
            "str",
            True,
            "The service account the network's inference firewall rules name: the VMs run as it.",
        ),
        (
            "inference_zones",
            "plain:list[str]",
            True,
            "The GcpNetwork's plannedZones[\"inference\"] (plain: the groups' zones).",
        ),
        (
            "gateway_port",
            "plain:int",
            True,
            "The GcpNetwork's gatewayPort (plain): the port the load balancer reaches.",
        ),
        (
            "proxy_subnet_cidr",
            "plain:str",
            True,
            "The range of the GcpNetwork's proxy-only subnet (plain): the gateway trusts "
            "X-Forwarded-For from it only.",
        ),
        (
            "models_bucket_name",
            "str",
            True,
            "The models GcpDatasetBucket's bucket name (kind models, the tier's region).",
        ),
    ],
    "GcpGpuNodePool": [
        (
            "project",
            "plain:str",
            True,
            "The cluster's project ID (plain: the pool's checks and names use it).",
        ),
        (
            "cluster_region",
            "plain:str",
            True,
            "The GcpGkeCluster's region (plain: the zones offering the machine are chosen "
            "from it while the pool builds).",
        ),
        (
            "cluster_id",
            "str",
            True,
            "The GcpGkeCluster's clusterId: the pool joins it and waits for it.",
        ),
        (
            "node_service_account_email",
            "str",
            True,
            "The GcpGkeCluster's nodeServiceAccountEmail: the nodes run as it.",
        ),
        (
            "node_disk_key",
            "str",
            False,
            "The GcpGkeCluster's nodeDiskKey: the nodes' boot disks are encrypted with it "
            "(without it, Google's default key).",
        ),
    ],
    "K8sTeamNamespace": [
        (
            "identities",
            "plain:dict[str, pulumi.Input[str]]",
            False,
            "A workload's cloud identity by ServiceAccount name, each value an Output: the "
            "Google service account e-mail (GcpWorkloadIdentity emails[...]) for "
            "gke-workload-identity, the IAM role ARN (AwsWorkloadIdentity roleArns[...]) for "
            "eks-irsa and eks-pod-identity. The names are plain: they are checked against "
            "serviceAccounts.",
        ),
    ],
}

"""`aws.KarpenterGpuPool`: GPU capacity for an existing EKS cluster that runs Karpenter.

aistack does not install Karpenter here: the cluster, the Karpenter controller (Helm chart)
and its IAM role exist. This component adds what one GPU pool needs, Spot first with an
on-demand fallback, and the AWS half that makes Spot survivable:

- an `EC2NodeClass` (karpenter.k8s.aws/v1): the EKS-optimized AL2023 AMI by an alias pinned
  to a release (never `@latest`, which rolls every node when AWS publishes an AMI), IMDSv2
  required with a hop limit of 1 (pods cannot reach the node role's credentials), an
  encrypted gp3 root, instance-store NVMe as RAID0 behind the kubelet and containerd
  (dataset caches in `emptyDir` land on NVMe, D3), subnets and security groups selected by
  tag, and the node role below;
- a `NodePool` (karpenter.sh/v1) per capacity type, `<name>-spot` (weight 100) and
  `<name>-on-demand` (weight 10): the pool's GPU instance types from the aistack catalog,
  the `nvidia.com/gpu` NoSchedule taint, labels `aistack.dev/pool` and
  `aistack.dev/capacity`, `limits` on `nvidia.com/gpu` and cpu as the cost cap (C3),
  consolidation `WhenEmpty` after a delay (C5; never `WhenEmptyOrUnderutilized`, which
  evicts running training pods to repack them), `expireAfter` and a bounded
  `terminationGracePeriod`;
- the node IAM role with the AWS-managed policies EKS nodes need, and its EKS access entry
  (`EC2_LINUX`) so nodes can join; Karpenter makes the instance profile itself;
- the interruption queue: SQS (SSE on, TLS only) fed by EventBridge rules for Spot
  interruption warnings, rebalance recommendations, instance state changes, AWS Health
  scheduled changes and capacity-reservation interruptions (T1, T2), as Karpenter's own
  CloudFormation (karpenter-provider-aws v1.14.1) builds it; and an inline policy on the
  controller's role to read the queue and pass the node role.

`kueue_flavors()` hands `k8s.TrainingQueue` one flavor per capacity type, with the node
labels, toleration and GPU maximum that match these NodePools. Why each choice:
docs/components/aws/karpenter-gpu-pool.md.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pydantic import Field, field_validator

from aistack.aws import _karpenter as crd
from aistack.aws._base import child_opts, policy_document, policy_output, tags_for
from aistack.aws._node import offers_in_region
from aistack.catalog import InstanceType, eks_amis
from aistack.config import AistackModel, Governance
from aistack.contracts.capacity import CapacityNeed
from aistack.contracts.k8s import (
    CAPACITY_LABEL,
    POOL_LABEL,
    REGION_ANNOTATION,
    labels_for,
    stack_label,
)
from aistack.contracts.naming import stack_scoped
from aistack.errors import ConfigError, Problem, Problems

__all__ = [
    "CAPACITY_TYPES",
    "GPU_RESOURCE",
    "INTERRUPTION_EVENTS",
    "KarpenterGpuPool",
    "KarpenterGpuPoolArgs",
    "NODE_MANAGED_POLICIES",
    "POOL_LABEL",
    "CAPACITY_LABEL",
]

TOKEN = "aistack:index:AwsKarpenterGpuPool"

GPU_RESOURCE = "nvidia.com/gpu"
#: The labels every aistack GPU pool puts on its nodes (the queue/pool contract).
#: The AWS region a NodePool launches in (its cluster's), for the quota rule AIS-C1-01.
#: Karpenter's own well-known label for the capacity type (karpenter.sh/v1).
KARPENTER_CAPACITY_LABEL = "karpenter.sh/capacity-type"
Capacity = Literal["spot", "on-demand"]
CAPACITY_TYPES: tuple[Capacity, ...] = ("spot", "on-demand")
#: Karpenter orders NodePools by weight, highest first (docs v1.14 concepts/scheduling.md,
#: "Weighted NodePools"); Spot is tried first. Within one NodePool allowing both it would
#: also prefer Spot ("Karpenter will prioritize reserved capacity, followed by spot, then
#: finally on-demand", concepts/nodepools.md, capacity type), but one pool cannot label its
#: nodes `aistack.dev/capacity` per capacity nor cap Spot and on-demand GPUs separately,
#: which Kueue's per-flavor quota needs.
WEIGHTS: dict[Capacity, int] = {"spot": 100, "on-demand": 10}

#: The AWS-managed policies on the node role, as Karpenter's getting-started CloudFormation
#: (v1.14.1, KarpenterNodeRole) and the EKS User Guide ("Amazon EKS node IAM role") give
#: them: joining the cluster (WorkerNode), pulling images (ECR PullOnly: the pull-only
#: subset of ReadOnly), the VPC CNI assigning pod IPs (CNI; droppable when the aws-node
#: DaemonSet has its own role through IRSA or Pod Identity, as the EKS docs recommend), and
#: Session Manager instead of SSH keys (C6).
NODE_MANAGED_POLICIES: dict[str, str] = {
    "worker": "AmazonEKSWorkerNodePolicy",
    "ecr": "AmazonEC2ContainerRegistryPullOnly",
    "cni": "AmazonEKS_CNI_Policy",
    "ssm": "AmazonSSMManagedInstanceCore",
}

#: The EventBridge patterns Karpenter's interruption controller reads, one rule each, as
#: karpenter-provider-aws v1.14.1 website/content/en/docs/getting-started/
#: getting-started-with-karpenter/cloudformation.yaml defines them (ScheduledChangeRule,
#: SpotInterruptionRule, RebalanceRule, InstanceStateChangeRule,
#: CapacityReservationInterruptionRule).
INTERRUPTION_EVENTS: dict[str, dict[str, list[str]]] = {
    "scheduled-change": {"source": ["aws.health"], "detail-type": ["AWS Health Event"]},
    "spot-interruption": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Spot Instance Interruption Warning"],
    },
    "rebalance": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]},
    "instance-state-change": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Instance State-change Notification"],
    },
    "capacity-reservation-interruption": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"],
    },
}
#: The CloudFormation's MessageRetentionPeriod: an interruption notice older than 5 minutes
#: is past acting on (a Spot warning gives 2).
QUEUE_RETENTION_SECONDS = 300
TARGET_ID = "KarpenterInterruptionQueueTarget"

#: The EKS-optimized AL2023 AMI pinned to one release (amazon-eks-ami tags are vYYYYMMDD):
#: Karpenter docs v1.14 concepts/nodeclasses.md, spec.amiSelectorTerms: "Karpenter supports
#: automatic AMI selection and upgrades using the `latest` version pin, but this is **not**
#: recommended for production environments. When using `latest`, a new AMI release will
#: cause Karpenter to drift all out-of-date nodes". For GPU instance types the al2023 alias
#: resolves the NVIDIA variant itself, but only from the first release that has one
#: (aistack.catalog.eks_amis.FIRST_NVIDIA_RELEASE, v20240924): with an older one Karpenter
#: finds no AMI for a GPU type. AL2 is out of support (EKS, Nov 2025); Bottlerocket needs
#: its own two-volume layout, not offered yet.
_AMI_ALIAS = r"^al2023@v[0-9]{8}$"
_EXAMPLE_ALIAS = f"al2023@{eks_amis.EXAMPLE_RELEASE}"
_ROOT_DEVICE = "/dev/xvda"  # AL2023's root device (Karpenter's default mapping for AL2023)
_CLUSTER_NAME = r"^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$"
_ROLE_NAME = r"^[\w+=,.@-]{1,64}$"
_DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
_KARPENTER_DURATION = r"^([0-9]+(s|m|h))+$"
# The longest pool name whose NodePool name `<name>-on-demand` stays a 63-character label
# value (it becomes the `karpenter.sh/nodepool` label of every node).
_MAX_NAME = 63 - len("-on-demand")


class KarpenterGpuPoolArgs(AistackModel):
    """One GPU pool on an existing EKS cluster with Karpenter installed."""

    governance: Governance = Field(description="Owner, cost centre, allowed regions; required.")
    region: str = Field(description="The cluster's region; must be allowed (C4).")
    cluster_name: str = Field(
        pattern=_CLUSTER_NAME,
        description="The EKS cluster's name (the access entry is created on it).",
    )
    controller_role_name: str = Field(
        pattern=_ROLE_NAME,
        description="Name of the IAM role the Karpenter controller runs as (IRSA or Pod "
        "Identity). It gets an inline policy to read this pool's interruption queue and "
        "to pass the node role to EC2; the rest of its policy is the installer's.",
    )
    karpenter_namespace: str = Field(
        "kube-system",
        pattern=_DNS_LABEL,
        description="Namespace of the Karpenter controller (used in helm_values()).",
    )
    karpenter_service_account: str = Field(
        "karpenter",
        pattern=_DNS_LABEL,
        description="ServiceAccount of the Karpenter controller (used in helm_values()).",
    )
    instance_types: tuple[str, ...] = Field(
        min_length=1,
        description="GPU instance types from the aistack catalog (`aistack catalog`), all "
        "offered in the region (C2). Several sizes widen the Spot pools Karpenter can "
        "choose from.",
    )
    max_spot_gpus: int = Field(
        ge=0,
        description="GPUs the Spot NodePool may run at most: its `limits.nvidia.com/gpu` and "
        "the Spot flavor's quota in the queue (C3). 0: no Spot NodePool.",
    )
    max_on_demand_gpus: int = Field(
        ge=0,
        description="GPUs the on-demand fallback NodePool may run at most (C3). 0: no "
        "on-demand NodePool.",
    )
    ami_alias: str = Field(
        description="EKS-optimized AL2023 AMI pinned to a release, 'al2023@vYYYYMMDD' "
        f"(e.g. {_EXAMPLE_ALIAS!r}), one with images for the cluster's Kubernetes version. "
        "Required; '@latest' is refused: a new AMI release would drift and replace every "
        f"node, running jobs included. Releases before {eks_amis.FIRST_NVIDIA_RELEASE} are "
        "refused: they have no NVIDIA variant, so Karpenter finds no AMI for GPU instance "
        "types.",
    )
    subnet_selector_tags: dict[str, str] = Field(
        min_length=1,
        description="Tags selecting the (private) subnets nodes launch in, e.g. "
        "{'karpenter.sh/discovery': '<cluster>'}.",
    )
    security_group_selector_tags: dict[str, str] = Field(
        min_length=1,
        description="Tags selecting the node security groups, e.g. the cluster's node "
        "security group's {'karpenter.sh/discovery': '<cluster>'}.",
    )
    consolidate_after: str = Field(
        "300s",
        pattern=_KARPENTER_DURATION,
        description="How long a node must be empty before Karpenter removes it (C5). "
        "Default 300s: long enough for the next job of a queue to land, short enough that "
        "an idle GPU node costs minutes. 'Never' is refused.",
    )
    expire_after: str = Field(
        "720h",
        pattern=_KARPENTER_DURATION,
        description="Nodes older than this are replaced, so patched AMIs and kernels reach "
        "long-lived nodes. Default 720h (Karpenter's default). 'Never' is refused.",
    )
    termination_grace_period: str = Field(
        "48h",
        pattern=_KARPENTER_DURATION,
        description="How long a draining node waits for pods that block eviction "
        "(karpenter.sh/do-not-disrupt, PDBs) before they are deleted: bounds how long an "
        "expired node keeps billing. Default 48h; keep it above the jobs' wall-clock limit (T5).",
    )
    root_volume_gib: int = Field(
        200, ge=20, le=16384, description="Encrypted gp3 root volume (images are big)."
    )
    root_volume_kms_key_arn: str | None = Field(
        None,
        pattern=r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)/\S+$",
        description="KMS key for the root volume; default: the account's EBS default key.",
    )
    interruption_queue: bool = Field(
        True,
        description="Create the interruption queue and its EventBridge rules. Karpenter reads "
        "one queue per cluster (settings.interruptionQueue is a single name) and the rules "
        "match every instance of the account and region: a second pool on the same cluster "
        "sets false and shares the first pool's queue.",
    )
    cni_policy: bool = Field(
        True,
        description="Attach AmazonEKS_CNI_Policy to the node role. Turn off when the VPC "
        "CNI (aws-node) has its own role through IRSA or Pod Identity.",
    )
    session_manager: bool = Field(
        True, description="Attach AmazonSSMManagedInstanceCore: Session Manager, not SSH keys."
    )

    @field_validator("ami_alias")
    @classmethod
    def _pinned_ami(cls, alias: str) -> str:
        if alias.endswith("@latest"):
            raise ValueError(
                f"{alias!r} follows every AMI release: Karpenter drifts and replaces all "
                "nodes when AWS publishes one. Fix: pin a release, 'al2023@vYYYYMMDD' "
                f"(amazon-eks-ami release tags), e.g. {_EXAMPLE_ALIAS!r}."
            )
        if not re.fullmatch(_AMI_ALIAS, alias):
            raise ValueError(
                f"{alias!r} is not an AL2023 alias pinned to a release. Fix: use "
                f"'al2023@vYYYYMMDD', e.g. {_EXAMPLE_ALIAS!r}."
            )
        version = eks_amis.alias_version(alias)
        if version is not None and not eks_amis.has_nvidia(version):
            first = eks_amis.FIRST_NVIDIA_RELEASE
            raise ValueError(
                f"{alias!r} predates {first}, the first amazon-eks-ami release with AL2023 "
                "NVIDIA AMIs: with no NVIDIA variant Karpenter finds no AMI for the pool's "
                "GPU instance types, and its nodes never launch. Fix: pin a release on or "
                f"after {first} that has images for the cluster's Kubernetes version, e.g. "
                f"{_EXAMPLE_ALIAS!r} (Kubernetes 1.30-1.36; amazon-eks-ami CHANGELOG.md)."
            )
        return alias

    def offers(self, problems: Problems | None = None, where: str = "") -> list[InstanceType]:
        problems = problems if problems is not None else Problems()
        return offers_in_region(self.instance_types, self.region, where, problems)

    def capacities(self) -> dict[Capacity, int]:
        """The capacity types this pool offers, Spot first, with their GPU maximum."""
        wanted: dict[Capacity, int] = {
            "spot": self.max_spot_gpus,
            "on-demand": self.max_on_demand_gpus,
        }
        return {capacity: gpus for capacity, gpus in wanted.items() if gpus > 0}

    def disk_per_gpu_bytes(self) -> int:
        """The node-local disk per GPU on the smallest-disked type the pool may launch: its
        instance store (RAID0 under the kubelet, instanceStorePolicy), else the root volume."""
        return min(
            (
                offer.nvme_disks * offer.nvme_disk_gb * 10**9
                if offer.nvme_disks
                else self.root_volume_gib * 1024**3
            )
            // offer.gpu_count
            for offer in self.offers()
        )

    def kueue_flavors(self, pool: str) -> list[dict[str, Any]]:
        """The flavors a pool named `pool` with these args gives (`KarpenterGpuPool.
        kueue_flavors()`): known before the pool registers anything, so a stack can
        validate its queue first."""
        return [
            {
                "name": f"{pool}-{capacity}",
                "capacity": capacity,
                "nodeLabels": node_labels(pool, capacity),
                "tolerations": [
                    {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
                ],
                "gpus": gpus,
                "gpuResource": GPU_RESOURCE,
                # Kueue's quota of node-local disk: what that many GPUs' nodes have.
                "ephemeralStorage": f"{gpus * self.disk_per_gpu_bytes() // 10**9}G",
            }
            for capacity, gpus in self.capacities().items()
        ]

    def semantic_problems(self, where: str) -> list[Problem]:
        problems = Problems()

        def at(field: str) -> str:
            return f"{where}.{field}" if where else field

        region_problem = self.governance.region_problem(self.region, at("region"))
        if region_problem:
            problems.items.append(region_problem)
        self.offers(problems, where)
        if len(set(self.instance_types)) != len(self.instance_types):
            problems.add(at("instanceTypes"), "lists a type twice.", "list each type once.")
        if not self.capacities():
            problems.add(
                at("maxSpotGpus"),
                "both maxSpotGpus and maxOnDemandGpus are 0: the pool could never run a GPU.",
                "set maxSpotGpus (and maxOnDemandGpus for an on-demand fallback) above 0.",
            )
        return problems.items


class KarpenterGpuPool(pulumi.ComponentResource):
    """A Karpenter GPU pool (Spot first, on-demand fallback) and its interruption queue."""

    node_role: aws.iam.Role
    node_role_name: pulumi.Output[str]
    node_role_arn: pulumi.Output[str]
    access_entry: aws.eks.AccessEntry
    interruption_queue: aws.sqs.Queue | None
    interruption_queue_name: pulumi.Output[str] | None
    interruption_queue_arn: pulumi.Output[str] | None
    interruption_rules: dict[str, aws.cloudwatch.EventRule]
    node_class: k8s.apiextensions.CustomResource
    node_pools: dict[str, k8s.apiextensions.CustomResource]

    def __init__(
        self,
        name: str,
        args: KarpenterGpuPoolArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        args, self.offers = KarpenterGpuPoolArgs.validate_with(
            args, lambda parsed: _checks(name, parsed), where=name
        )
        super().__init__(
            TOKEN,
            name,
            {"cluster": args.cluster_name, "instanceTypes": list(args.instance_types)},
            opts,
        )
        self.args = args
        self._name = name
        here = child_opts(self)
        invoke = pulumi.InvokeOptions(parent=self)
        partition = aws.get_partition_output(opts=invoke).partition
        tags = tags_for(args.governance, workload="training", **{"aistack:pool": name})

        # ---- node identity -----------------------------------------------------------------
        self.node_role = aws.iam.Role(
            f"{name}-node",
            assume_role_policy=policy_document(
                {
                    "Sid": "TrustEc2",
                    "Effect": "Allow",
                    "Principal": {"Service": "ec2.amazonaws.com"},
                    "Action": "sts:AssumeRole",
                }
            ),
            description=f"aistack Karpenter GPU nodes of pool {name} on {args.cluster_name}",
            # Karpenter names the instance profile it creates from the role's name; a path
            # other than "/" is mishandled by aws-auth style mappings.
            path="/",
            tags=tags,
            opts=here,
        )
        wanted = {"cni": args.cni_policy, "ssm": args.session_manager}
        self.policy_attachments = [
            aws.iam.RolePolicyAttachment(
                f"{name}-node-{key}",
                role=self.node_role.name,
                policy_arn=pulumi.Output.concat("arn:", partition, ":iam::aws:policy/", policy),
                opts=here,
            )
            for key, policy in NODE_MANAGED_POLICIES.items()
            if wanted.get(key, True)
        ]
        # EKS API CreateAccessEntry: "If the principalArn is for an IAM role that's used for
        # self-managed Amazon EC2 nodes, specify EC2_LINUX ... Amazon EKS grants the
        # necessary permissions to the node for you" (no groups or access policies allowed).
        self.access_entry = aws.eks.AccessEntry(
            f"{name}-nodes",
            cluster_name=args.cluster_name,
            principal_arn=self.node_role.arn,
            type="EC2_LINUX",
            region=args.region,
            tags=tags,
            opts=here,
        )

        # ---- interruption queue ------------------------------------------------------------
        self.interruption_queue = None
        self.interruption_rules = {}
        self.interruption_targets = {}
        controller_statements: list[dict[str, Any]] = []
        if args.interruption_queue:
            self.interruption_queue = aws.sqs.Queue(
                f"{name}-interruption",
                # A fixed name, known before anything exists: Karpenter's install (its
                # settings.interruptionQueue) comes first, and must name the queue this
                # pool makes later. One Karpenter per cluster: the cluster names it.
                name=interruption_queue_name(args.cluster_name, name),
                message_retention_seconds=QUEUE_RETENTION_SECONDS,
                sqs_managed_sse_enabled=True,
                region=args.region,
                tags=tags,
                # A fixed name cannot be created beside itself: a replacement deletes the
                # old queue first (it holds only interruption events, minutes old).
                opts=pulumi.ResourceOptions.merge(
                    here, pulumi.ResourceOptions(delete_before_replace=True)
                ),
            )
            queue_arn = self.interruption_queue.arn
            for key, pattern in INTERRUPTION_EVENTS.items():
                rule = aws.cloudwatch.EventRule(
                    f"{name}-{key}",
                    description=f"Karpenter interruption events ({key}) for pool {name}",
                    event_pattern=json.dumps(pattern),
                    region=args.region,
                    tags=tags,
                    opts=here,
                )
                self.interruption_rules[key] = rule
                self.interruption_targets[key] = aws.cloudwatch.EventTarget(
                    f"{name}-{key}",
                    rule=rule.name,
                    arn=queue_arn,
                    target_id=TARGET_ID,
                    region=args.region,
                    opts=here,
                )
            self.queue_policy = aws.sqs.QueuePolicy(
                f"{name}-interruption-policy",
                queue_url=self.interruption_queue.url,
                # The CloudFormation's EC2InterruptionPolicy: EventBridge (and SQS itself)
                # may send; nothing reaches the queue over plain HTTP.
                policy=policy_output(
                    {
                        "Sid": "EventBridgeSends",
                        "Effect": "Allow",
                        "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                        "Action": "sqs:SendMessage",
                        "Resource": queue_arn,
                    },
                    {
                        "Sid": "DenyHTTP",
                        "Effect": "Deny",
                        "Principal": "*",
                        "Action": "sqs:*",
                        "Resource": queue_arn,
                        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                    },
                ),
                region=args.region,
                opts=here,
            )
            controller_statements.append(
                {
                    "Sid": "AllowInterruptionQueueActions",
                    "Effect": "Allow",
                    "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
                    "Resource": queue_arn,
                }
            )
        # What the controller needs for this pool beyond its installer's policy: the
        # CloudFormation's InterruptionPolicy (AllowInterruptionQueueActions) for this
        # queue, and AllowPassingInstanceRole for this node role, which its installer's
        # policy names only when the role is KarpenterNodeRole-<cluster>.
        self.controller_policy = aws.iam.RolePolicy(
            f"{name}-controller",
            role=args.controller_role_name,
            policy=policy_output(
                *controller_statements,
                {
                    "Sid": "AllowPassingNodeRole",
                    "Effect": "Allow",
                    "Action": "iam:PassRole",
                    "Resource": self.node_role.arn,
                    "Condition": {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}},
                },
            ),
            opts=here,
        )

        # ---- Karpenter objects -------------------------------------------------------------
        node_class_name = name
        node_class_spec = _node_class_spec(args, tags)
        node_class_spec["role"] = self.node_role.name
        object_labels = labels_for(
            args.governance,
            stack_label(pulumi.get_project(), pulumi.get_stack()),
            workload="training",
            pool=name,
        )
        self.node_class = k8s.apiextensions.CustomResource(
            f"{name}-node-class",
            api_version=crd.NODECLASS_API_VERSION,
            kind="EC2NodeClass",
            metadata={"name": node_class_name, "labels": object_labels},
            spec=node_class_spec,
            # Nodes launched before their role can join the cluster, pull images and be
            # passed to EC2 would fail to register.
            opts=child_opts(
                self,
                depends_on=[self.access_entry, *self.policy_attachments, self.controller_policy],
            ),
        )
        self.node_pools = {}
        for capacity, gpus in args.capacities().items():
            self.node_pools[capacity] = k8s.apiextensions.CustomResource(
                f"{name}-{capacity}",
                api_version=crd.NODEPOOL_API_VERSION,
                kind="NodePool",
                # The region is the cluster's, which no Karpenter field says: recorded so
                # that AIS-C1-01 holds the NodePool to the quota of that region.
                metadata={
                    "name": f"{name}-{capacity}",
                    "labels": object_labels,
                    "annotations": {REGION_ANNOTATION: args.region},
                },
                spec=_node_pool_spec(args, name, node_class_name, capacity, gpus, self.offers),
                opts=child_opts(self, depends_on=[self.node_class]),
            )

        self.node_role_name = self.node_role.name
        self.node_role_arn = self.node_role.arn
        queue = self.interruption_queue
        self.interruption_queue_name = queue.name if queue is not None else None
        self.interruption_queue_arn = queue.arn if queue is not None else None
        self.node_pool_names = {capacity: f"{name}-{capacity}" for capacity in self.node_pools}
        self.node_class_name = node_class_name
        self.register_outputs(
            {
                "node_role_name": self.node_role_name,
                "node_role_arn": self.node_role_arn,
                "interruption_queue_name": self.interruption_queue_name,
                "interruption_queue_arn": self.interruption_queue_arn,
                "node_pool_names": self.node_pool_names,
                "node_class_name": self.node_class_name,
                "helm_values": self.helm_values(),
            }
        )

    # ---- the queue/pool contract -------------------------------------------------------------

    def kueue_flavors(self) -> list[dict[str, Any]]:
        """One Kueue ResourceFlavor description per capacity type, Spot first, as
        `k8s.TrainingQueue`'s `flavors` takes them: the node labels this pool's NodePools
        set, a toleration of its GPU taint, and the GPU maximum of that capacity."""
        return self.args.kueue_flavors(self._name)

    def quota_needs(self) -> list[CapacityNeed]:
        """What `aws.GpuQuota` must request for this pool (C1), per capacity type. The
        NodePool's cpu limit is the most vCPUs it can hold; GpuQuota sizes a need as nodes x
        the largest type's vCPUs, so the nodes are that limit in the largest type."""
        largest = max(offer.vcpus for offer in self.offers)
        return [
            CapacityNeed(
                pool=f"{self._name}-{capacity}",
                machine_types=tuple(offer.name for offer in self.offers),
                max_nodes=math.ceil(cpu_limit(self.offers, gpus) / largest),
                market=capacity,
            )
            for capacity, gpus in self.args.capacities().items()
        ]

    def helm_values(self) -> dict[str, Any]:
        """The Karpenter chart values this pool relies on (charts/karpenter/values.yaml at
        v1.14.1: `settings.clusterName`, `settings.interruptionQueue`, the controller's
        `serviceAccount.name`), for the installer to merge."""
        return {
            "settings": {
                "clusterName": self.args.cluster_name,
                "interruptionQueue": self.interruption_queue_name,
            },
            "serviceAccount": {"name": self.args.karpenter_service_account},
            "namespace": self.args.karpenter_namespace,
        }


def _checks(name: str, args: KarpenterGpuPoolArgs) -> list[InstanceType]:
    """The component's own checks (its name); returns the catalog offers."""
    if len(name) > _MAX_NAME or not re.fullmatch(_DNS_LABEL, name):
        raise ConfigError(
            f"the pool's name {name!r} names its NodePools and EC2NodeClass (cluster-scoped) "
            f"and the {POOL_LABEL} node label: it must be a lowercase DNS label of at most "
            f"{_MAX_NAME} characters.",
            field=name,
            fix="rename the component, e.g. 'gpu-l4'.",
        )
    return args.offers(where=name)


def node_labels(pool: str, capacity: Capacity) -> dict[str, str]:
    """The labels a node of `pool` with `capacity` carries, which its flavor selects on."""
    return {POOL_LABEL: pool, CAPACITY_LABEL: capacity, KARPENTER_CAPACITY_LABEL: capacity}


def interruption_queue_name(cluster: str, pool: str) -> str:
    """The pool's interruption queue: `<cluster>-<pool>-karpenter-<stack digest>` (SQS:
    at most 80 characters of letters, digits, '-' and '_'; queue names are unique per
    region, and the account's other stacks pick theirs the same way)."""
    return stack_scoped(
        f"{cluster}-{pool}-karpenter", pulumi.get_project(), pulumi.get_stack(), limit=80
    )


def cpu_limit(offers: list[InstanceType], gpus: int) -> int:
    """vCPUs of the largest fleet of these types that holds `gpus` GPUs: the cpu limit that
    never stops the GPU limit from being reached, and caps what a CPU-only pod could grow."""
    return max(math.ceil(gpus / offer.gpu_count) * offer.vcpus for offer in offers)


def _node_class_spec(args: KarpenterGpuPoolArgs, tags: dict[str, str]) -> dict[str, Any]:
    spec = crd.EC2NodeClassSpec(
        # The role's name is known after it is created; the placeholder passes validation
        # and the component puts the Output in its place.
        role="placeholder",
        ami_selector_terms=(crd.AmiSelectorTerm(alias=args.ami_alias),),
        subnet_selector_terms=(crd.SelectorTerm(tags=args.subnet_selector_tags),),
        security_group_selector_terms=(crd.SelectorTerm(tags=args.security_group_selector_tags),),
        # Karpenter docs v1.14 concepts/nodeclasses.md, spec.instanceStorePolicy: RAID0
        # makes the instance-store NVMe the kubelet's and containerd's filesystem, so
        # ephemeral storage (a dataset cache emptyDir) is NVMe; without it Karpenter
        # ignores the disks (D3).
        instance_store_policy="RAID0",
        # IMDSv2 only, one hop: a pod (one network hop further) cannot fetch the node
        # role's credentials; pods get their own role through Pod Identity or IRSA (C6).
        metadata_options=crd.MetadataOptions(
            http_endpoint="enabled",
            http_protocol_ipv6="disabled",
            http_put_response_hop_limit=1,
            http_tokens="required",
        ),
        block_device_mappings=(
            crd.BlockDeviceMapping(
                device_name=_ROOT_DEVICE,
                root_volume=True,
                ebs=crd.Ebs(
                    volume_size=f"{args.root_volume_gib}Gi",
                    volume_type="gp3",
                    encrypted=True,
                    delete_on_termination=True,
                    kms_key_id=args.root_volume_kms_key_arn,
                ),
            ),
        ),
        associate_public_ip_address=False,
        detailed_monitoring=True,
        tags=tags,
    )
    return spec.model_dump(by_alias=True, exclude_none=True)


def _node_pool_spec(
    args: KarpenterGpuPoolArgs,
    pool: str,
    node_class: str,
    capacity: Capacity,
    gpus: int,
    offers: list[InstanceType],
) -> dict[str, Any]:
    spec = crd.NodePoolSpec(
        template=crd.Template(
            metadata=crd.TemplateMetadata(
                labels={POOL_LABEL: pool, CAPACITY_LABEL: capacity},
            ),
            spec=crd.TemplateSpec(
                node_class_ref=crd.NodeClassRef(
                    group="karpenter.k8s.aws", kind="EC2NodeClass", name=node_class
                ),
                requirements=(
                    crd.NodeSelectorRequirement(
                        key=KARPENTER_CAPACITY_LABEL, operator="In", values=(capacity,)
                    ),
                    crd.NodeSelectorRequirement(
                        key="node.kubernetes.io/instance-type",
                        operator="In",
                        values=tuple(args.instance_types),
                    ),
                    crd.NodeSelectorRequirement(
                        key="kubernetes.io/arch", operator="In", values=("amd64",)
                    ),
                    crd.NodeSelectorRequirement(
                        key="kubernetes.io/os", operator="In", values=("linux",)
                    ),
                ),
                # Only pods that tolerate it (GPU jobs, the device plugin) land on GPU nodes.
                taints=(crd.Taint(key=GPU_RESOURCE, value="present", effect="NoSchedule"),),
                expire_after=args.expire_after,
                termination_grace_period=args.termination_grace_period,
            ),
        ),
        disruption=crd.Disruption(
            consolidation_policy="WhenEmpty",
            consolidate_after=args.consolidate_after,
        ),
        limits={GPU_RESOURCE: str(gpus), "cpu": str(cpu_limit(offers, gpus))},
        weight=WEIGHTS[capacity],
    )
    return spec.model_dump(by_alias=True, exclude_none=True)

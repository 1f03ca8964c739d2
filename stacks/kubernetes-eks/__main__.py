"""A team's GPU training and serving on an existing EKS cluster: a
Spot-first GPU pool whose capacity feeds a Kueue queue, a training and a serving namespace,
a job template on the queue, GPU monitoring, a model served in two versions (KEDA on the
runtime's queue, on the pool's on-demand nodes), the image policy, the EC2 GPU quota the
pool needs and a budget. Karpenter, Kueue, JobSet, KEDA, the Prometheus Operator, the
Gateway API CRDs and a Gateway controller are installed beforehand (stacks/kubernetes-operators,
stack `eks`), which owns Karpenter: a cluster that runs its own Karpenter already leaves
`karpenter` out of that stack's config and gives its install this stack's
`karpenterHelmValues` (installing the `karpenter-crd` chart over CRDs another release made
fails, aws/karpenter-provider-aws#5096). The order holds on a fresh cluster because the
pool's interruption queue has a fixed name the operators stack's config already names
(`<cluster>-<pool>-karpenter`); Karpenter retries until the queue exists.

    aistack preview stacks/kubernetes-eks        # offline
    cd stacks/kubernetes-eks && pulumi up         # for real: the AWS account and the cluster
"""

from typing import Any

import pulumi

from aistack import aws, k8s
from aistack.config import parse_all
from aistack.errors import ConfigError

config = pulumi.Config()
region = pulumi.Config("aws").require("region")
team = config.require("team")
cluster = config.require("clusterName")
governance = {
    "owner": team,
    "costCenter": f"{team}-research",
    "environment": pulumi.get_stack(),
    "allowedRegions": [region],
}
discovery = config.require_object("discoveryTags")
train_ns, serve_ns = f"{team}-train", f"{team}-serve"
POOL, QUEUE, TEMPLATE = "gpu", f"{team}-gpu", "street-scenes"


def planned_flavors(pool: aws.KarpenterGpuPoolArgs | None) -> list[dict[str, Any]]:
    """The flavors the pool will give (`pool.kueue_flavors()`), from its parsed args, so
    the queue is validated before the pool registers anything. A stand-in when the pool's
    own block is wrong: its problems are reported already, the queue's others still are."""
    if pool is None:
        return [{"name": f"{POOL}-spot", "capacity": "spot", "gpus": 1}]
    return training_flavors(pool.kueue_flavors(POOL))


def training_flavors(flavors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Training queues on the pool's Spot capacity only: its on-demand NodePool is
    serving's. Kueue admits on quota alone, so an on-demand flavor would admit jobs onto
    nodes serving already holds, and they would wait Pending, holding quota."""
    return [flavor for flavor in flavors if flavor["capacity"] == "spot"]


def inference_args() -> dict[str, Any]:
    """The served model, on the pool's on-demand nodes (a Spot reclaim would take replicas
    away under load); the on-demand NodePool is serving's alone (training_flavors)."""
    live = config.require("liveVersion")
    return {
        "governance": governance,
        "modelName": config.require("modelName"),
        "versions": [
            {"version": version, "weight": 100 if version == live else 0}
            for version in config.require_object("servedVersions")
        ],
        "image": config.require("servingImage"),
        "gatewayImage": config.require("gatewayImage"),
        "model": {"uri": config.require("modelUri"), "syncImage": config.require("modelSyncImage")},
        "nodeLabels": {"aistack.dev/pool": POOL, "aistack.dev/capacity": "on-demand"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "cpu": "3",
        "memory": "12Gi",
        # The quota holds one version at its maximum, the standby's replica and the live
        # version's rolling-update surge replica.
        "maxReplicas": config.require_int("servingGpus") - 2,
        "autoscaling": {"kind": "keda", "prometheusUrl": config.require("prometheusUrl")},
        "requestLogging": "metadata",
        "fallback": "previous_version",
        "parentGateway": config.require_object("gateway"),
        "ingressFrom": [
            {
                "namespace": config.require_object("gateway")["namespace"],
                "purpose": "the Gateway controller's proxies",
            }
        ],
        "monitoring": "prometheus-operator",
        # kube-prometheus-stack's Prometheus selects monitors and rules by this.
        "monitoringLabels": {"release": "kube-prometheus-stack"},
        "latencySloMs": 6000,
        "replicaHourlyCostUsd": config.require_float("replicaHourlyCostUsd"),
        "quality": {"threshold": 0.7},
    }


# Every block validated before the first resource: one ConfigError naming every problem,
# and nothing half-created in the account or the cluster by a `pulumi up` that stops at
# the fifth block. The pool goes first because the queue's flavors are derived from it.
pool_block = {
    "governance": governance,
    "region": region,
    "clusterName": cluster,
    "controllerRoleName": config.require("karpenterControllerRole"),
    "instanceTypes": config.require_object("instanceTypes"),
    "maxSpotGpus": config.require_int("maxSpotGpus"),
    "maxOnDemandGpus": config.get_int("maxOnDemandGpus") or 0,
    "amiAlias": config.require("amiAlias"),
    "subnetSelectorTags": discovery,
    "securityGroupSelectorTags": discovery,
}
problems = []
try:
    pool_args: aws.KarpenterGpuPoolArgs | None = aws.KarpenterGpuPoolArgs.parse(
        pool_block, where="gpuPool"
    )
except ConfigError as error:
    problems.extend(error.problems)
    pool_args = None
# Training queues on Spot only (training_flavors): the on-demand capacity is serving's.
training_gpus = pool_args.capacities().get("spot", 1) if pool_args else 1
alert_emails = config.require_object("alertEmails")
try:
    args = parse_all(
        {
            "identity": (
                aws.WorkloadIdentityArgs,
                {
                    "governance": governance,
                    # Only the trainer's role: the nodes' role is the pool's own.
                    "workloads": [],
                    "kubernetesServiceAccounts": [
                        {
                            "name": "trainer",
                            "namespace": train_ns,
                            "serviceAccount": "trainer",
                            "mechanism": "pod-identity",
                            "clusterName": cluster,
                            "region": region,
                        },
                        # The model servers' own role: the models bucket grants it reads.
                        {
                            "name": "server",
                            "namespace": serve_ns,
                            "serviceAccount": "server",
                            "mechanism": "pod-identity",
                            "clusterName": cluster,
                            "region": region,
                        },
                    ],
                },
            ),
            "training": (
                k8s.TeamNamespaceArgs,
                {
                    "team": team,
                    "tier": "train",
                    # The namespace may hold what the pool can launch, and no more.
                    "gpus": training_gpus,
                    "cpu": "96",
                    "memory": "768Gi",
                    "governance": governance,
                    "serviceAccounts": [{"name": "trainer", "identity": "eks-pod-identity"}],
                    "allowEgress": [
                        {
                            "cidr": config.require("vpcEndpointsCidr"),
                            "purpose": "S3 and ECR through the VPC's interface endpoints",
                        }
                    ],
                },
            ),
            "serving": (
                k8s.TeamNamespaceArgs,
                {
                    "team": team,
                    "tier": "serve",
                    "gpus": config.require_int("servingGpus"),
                    "governance": governance,
                    "serviceAccounts": [{"name": "server", "identity": "eks-pod-identity"}],
                    "allowEgress": [
                        {
                            "cidr": config.require("vpcEndpointsCidr"),
                            "purpose": "S3 (the models) through the VPC's interface endpoints",
                        }
                    ],
                },
            ),
            "inference": (k8s.InferenceServiceArgs, inference_args()),
            "admission": (k8s.ImagePolicyArgs, {"governance": governance}),
            "queue": (
                k8s.TrainingQueueArgs,
                {
                    "governance": governance,
                    "namespaces": [train_ns],
                    "flavors": planned_flavors(pool_args),
                },
            ),
            "template": (
                k8s.TrainingJobTemplateArgs,
                {
                    "governance": governance,
                    # The LocalQueue TrainingQueue creates in the namespace: named as the queue.
                    "queue": QUEUE,
                    "namespace": train_ns,
                    "serviceAccount": "trainer",
                    "image": config.require("image"),
                    "command": ["python", "-m", "train"],
                    "nodes": 1,
                    "gpusPerNode": 1,
                    "cpu": "3",
                    "memory": "12Gi",
                    "sharedMemoryGib": 4,
                    "maxRuntimeMinutes": 240,
                    "checkpointUri": config.require("checkpointUri"),
                    "datasetUri": config.require("datasetUri"),
                    "datasetVersion": config.require("datasetVersion"),
                },
            ),
            "monitoring": (
                k8s.GpuMonitoringArgs,
                {
                    "platform": "prometheus-operator",
                    # What stacks/kubernetes-operators (eks) installs: NVIDIA's dcgm-exporter
                    # chart in the namespace dcgm-exporter, not the GPU Operator.
                    "exporter": "dcgm-exporter-chart",
                    "governance": governance,
                    # kube-prometheus-stack's Prometheus selects monitors and rules by this.
                    "selectorLabels": {"release": "kube-prometheus-stack"},
                    "namespaces": [train_ns, serve_ns],
                    "queueWait": {"maxWaitSeconds": 3600, "clusterQueues": [QUEUE]},
                    "alertLabels": {"team": team},
                },
            ),
            "gpuQuota": (
                aws.GpuQuotaArgs,
                {"governance": governance, "region": region},
            ),
            "budget": (
                aws.BudgetGuardArgs,
                {
                    "governance": governance,
                    "region": region,
                    "monthlyLimit": config.require_int("monthlyLimit"),
                    "alertEmails": alert_emails,
                },
            ),
        }
    )
except ConfigError as error:
    problems.extend(error.problems)
if problems:
    raise ConfigError(problems)
assert pool_args is not None

# Spot first, on-demand fallback, and the interruption queue that drains Spot nodes on
# their two-minute warning (T1, T2). Karpenter itself is the operators stack's, installed
# with the Helm values exported below (the same as its Pulumi.eks.yaml says).
pool = aws.KarpenterGpuPool(POOL, pool_args)

# The trainer's own role through EKS Pod Identity: no keys, not the node's role (C6).
identity = aws.WorkloadIdentity("identity", args["identity"])
train = k8s.TeamNamespace(
    train_ns, args["training"], identities={"trainer": identity.role_arn("trainer")}
)
serve = k8s.TeamNamespace(
    serve_ns, args["serving"], identities={"server": identity.role_arn("server")}
)

# The pool's capacity types are the queue's flavors: Kueue admits no more GPUs per
# capacity than the NodePool may launch, and steers admitted jobs to it (C3, C5).
queue = k8s.TrainingQueue(
    QUEUE,
    {
        **args["queue"].model_dump(by_alias=True),
        "namespaces": [train],
        "flavors": training_flavors(pool.kueue_flavors()),
    },
)
template = k8s.TrainingJobTemplate(
    TEMPLATE,
    {
        **args["template"].model_dump(by_alias=True),
        "queue": queue.local_queue_names[train_ns],
        # Below serving: on shared nodes the scheduler evicts training first (S1).
        "priorityClassName": queue.priority_class_names["training"],
        # Kueue's workload priority: runs are batch work an urgent run may preempt.
        "priorityClass": queue.workload_priority_class_names["low"],
    },
    team=train,
)
k8s.GpuMonitoring("gpu-monitoring", args["monitoring"])
k8s.ImagePolicy("image-policy", args["admission"])
chat = k8s.InferenceService(
    args["inference"].model_name,
    args["inference"].model_copy(
        update={"priority_class_name": queue.priority_class_names["serving"]}
    ),
    team=serve,
)

# EC2's vCPU quota for what the NodePools may launch, filed before they need it (C1).
quota = aws.GpuQuota("gpu-quota", args["gpuQuota"], pools=[pool])
# The month's budget with a daily alert (C3).
aws.BudgetGuard("budget", args["budget"])

pulumi.export("karpenterHelmValues", pool.helm_values())
pulumi.export("trainingNamespace", train.namespace_name)
pulumi.export("servingNamespace", serve.namespace_name)
pulumi.export("localQueue", queue.local_queue_names[train_ns])
pulumi.export("submit", template.submit_command)
pulumi.export("stopQueue", queue.stop_command)
pulumi.export("resumeQueue", queue.resume_command)
pulumi.export("gpuQuota", quota.summaries)
pulumi.export(
    "rollbackCommand",
    {
        v.version: chat.rollback_command(v.version)
        for v in args["inference"].versions
        if v.weight == 0
    },
)

"""A team's GPU training and serving on GKE in one program: the cloud half (a private VPC, a
private regional GKE cluster, a Spot GPU node pool from zero for training, an on-demand one
for serving) and, through a Kubernetes provider built from the cluster's kubeconfig, the
Kubernetes half (a training and a serving namespace, a Kueue queue fed by the pool's own
flavors, a job template, GPU monitoring on GKE's managed Prometheus and DCGM, a model served
in two versions behind the aistack gateway on GKE's Gateway API, and the admission policies
that refuse images without a digest).

The order of a first deployment, and why: Kueue's objects are custom resources, and a
custom resource cannot be created, or previewed, before its CRD is installed
(pulumi/pulumi-kubernetes#3247); the CRDs come with the operators, which need the cluster.
So this one program runs twice around the operators stack:

1. `pulumi config set operatorsInstalled false && pulumi up`: the network, the cluster and
   its pools, the trainer's identity, the namespaces and the monitoring (built-in kinds, and
   Managed Prometheus' CRDs, which GKE installs with the cluster);
2. stacks/kubernetes-operators, stack `gke` (`gke: true`: Kueue, JobSet and the Custom
   Metrics Stackdriver Adapter the serving HPAs read, as the `metrics-adapter` identity
   this stack makes; GKE manages Prometheus, DCGM and the Gateway API CRDs), with this
   stack's `kubeconfig` output as its `kubernetes:kubeconfig`;
3. `pulumi config set operatorsInstalled true && pulumi up`: the queue and the job template.

Later `up`s run with `operatorsInstalled: true` (the dev stack's setting, so the offline
preview shows the whole platform). Splitting the cluster into a stack of its own would give
three stacks instead of two runs of one; it buys nothing while the CRDs still have to wait.

The control plane has a private endpoint only, and the Kubernetes provider reaches it
through the kubeconfig `gcp.GkeCluster.kubeconfig()` renders (the private address,
`gke-gcloud-auth-plugin`): run `pulumi up` from inside the VPC, e.g. a CI runner there.

    aistack preview stacks/kubernetes-gke        # offline
    cd stacks/kubernetes-gke && pulumi up         # for real, in the three steps above
"""

from typing import Any

import pulumi
import pulumi_gcp
import pulumi_kubernetes as kubernetes

from aistack import gcp, k8s
from aistack.config import parse_all
from aistack.errors import ConfigError
from aistack.gcp.workload_identity import account_id_for

config = pulumi.Config()
project = pulumi.Config("gcp").require("project")
region = pulumi.Config("gcp").require("region")
team = config.require("team")
operators_installed = config.require_bool("operatorsInstalled")
governance = {
    "owner": config.require("owner"),
    "costCenter": f"{team}-research",
    "environment": pulumi.get_stack(),
    "allowedRegions": [region],
}
POOL, QUEUE, SERVING_POOL = "l4-spot", f"{team}-gpu", "l4-serve"
train_ns, serve_ns = f"{team}-train", f"{team}-serve"
# The nodes' account (gcp.GkeCluster makes it): named here, so the network's firewall can
# admit the training nodes by it before the cluster exists.
node_account = account_id_for(team, "gke-nodes")  # ends in the stack's digest
node_email = f"{node_account}@{project}.iam.gserviceaccount.com"
# The private control plane's range: the cluster's, the firewall's way to it, and the
# operators stack's `apiServer` (stacks/kubernetes-operators/Pulumi.gke.yaml).
CONTROL_PLANE = "172.16.0.0/28"
# Google APIs through Private Google Access (private.googleapis.com): the buckets.
google_apis = {"cidr": "199.36.153.8/30", "purpose": "Google APIs: datasets, checkpoints"}


def planned_flavors(pool: gcp.GpuNodePoolArgs | None) -> list[dict[str, Any]]:
    """The flavor the pool will give (`pool.kueue_flavors()`, the queue/pool contract of
    docs/components/gcp/gpu-node-pool.md), from its parsed args, so the queue is validated
    before anything registers. When the pool's own block is wrong (its problems are
    reported already), a one-GPU Spot stand-in, so the queue's other problems still are."""
    if pool is not None:
        return pool.kueue_flavors(POOL)
    return [
        {
            "name": f"{POOL}-spot",
            "capacity": "spot",
            "nodeLabels": {"aistack.dev/pool": POOL, "cloud.google.com/gke-spot": "true"},
            "gpus": 1,
        }
    ]


def inference_args() -> dict[str, Any]:
    """The served model: every version deployed, the live one taking all traffic
    (rollback: `pulumi config set liveVersion <version> && pulumi up`)."""
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
        "nodeLabels": {"aistack.dev/pool": SERVING_POOL},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "cpu": "6",
        "memory": "24Gi",
        # The quota holds one version at its maximum, the standby's replica and the live
        # version's rolling-update surge replica.
        "maxReplicas": config.require_int("servingGpus") - 2,
        # GKE's custom metrics adapter serves Managed Prometheus series under this name.
        "autoscaling": {
            "kind": "hpa",
            "hpaMetric": "prometheus.googleapis.com|vllm:num_requests_waiting|gauge",
        },
        "requestLogging": "metadata",
        "fallback": "previous_version",
        # The platform's internal Gateway (gke-l7-rilb) and the region's proxy-only subnet.
        # GKE's internal Application Load Balancer: a HealthCheckPolicy per version.
        "parentGateway": {
            "name": "internal",
            "namespace": "gateway",
            "gatewayClass": "gke-l7-rilb",
        },
        "ingressFrom": [
            {"cidr": config.require("proxyOnlySubnet"), "purpose": "the Gateway's proxies"},
            {"cidr": "35.191.0.0/16", "purpose": "Google Cloud health checks"},
            {"cidr": "130.211.0.0/22", "purpose": "Google Cloud health checks"},
        ],
        "trustedProxyCidrs": [config.require("proxyOnlySubnet")],
        "monitoring": "gke-managed-prometheus",
        "latencySloMs": 6000,
        "replicaHourlyCostUsd": config.require_float("replicaHourlyCostUsd"),
        "quality": {"threshold": 0.7},
    }


# Every block validated before the first resource: one ConfigError naming every problem.
# The pool goes first because the queue's flavors and the namespace's quota follow from it.
problems = []
try:
    pool_args: gcp.GpuNodePoolArgs | None = gcp.GpuNodePoolArgs.parse(
        {
            "governance": governance,
            "machineType": config.require("machineType"),
            "market": "spot",
            "maxNodes": config.require_int("maxNodes"),
            "maxNodeHours": config.get_float("maxNodeHours") or 24,
        },
        where="pool",
    )
except ConfigError as error:
    problems.extend(error.problems)
    pool_args = None
alert_emails = config.require_object("alertEmails")
pool_gpus = pool_args.max_nodes * pool_args.machine.gpu_count if pool_args else 1
try:
    args = parse_all(
        {
            "apis": (gcp.ProjectServicesArgs, {"project": project}),
            # Where the budget guard's bucket logs its usage.
            "logs": (
                gcp.DatasetBucketArgs,
                {"kind": "logs", "region": region, "governance": governance},
            ),
            "network": (
                gcp.NetworkArgs,
                {
                    "governance": governance,
                    "region": region,
                    "trainingMachineTypes": [config.require("machineType")],
                    # The nodes may reach the control plane on 443 and the kubelet port.
                    "gkeControlPlaneCidr": CONTROL_PLANE,
                },
            ),
            "cluster": (
                gcp.GkeClusterArgs,
                {
                    "region": region,
                    "governance": governance,
                    # Wired to the network below; placeholders to validate the rest now.
                    "network": "network",
                    "subnetwork": "subnetwork",
                    "podsRangeName": "training-pods",
                    "servicesRangeName": "training-services",
                    "nodeAccountId": node_account,
                    "masterIpv4CidrBlock": CONTROL_PLANE,
                    # Private endpoint only: cluster.kubeconfig() names it, so `pulumi up`
                    # of the Kubernetes half runs inside the VPC (a CI runner there).
                },
            ),
            "identity": (
                gcp.WorkloadIdentityArgs,
                {
                    "governance": governance,
                    "accountPrefix": team,
                    "workloads": [
                        {
                            "name": "trainer",
                            "kubernetesServiceAccounts": [
                                {"namespace": train_ns, "serviceAccount": "trainer"}
                            ],
                        },
                        # The model servers read the models bucket (the copy init container).
                        {
                            "name": "server",
                            "kubernetesServiceAccounts": [
                                {"namespace": serve_ns, "serviceAccount": "server"}
                            ],
                        },
                        # The Custom Metrics Stackdriver Adapter the operators stack installs
                        # (customMetricsAdapter.gcpServiceAccount): it reads Managed
                        # Prometheus series from Cloud Monitoring for the serving HPAs.
                        {
                            "name": "metrics-adapter",
                            "kubernetesServiceAccounts": [
                                {
                                    "namespace": "custom-metrics",
                                    "serviceAccount": "custom-metrics-stackdriver-adapter",
                                }
                            ],
                            "projectRoles": ["roles/monitoring.viewer"],
                        },
                    ],
                },
            ),
            "train": (
                k8s.TeamNamespaceArgs,
                {
                    "team": team,
                    "tier": "train",
                    # The namespace may hold what the pool can launch, and no more.
                    "gpus": pool_gpus,
                    "cpu": "32",
                    "memory": "128Gi",
                    "governance": governance,
                    "serviceAccounts": [{"name": "trainer", "identity": "gke-workload-identity"}],
                    "allowEgress": [google_apis],
                },
            ),
            "serve": (
                k8s.TeamNamespaceArgs,
                {
                    "team": team,
                    "tier": "serve",
                    "gpus": config.require_int("servingGpus"),
                    "governance": governance,
                    "serviceAccounts": [{"name": "server", "identity": "gke-workload-identity"}],
                    "allowEgress": [google_apis],
                },
            ),
            "servingPool": (
                gcp.GpuNodePoolArgs,
                {
                    "governance": governance,
                    "machineType": config.require("machineType"),
                    # Serving on demand: a Spot reclaim takes replicas away under load.
                    "market": "on-demand",
                    # No node lifetime, and out of the budget kill switch's reach.
                    "workload": "serving",
                    "maxNodes": config.require_int("servingGpus"),
                },
            ),
            "inference": (k8s.InferenceServiceArgs, inference_args()),
            "admission": (k8s.ImagePolicyArgs, {"governance": governance}),
            "queue": (
                k8s.TrainingQueue.check_args,
                {
                    "governance": governance,
                    "namespaces": [train_ns],
                    "flavors": planned_flavors(pool_args),
                },
            ),
            "job": (
                k8s.TrainingJobTemplateArgs,
                {
                    "governance": governance,
                    # The LocalQueue TrainingQueue creates in the namespace: named as the queue.
                    "queue": QUEUE,
                    "namespace": train_ns,
                    "serviceAccount": "trainer",
                    "image": config.require("trainingImage"),
                    "command": ["python", "-m", "train"],
                    "nodes": 1,
                    "gpusPerNode": 1,
                    # Within a g2-standard-8 (8 vCPU, 32 GB) after GKE's reservations.
                    "cpu": "6",
                    "memory": "24Gi",
                    "sharedMemoryGib": 4,
                    "maxRuntimeMinutes": 720,
                    "checkpointUri": config.require("checkpointUri"),
                    "datasetUri": config.require("datasetUri"),
                    "datasetVersion": config.require("datasetVersion"),
                },
            ),
            # The GPU quota the pool needs, filed before it scales (C1), and the month's
            # budget with a daily alert and the kill switch that scales the pool to 0 (C3).
            "quota": (
                gcp.GpuQuotaArgs,
                {
                    "governance": governance,
                    "contactEmail": alert_emails[0] if alert_emails else "",
                    # One preference per quota and dimensions in a project: the project's quota
                    # stack files them, this one checks (quotaMode: check in Pulumi.dev.yaml).
                    "mode": config.get("quotaMode") or "file",
                },
            ),
            "budget": (
                gcp.BudgetGuardArgs,
                {
                    "governance": governance,
                    "region": region,
                    "billingAccount": config.require("billingAccount"),
                    "monthlyLimit": config.require_int("monthlyLimit"),
                    "alertEmails": alert_emails,
                    "killSwitch": True,
                },
            ),
            # gcp.GkeCluster turns on GKE's managed DCGM metrics: nothing to install.
            "monitoring": (
                k8s.GpuMonitoringArgs,
                {
                    "platform": "gke-managed-prometheus",
                    "exporter": "gke-managed-dcgm",
                    "governance": governance,
                    "queueWait": {"maxWaitSeconds": 3600, "clusterQueues": [QUEUE]},
                },
            ),
        }
    )
except ConfigError as error:
    problems.extend(error.problems)
if problems:
    raise ConfigError(problems)
assert pool_args is not None

# ---- the cloud half ---------------------------------------------------------------------
services = gcp.ProjectServices("apis", args["apis"])
# Private subnets in the zones that offer the GPU (C2), default-deny firewall (S1).
network = gcp.Network(
    "net", args["network"], services=services, service_accounts={"training": node_email}
)
cluster = gcp.GkeCluster(
    "train",
    {
        **args["cluster"].model_dump(by_alias=True),
        "network": network.network_self_link,
        "subnetwork": network.subnet_self_links["training"],
        "podsRangeName": network.pods_range_name,
        "servicesRangeName": network.services_range_name,
    },
    services=services,
)
# Spot first, from zero nodes to maxNodes, GPU and Spot taints, a node lifetime (C5, T5).
pool = gcp.GpuNodePool(
    POOL,
    {**pool_args.model_dump(by_alias=True), "zones": network.zones("training")},
    cluster=cluster,
)
# Serving nodes of their own, on demand, from zero to one per serving GPU.
serving_pool = gcp.GpuNodePool(
    SERVING_POOL,
    {**args["servingPool"].model_dump(by_alias=True), "zones": network.zones("training")},
    cluster=cluster,
)
gcp.GpuQuota("gpu-quota", args["quota"], services=services, pools=[pool, serving_pool])
logs = gcp.DatasetBucket("logs", args["logs"], services=services)
gcp.BudgetGuard("budget", args["budget"], services=services, access_logs=logs)
# The trainer's own Google account, reached from its Kubernetes ServiceAccount (C6).
identity = gcp.WorkloadIdentity("identity", args["identity"], services=services, cluster=cluster)
# The data the trainer reads and writes: the team's buckets (stacks/gcp-guardrails).
for workload, role, uri, what in (
    ("trainer", "roles/storage.objectViewer", config.require("datasetUri"), "dataset"),
    ("trainer", "roles/storage.objectUser", config.require("checkpointUri"), "checkpoints"),
    # The servers read the model versions, nothing else (no training data: S1).
    ("server", "roles/storage.objectViewer", config.require("modelUri"), "models"),
):
    pulumi_gcp.storage.BucketIAMMember(
        f"{workload}-{what}",
        bucket=uri.removeprefix("gs://").split("/", 1)[0],
        role=role,
        member=identity.member(workload),
    )

# ---- the Kubernetes half, on that cluster ----------------------------------------------
provider = kubernetes.Provider("gke", kubeconfig=cluster.kubeconfig())
on_cluster = pulumi.ResourceOptions(providers=[provider])
train = k8s.TeamNamespace(
    train_ns, args["train"], opts=on_cluster, identities={"trainer": identity.email("trainer")}
)
serve = k8s.TeamNamespace(
    serve_ns, args["serve"], opts=on_cluster, identities={"server": identity.email("server")}
)
monitoring = k8s.GpuMonitoring("gpu", args["monitoring"], opts=on_cluster)
if operators_installed:
    # The pool's capacity is the queue's flavor: Kueue admits no more GPUs than the pool
    # may launch, and steers admitted jobs onto its Spot nodes (C3, C5).
    queue = k8s.TrainingQueue(
        QUEUE,
        {
            **args["queue"].model_dump(by_alias=True),
            "namespaces": [train],
            "flavors": pool.kueue_flavors(),
        },
        opts=on_cluster,
    )
    template = k8s.TrainingJobTemplate(
        f"{team}-vision",
        {
            **args["job"].model_dump(by_alias=True),
            "queue": queue.local_queue_names[train_ns],
            # Below serving: on shared nodes the scheduler evicts training first (S1).
            "priorityClassName": queue.priority_class_names["training"],
            # Kueue's workload priority: runs are batch work an urgent run may preempt.
            "priorityClass": queue.workload_priority_class_names["low"],
        },
        team=train,
        opts=on_cluster,
    )
    pulumi.export("submitCommand", template.submit_command)
    pulumi.export("stopQueueCommand", queue.stop_command)
    pulumi.export("resumeQueueCommand", queue.resume_command)
# Serving: built-in kinds, and the HTTPRoute and Managed Prometheus objects whose CRDs GKE
# installs with the cluster (Gateway API on, gcp.GkeCluster), so no wait for the operators.
k8s.ImagePolicy("image-policy", args["admission"], opts=on_cluster)
# The serving PriorityClass is the queue's, so it is named once the operators' step made
# the queue: a name no PriorityClass has would have every serving pod refused.
serving_priority = queue.priority_class_names["serving"] if operators_installed else None
chat = k8s.InferenceService(
    args["inference"].model_name,
    args["inference"].model_copy(update={"priority_class_name": serving_priority}),
    team=serve,
    opts=on_cluster,
)
pulumi.export(
    "rollbackCommand",
    {
        v.version: chat.rollback_command(v.version)
        for v in args["inference"].versions
        if v.weight == 0
    },
)

pulumi.export("kubeconfig", pulumi.Output.secret(cluster.kubeconfig()))
# The operators stack's customMetricsAdapter.gcpServiceAccount.
pulumi.export("metricsAdapterServiceAccount", identity.email("metrics-adapter"))
pulumi.export("trainingNamespace", train.namespace_name)
pulumi.export("servingNamespace", serve.namespace_name)
pulumi.export("gpuAlerts", monitoring.alert_names)
pulumi.export("kueueFlavors", pool.kueue_flavors())

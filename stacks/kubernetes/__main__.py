"""A team's AI platform on an existing GKE (or any) cluster, reached with the kubeconfig and
context in the stack's config: a namespace to train in and one to serve from (quota'd, Pod
Security restricted, default-deny, keyless ServiceAccounts), a Kueue queue capped at the
GPU node pool's maximum with Spot first, a training job template that resumes and stops
itself, GPU monitoring with idle and starvation alerts, admission policies that refuse
images without a digest and serving pods without an explicit model version, and a model
served in two versions
behind the aistack gateway, weighted by an HTTPRoute, autoscaled up to a cap and alerted
on latency, errors, cost and quality. The cluster and its GPU node pools are the cloud's
(gcp.GkeCluster + gcp.GpuNodePool, or aws.KarpenterGpuPool on EKS: stacks/kubernetes-eks);
Kueue, JobSet, the Gateway API CRDs and a Gateway are installed beforehand
(stacks/kubernetes-operators; docs/reference.md, "Kubernetes").

Rollback: `pulumi config set liveVersion <version> && pulumi up` moves all traffic to that
version (the others stay deployed, one warm replica each); in an emergency the
`rollbackCommand` output does the same at once with kubectl.

    aistack preview stacks/kubernetes        # offline
    cd stacks/kubernetes && pulumi up         # for real, against the kubeconfig's cluster
"""

import pulumi

from aistack import catalog, k8s
from aistack.config import parse_all

config = pulumi.Config()
team = config.require("team")
governance = {
    "owner": config.require("owner"),
    "costCenter": f"{team}-research",
    "allowedRegions": [config.require("region")],
}
# Google APIs through Private Google Access (private.googleapis.com), e.g. GCS.
google_apis = {"cidr": "199.36.153.8/30", "purpose": "Google APIs: datasets, checkpoints"}
train_namespace, serve_namespace = f"{team}-train", f"{team}-serve"

# The GKE Spot GPU node pool the cloud stack made (gcp.GpuNodePool): its kueue_flavors()
# when both live in one program; here, from another stack, the same labels and taints by
# hand (docs/components/gcp/gpu-node-pool.md).
pool = config.require("gpuNodePool")
spot_flavor = {
    "name": f"{pool}-spot",
    "capacity": "spot",
    "gpus": config.require_int("poolMaxGpus"),
    "nodeLabels": {
        "aistack.dev/pool": pool,
        "aistack.dev/capacity": "spot",
        "cloud.google.com/gke-spot": "true",
    },
    "tolerations": [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {
            "key": "cloud.google.com/gke-spot",
            "operator": "Equal",
            "value": "true",
            "effect": "NoSchedule",
        },
    ],
}
# The serving side: an on-demand GPU node pool of its own (Spot would take replicas away
# under load), the versions the route knows, and the one that takes the traffic.
serving_pool = config.require("servingNodePool")
served_versions = config.require_object("servedVersions")
live = config.require("liveVersion")
hostname = config.require("hostname")
proxy_only_subnet = config.require("proxyOnlySubnet")
blocks = {
    "train": {
        "team": team,
        "tier": "train",
        "gpus": config.require_int("trainingGpus"),
        "cpu": "96",
        "memory": "768Gi",
        "governance": governance,
        "serviceAccounts": [
            {
                "name": "trainer",
                "identity": "gke-workload-identity",
                "gcpServiceAccount": config.require("trainerServiceAccount"),
            }
        ],
        "allowEgress": [google_apis],
    },
    "serve": {
        "team": team,
        "tier": "serve",
        "gpus": config.require_int("servingGpus"),
        "governance": governance,
        # The model-sync init container reads the weights from the models bucket: a
        # Google identity of its own and a way to Google's APIs through default-deny.
        "serviceAccounts": [
            {
                "name": "server",
                "identity": "gke-workload-identity",
                "gcpServiceAccount": config.require("serverServiceAccount"),
            }
        ],
        "allowEgress": [{**google_apis, "purpose": "Google APIs: the model weights"}],
    },
    "queue": {"governance": governance, "namespaces": [train_namespace], "flavors": [spot_flavor]},
    "job": {
        "governance": governance,
        "queue": f"{team}-gpu",
        "serviceAccount": "trainer",
        "image": config.require("trainingImage"),
        "command": ["python", "-m", "train"],
        "nodes": 2,
        "gpusPerNode": 4,
        "maxRuntimeMinutes": 720,
        "checkpointUri": config.require("checkpointUri"),
        "datasetUri": config.require("datasetUri"),
        "datasetVersion": config.require("datasetVersion"),
    },
    "inference": {
        "governance": governance,
        "modelName": config.require("modelName"),
        # Oldest first: each falls back to the one before it while its server is down.
        "versions": [
            {"version": version, "weight": 100 if version == live else 0}
            for version in served_versions
        ],
        "image": config.require("servingImage"),
        "gatewayImage": config.require("gatewayImage"),
        "model": {"uri": config.require("modelUri"), "syncImage": config.require("modelSyncImage")},
        "nodeLabels": {"aistack.dev/pool": serving_pool},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        # Sized for the pool's g2-standard-8 (8 vCPU, 32 GB): the defaults (8 CPU, 64Gi, as
        # for an 8-GPU machine) never schedule there. Left: what GKE reserves for the node
        # and the gateway sidecar's 0.5 CPU and memory.
        "cpu": "6",
        "memory": "24Gi",
        "maxReplicas": config.require_int("servingMaxReplicas"),
        # GKE's custom metrics adapter serves Managed Prometheus series under this name
        # (ai-on-gke autoscale/horizontal-pod-autoscaler.yaml).
        "autoscaling": {
            "kind": "hpa",
            "hpaMetric": "prometheus.googleapis.com|vllm:num_requests_waiting|gauge",
        },
        "requestLogging": "metadata",
        "fallback": "previous_version",
        "parentGateway": {
            "name": "internal",
            "namespace": "gateway",
            "sectionName": "https",
            # GKE's internal Application Load Balancer: a HealthCheckPolicy per version.
            "gatewayClass": "gke-l7-rilb",
        },
        "hostnames": [hostname],
        # GKE's internal Application Load Balancer reaches pods from the region's proxy-only
        # subnet, its health checks from Google's two ranges (GKE docs, "Gateway security").
        "ingressFrom": [
            {"cidr": proxy_only_subnet, "purpose": "the Gateway's proxies"},
            {"cidr": "35.191.0.0/16", "purpose": "Google Cloud health checks"},
            {"cidr": "130.211.0.0/22", "purpose": "Google Cloud health checks"},
        ],
        "trustedProxyCidrs": [proxy_only_subnet],
        "monitoring": "gke-managed-prometheus",
        "latencySloMs": 6000,
        # One replica is one on-demand node of the serving pool (the catalog's list price).
        "replicaHourlyCostUsd": catalog.get(config.require("servingMachineType"), "gcp").price(
            config.require("region")
        ),
        "quality": {"threshold": 0.7},
    },
    # Cluster-wide admission: images by digest, serving pods with an explicit version.
    "admission": {"governance": governance},
    # gcp.GkeCluster turns on GKE's managed DCGM metrics: nothing to scrape here.
    "monitoring": {
        "platform": "gke-managed-prometheus",
        "exporter": "gke-managed-dcgm",
        "governance": governance,
    },
}
# Every block validated before the first resource: one ConfigError naming every problem.
parse_all(
    {
        "train": (k8s.TeamNamespaceArgs, blocks["train"]),
        "serve": (k8s.TeamNamespaceArgs, blocks["serve"]),
        "queue": (k8s.TrainingQueue.check_args, blocks["queue"]),
        "job": (k8s.TrainingJobTemplateArgs, blocks["job"]),
        "monitoring": (k8s.GpuMonitoringArgs, blocks["monitoring"]),
        "inference": (k8s.InferenceServiceArgs, blocks["inference"]),
        "admission": (k8s.ImagePolicyArgs, blocks["admission"]),
    }
)

train = k8s.TeamNamespace(train_namespace, blocks["train"])
serve = k8s.TeamNamespace(serve_namespace, blocks["serve"])
# The component, not its name: the LocalQueue then waits for the Namespace.
queue = k8s.TrainingQueue(f"{team}-gpu", {**blocks["queue"], "namespaces": [train]})
llama = k8s.TrainingJobTemplate(
    f"{team}-llama",
    {
        **blocks["job"],
        "queue": queue.local_queue_names[train_namespace],
        # Below serving: on shared nodes the scheduler evicts training first (S1).
        "priorityClassName": queue.priority_class_names["training"],
        # Kueue's workload priority: runs are batch work an urgent run may preempt.
        "priorityClass": queue.workload_priority_class_names["low"],
    },
    team=train,
)
monitoring = k8s.GpuMonitoring("gpu", blocks["monitoring"])
k8s.ImagePolicy("image-policy", blocks["admission"])
chat = k8s.InferenceService(
    blocks["inference"]["modelName"],
    {**blocks["inference"], "priorityClassName": queue.priority_class_names["serving"]},
    team=serve,
)

pulumi.export("trainingNamespace", train.namespace_name)
pulumi.export("servingNamespace", serve.namespace_name)
pulumi.export("localQueue", queue.local_queue_names[train_namespace])
pulumi.export("submitCommand", llama.submit_command)
pulumi.export("stopQueueCommand", queue.stop_command)
pulumi.export("resumeQueueCommand", queue.resume_command)
pulumi.export("gpuAlerts", monitoring.alert_names)
pulumi.export("endpoint", f"https://{hostname}")
pulumi.export("liveVersion", live)
pulumi.export(
    "rollbackCommand",
    {version: chat.rollback_command(version) for version in served_versions if version != live},
)
pulumi.export("servingAlerts", chat.alert_names)

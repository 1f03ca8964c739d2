"""A team's training platform on an existing GKE (or any) cluster: a namespace to train in
and one to serve from (quota'd, Pod Security restricted, default-deny, keyless
ServiceAccounts), a Kueue queue capped at the GPU node pool's maximum with Spot first, a
training job template that resumes and stops itself, and GPU monitoring with idle and
starvation alerts. The cluster and its Spot GPU node pool are the cloud's
(gcp.GkeCluster + gcp.GpuNodePool, or aws.KarpenterGpuPool on EKS: stacks/kubernetes-eks);
Kueue, JobSet and the Prometheus Operator are installed beforehand (README, "Kubernetes").

    aistack preview stacks/kubernetes        # offline
    cd stacks/kubernetes && pulumi up         # for real, against the kubeconfig's cluster
"""

import pulumi

from aistack import k8s
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
# hand (docs/components/gcp-gpu-node-pool.md).
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
        "serviceAccounts": [{"name": "server"}],
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
    }
)

train = k8s.TeamNamespace(train_namespace, blocks["train"])
serve = k8s.TeamNamespace(serve_namespace, blocks["serve"])
# The component, not its name: the LocalQueue then waits for the Namespace.
queue = k8s.TrainingQueue(f"{team}-gpu", {**blocks["queue"], "namespaces": [train]})
llama = k8s.TrainingJobTemplate(
    f"{team}-llama",
    {**blocks["job"], "queue": queue.local_queue_names[train_namespace]},
    team=train,
)
monitoring = k8s.GpuMonitoring("gpu", blocks["monitoring"])

pulumi.export("trainingNamespace", train.namespace_name)
pulumi.export("servingNamespace", serve.namespace_name)
pulumi.export("localQueue", queue.local_queue_names[train_namespace])
pulumi.export("submitCommand", llama.submit_command)
pulumi.export("stopQueueCommand", queue.stop_command)
pulumi.export("resumeQueueCommand", queue.resume_command)
pulumi.export("gpuAlerts", monitoring.alert_names)

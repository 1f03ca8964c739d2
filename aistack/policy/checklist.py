"""The checklist every rule refers to: stable IDs, titles, and items infrastructure cannot do.

The IDs and wording follow the project's checklist; `DOCUMENTED_ONLY` names the items that
no resource setting can prove, with the reason and what the infrastructure does to help.
"""

from __future__ import annotations

__all__ = ["CHECKLIST", "DOCUMENTED_ONLY", "ON_THE_CLOUD", "SECTIONS"]

CHECKLIST: dict[str, str] = {
    "C1": "Request GPU quota before you need it",
    "C2": "Choose the region on GPU availability",
    "C3": "Budget with daily alerts",
    "C4": "Data residency",
    "C5": "Automatic shutdown for idle instances and notebooks",
    "C6": "Workload identity, not stored keys",
    "D1": "Datasets in object storage, versioned, lifecycle rules for old versions",
    "D2": "Data in the same region as compute",
    "D3": "Cache to local NVMe",
    "D4": "Record dataset versions with results",
    "D5": "Personal data anonymised or excluded unless documented basis",
    "D6": "Dataset lineage and licence",
    "E1": "Container image with pinned framework, CUDA, driver",
    "E2": "Every dependency pinned with a lockfile",
    "E3": "Record the random seed",
    "E4": "Training code versioned with its configuration",
    "E5": "Checkpoints in object storage with commit and config",
    "E6": "Experiment tracker",
    "T1": "Checkpoint frequently to durable storage",
    "T2": "Resumable without manual intervention",
    "T3": "Profile the data pipeline; GPU starvation",
    "T4": "Early stopping",
    "T5": "Maximum wall-clock time",
    "T6": "Logs to a persistent store",
    "S1": "Serving separate from training",
    "S2": "Optimised inference runtime",
    "S3": "Concurrency and rate limits",
    "S4": "Cache in front for repeated inputs",
    "S5": "Latency percentiles, error rate, cost per request",
    "S6": "Previous model version deployable",
    "S7": "Model artefacts versioned explicitly",
    "G1": "Which data may be used for training, on what basis",
    "G2": "Whether outputs are logged and whether logs hold personal data",
    "G3": "Who approves a model for production",
    "G4": "Monitoring model degradation",
    "G5": "Fallback when the model or serving is unavailable",
    "G6": "Which third-party services see your data",
}

SECTIONS: dict[str, str] = {
    "C": "Before anything runs",
    "D": "Data",
    "E": "Reproducible environments",
    "T": "Training runs",
    "S": "Serving",
    "G": "Governance",
}

#: Items no resource setting can prove, with why and what the infrastructure does instead.
DOCUMENTED_ONLY: dict[str, str] = {
    "E2": "Lockfiles live in the team's source repository, not in the cloud. aistack pins its "
    "own dependencies in uv.lock and takes images only by digest (E1), so an image built from "
    "a lockfile stays that build.",
    "E6": "The experiment tracker is an application choice. aistack passes the run id, seed, "
    "dataset version, commit and config hash into every run so the tracker records them, and "
    "lists the tracker as a third-party service (G6) when it is hosted.",
    "T4": "Early stopping is a training-loop decision. The infrastructure makes it pay: a "
    "finished job releases its capacity (Batch minimum 0 vCPUs, ASG scale-to-zero), so a run "
    "that stops early stops billing.",
}


#: Items a Kubernetes stack cannot keep with Kubernetes objects: the cloud under the cluster
#: does, with the component named (docs/checklist.md, "On Kubernetes", owner "the cloud").
#: A stack of Kubernetes objects only shows them as the cloud's, not as missing.
ON_THE_CLOUD: dict[str, str] = {
    "C1": "GPU quota is the cloud's: gcp.GpuQuota / aws.GpuQuota from the pools' quota_needs().",
    "C2": "The node pools' zones are the cloud's: gcp.GpuNodePool, aws.KarpenterGpuPool.",
    "C4": "The cluster's and the buckets' regions are the cloud's: gcp.GkeCluster, "
    "aws.DatasetBucket / gcp.DatasetBucket.",
    "D1": "Datasets live in object storage: aws.DatasetBucket, gcp.DatasetBucket.",
    "D2": "The cluster sits in the buckets' region: gcp.GkeCluster datasets=, the EKS region.",
    "D5": "Legal basis and classification are the datasets' metadata (aws.DatasetBucket, "
    "gcp.DatasetBucket).",
    "D6": "Lineage and licence are the datasets' metadata (aws.DatasetBucket, gcp.DatasetBucket).",
    "T6": "Pod logs are kept by the cluster's log pipeline: gcp.GkeCluster workload logging.",
    "G1": "The datasets' legal basis: DatasetMetadata on aws.DatasetBucket / gcp.DatasetBucket.",
}

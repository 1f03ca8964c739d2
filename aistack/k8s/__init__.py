"""aistack's Kubernetes components, for any conformant cluster (EKS, GKE, kind, ...).
Imported lazily, like `aistack.aws` and `aistack.gcp`: `from aistack import k8s` costs
nothing until a component is used, and an AWS or GCP stack never loads pulumi_kubernetes.

    from aistack import k8s
    team = k8s.TeamNamespace("ml-train", {"team": "ml", "gpus": 8, "governance": {...}})

The cloud halves (GPU node pools, the IAM roles and Google service accounts the
ServiceAccounts link to) live in `aistack.aws` and `aistack.gcp`.
"""

from __future__ import annotations

from aistack._lazy import lazy_exports

_EXPORTS = {
    "TeamNamespace": "aistack.k8s.team_namespace",
    "TeamNamespaceArgs": "aistack.k8s.team_namespace",
    "WorkloadAccount": "aistack.k8s.team_namespace",
    "EgressAllow": "aistack.k8s.team_namespace",
    "GpuMonitoring": "aistack.k8s.gpu_monitoring",
    "GpuMonitoringArgs": "aistack.k8s.gpu_monitoring",
    "TrainingJobTemplate": "aistack.k8s.training_job_template",
    "TrainingJobTemplateArgs": "aistack.k8s.training_job_template",
    "TrainingQueue": "aistack.k8s.training_queue",
    "TrainingQueueArgs": "aistack.k8s.training_queue",
    "QueueFlavor": "aistack.k8s.training_queue",
    "InferenceService": "aistack.k8s.inference_service",
    "InferenceServiceArgs": "aistack.k8s._inference_args",
    "ImagePolicy": "aistack.k8s.image_policy",
    "ImagePolicyArgs": "aistack.k8s.image_policy",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("aistack.k8s", _EXPORTS, globals())

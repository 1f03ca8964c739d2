"""aistack's AWS components. Imported lazily: `from aistack import aws` costs nothing until a
component is used, and a GCP-only program never loads pulumi_aws.

    from aistack import aws
    data = aws.DatasetBucket("data", {...})
"""

from __future__ import annotations

from aistack._lazy import lazy_exports

_EXPORTS = {
    "DatasetBucket": "aistack.aws.dataset_bucket",
    "DatasetBucketArgs": "aistack.aws.dataset_bucket",
    "DatasetMetadata": "aistack.aws.dataset_bucket",
    "WorkloadIdentity": "aistack.aws.workload_identity",
    "WorkloadIdentityArgs": "aistack.aws.workload_identity",
    "BudgetGuard": "aistack.aws.budget_guard",
    "BudgetGuardArgs": "aistack.aws.budget_guard",
    "GpuQuota": "aistack.aws.gpu_quota",
    "GpuQuotaArgs": "aistack.aws.gpu_quota",
    "ContainerRegistry": "aistack.aws.container_registry",
    "ContainerRegistryArgs": "aistack.aws.container_registry",
    "image_by_digest": "aistack.images",
    "Network": "aistack.aws.network",
    "NetworkArgs": "aistack.aws.network",
    "TrainingPool": "aistack.aws.training_pool",
    "TrainingPoolArgs": "aistack.aws.training_pool",
    "Notebook": "aistack.aws.notebook",
    "NotebookArgs": "aistack.aws.notebook",
    "InferenceTier": "aistack.aws.inference_tier",
    "InferenceTierArgs": "aistack.aws.inference_tier",
    "AuditTrail": "aistack.aws.audit_trail",
    "AuditTrailArgs": "aistack.aws.audit_trail",
    "KarpenterGpuPool": "aistack.aws.karpenter_gpu_pool",
    "KarpenterGpuPoolArgs": "aistack.aws.karpenter_gpu_pool",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("aistack.aws", _EXPORTS, globals())

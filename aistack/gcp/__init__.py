"""aistack's Google Cloud components. Imported lazily, like `aistack.aws`: `from aistack
import gcp` costs nothing until a component is used, and an AWS-only program never loads
pulumi_gcp (nor a GCP-only one pulumi_aws).

    from aistack import gcp
    services = gcp.ProjectServices("apis", {...})
    data = gcp.DatasetBucket("data", {...}, services=services)
"""

from __future__ import annotations

from aistack._lazy import lazy_exports

_EXPORTS = {
    "ProjectServices": "aistack.gcp.project_services",
    "ProjectServicesArgs": "aistack.gcp.project_services",
    "DatasetBucket": "aistack.gcp.dataset_bucket",
    "DatasetBucketArgs": "aistack.gcp.dataset_bucket",
    "GpuQuota": "aistack.gcp.gpu_quota",
    "GpuQuotaArgs": "aistack.gcp.gpu_quota",
    "GpuNeed": "aistack.gcp.gpu_quota",
    "HasGpuNeeds": "aistack.gcp.gpu_quota",
    "WorkloadIdentity": "aistack.gcp.workload_identity",
    "WorkloadIdentityArgs": "aistack.gcp.workload_identity",
    "ContainerRegistry": "aistack.gcp.container_registry",
    "ContainerRegistryArgs": "aistack.gcp.container_registry",
    "BudgetGuard": "aistack.gcp.budget_guard",
    "BudgetGuardArgs": "aistack.gcp.budget_guard",
    "Network": "aistack.gcp.network",
    "NetworkArgs": "aistack.gcp.network",
    "GkeCluster": "aistack.gcp.gke_cluster",
    "GkeClusterArgs": "aistack.gcp.gke_cluster",
    "GpuNodePool": "aistack.gcp.gpu_node_pool",
    "GpuNodePoolArgs": "aistack.gcp.gpu_node_pool",
    "Notebook": "aistack.gcp.notebook",
    "NotebookArgs": "aistack.gcp.notebook",
    "TrainingPool": "aistack.gcp.training_pool",
    "TrainingPoolArgs": "aistack.gcp.training_pool",
    "InferenceTier": "aistack.gcp.inference_tier",
    "InferenceTierArgs": "aistack.gcp.inference_tier",
    "AuditLogs": "aistack.gcp.audit_logs",
    "AuditLogsArgs": "aistack.gcp.audit_logs",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("aistack.gcp", _EXPORTS, globals())

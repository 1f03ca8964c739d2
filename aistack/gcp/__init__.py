"""aistack's Google Cloud components. Imported lazily, like `aistack.aws`: `from aistack
import gcp` costs nothing until a component is used, and an AWS-only program never loads
pulumi_gcp (nor a GCP-only one pulumi_aws).

    from aistack import gcp
    services = gcp.ProjectServices("apis", {...})
    data = gcp.DatasetBucket("data", {...}, services=services)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aistack._lazy import lazy_exports
from aistack._registry import exports

# Each component and its Args come from the registry (aistack/_registry.py); below, the
# package's other public names.
_EXPORTS = {
    **exports("gcp"),
    "GpuNeed": "aistack.gcp.gpu_quota",
    "CapacityNeed": "aistack.contracts.capacity",
    "HasCapacityNeeds": "aistack.contracts.capacity",
    "HasGpuNeeds": "aistack.gcp.gpu_quota",
}

__all__ = sorted(_EXPORTS)

# What a type checker sees (`X as X`: an explicit re-export, since __all__ is computed);
# at run time the lazy exports below. tests/test_typed_api.py keeps the two equal.
if TYPE_CHECKING:
    from aistack.contracts.capacity import CapacityNeed as CapacityNeed
    from aistack.contracts.capacity import HasCapacityNeeds as HasCapacityNeeds
    from aistack.gcp.audit_logs import AuditLogs as AuditLogs
    from aistack.gcp.audit_logs import AuditLogsArgs as AuditLogsArgs
    from aistack.gcp.budget_guard import BudgetGuard as BudgetGuard
    from aistack.gcp.budget_guard import BudgetGuardArgs as BudgetGuardArgs
    from aistack.gcp.container_registry import ContainerRegistry as ContainerRegistry
    from aistack.gcp.container_registry import ContainerRegistryArgs as ContainerRegistryArgs
    from aistack.gcp.dataset_bucket import DatasetBucket as DatasetBucket
    from aistack.gcp.dataset_bucket import DatasetBucketArgs as DatasetBucketArgs
    from aistack.gcp.gke_cluster import GkeCluster as GkeCluster
    from aistack.gcp.gke_cluster import GkeClusterArgs as GkeClusterArgs
    from aistack.gcp.gpu_node_pool import GpuNodePool as GpuNodePool
    from aistack.gcp.gpu_node_pool import GpuNodePoolArgs as GpuNodePoolArgs
    from aistack.gcp.gpu_quota import GpuNeed as GpuNeed
    from aistack.gcp.gpu_quota import GpuQuota as GpuQuota
    from aistack.gcp.gpu_quota import GpuQuotaArgs as GpuQuotaArgs
    from aistack.gcp.gpu_quota import HasGpuNeeds as HasGpuNeeds
    from aistack.gcp.inference_tier import InferenceTier as InferenceTier
    from aistack.gcp.inference_tier import InferenceTierArgs as InferenceTierArgs
    from aistack.gcp.network.args import NetworkArgs as NetworkArgs
    from aistack.gcp.network.component import Network as Network
    from aistack.gcp.notebook import Notebook as Notebook
    from aistack.gcp.notebook import NotebookArgs as NotebookArgs
    from aistack.gcp.project_services import ProjectServices as ProjectServices
    from aistack.gcp.project_services import ProjectServicesArgs as ProjectServicesArgs
    from aistack.gcp.training_pool import TrainingPool as TrainingPool
    from aistack.gcp.training_pool import TrainingPoolArgs as TrainingPoolArgs
    from aistack.gcp.workload_identity import WorkloadIdentity as WorkloadIdentity
    from aistack.gcp.workload_identity import WorkloadIdentityArgs as WorkloadIdentityArgs


__getattr__, __dir__ = lazy_exports("aistack.gcp", _EXPORTS, globals())

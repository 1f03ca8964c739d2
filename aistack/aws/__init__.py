"""aistack's AWS components. Imported lazily: `from aistack import aws` costs nothing until a
component is used, and a GCP-only program never loads pulumi_aws.

    from aistack import aws
    data = aws.DatasetBucket("data", {...})
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aistack._lazy import lazy_exports
from aistack._registry import exports

# Each component and its Args come from the registry (aistack/_registry.py); below, the
# package's other public names.
_EXPORTS = {
    **exports("aws"),
    "DatasetMetadata": "aistack.aws.dataset_bucket",
    "image_by_digest": "aistack.contracts.images",
    "CapacityNeed": "aistack.contracts.capacity",
    "HasCapacityNeeds": "aistack.contracts.capacity",
    # Deprecated (one release): CapacityNeed and HasCapacityNeeds.
    "QuotaNeed": "aistack.aws.gpu_quota",
    "HasQuotaNeeds": "aistack.aws.gpu_quota",
}

__all__ = sorted(_EXPORTS)

# What a type checker sees (`X as X`: an explicit re-export, since __all__ is computed);
# at run time the lazy exports below. tests/test_typed_api.py keeps the two equal.
if TYPE_CHECKING:
    from aistack.aws.audit_trail import AuditTrail as AuditTrail
    from aistack.aws.audit_trail import AuditTrailArgs as AuditTrailArgs
    from aistack.aws.budget_guard.args import BudgetGuardArgs as BudgetGuardArgs
    from aistack.aws.budget_guard.component import BudgetGuard as BudgetGuard
    from aistack.aws.container_registry import ContainerRegistry as ContainerRegistry
    from aistack.aws.container_registry import ContainerRegistryArgs as ContainerRegistryArgs
    from aistack.aws.dataset_bucket import DatasetBucket as DatasetBucket
    from aistack.aws.dataset_bucket import DatasetBucketArgs as DatasetBucketArgs
    from aistack.aws.dataset_bucket import DatasetMetadata as DatasetMetadata
    from aistack.aws.gpu_quota import GpuQuota as GpuQuota
    from aistack.aws.gpu_quota import GpuQuotaArgs as GpuQuotaArgs
    from aistack.aws.gpu_quota import HasQuotaNeeds as HasQuotaNeeds
    from aistack.aws.gpu_quota import QuotaNeed as QuotaNeed
    from aistack.aws.inference.args import InferenceTierArgs as InferenceTierArgs
    from aistack.aws.inference.component import InferenceTier as InferenceTier
    from aistack.aws.karpenter_gpu_pool import KarpenterGpuPool as KarpenterGpuPool
    from aistack.aws.karpenter_gpu_pool import KarpenterGpuPoolArgs as KarpenterGpuPoolArgs
    from aistack.aws.network.args import NetworkArgs as NetworkArgs
    from aistack.aws.network.component import Network as Network
    from aistack.aws.notebook import Notebook as Notebook
    from aistack.aws.notebook import NotebookArgs as NotebookArgs
    from aistack.aws.training_pool import TrainingPool as TrainingPool
    from aistack.aws.training_pool import TrainingPoolArgs as TrainingPoolArgs
    from aistack.aws.workload_identity.args import WorkloadIdentityArgs as WorkloadIdentityArgs
    from aistack.aws.workload_identity.component import WorkloadIdentity as WorkloadIdentity
    from aistack.contracts.capacity import CapacityNeed as CapacityNeed
    from aistack.contracts.capacity import HasCapacityNeeds as HasCapacityNeeds
    from aistack.contracts.images import image_by_digest as image_by_digest


__getattr__, __dir__ = lazy_exports("aistack.aws", _EXPORTS, globals())

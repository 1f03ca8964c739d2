"""aistack's Kubernetes components, for any conformant cluster (EKS, GKE, kind, ...).
Imported lazily, like `aistack.aws` and `aistack.gcp`: `from aistack import k8s` costs
nothing until a component is used, and an AWS or GCP stack never loads pulumi_kubernetes.

    from aistack import k8s
    team = k8s.TeamNamespace("ml-train", {"team": "ml", "gpus": 8, "governance": {...}})

The cloud halves (GPU node pools, the IAM roles and Google service accounts the
ServiceAccounts link to) live in `aistack.aws` and `aistack.gcp`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aistack._lazy import lazy_exports
from aistack._registry import exports

# Each component and its Args come from the registry (aistack/_registry.py); below, the
# package's other public names.
_EXPORTS = {
    **exports("k8s"),
    "WorkloadAccount": "aistack.k8s.team_namespace",
    "EgressAllow": "aistack.k8s.team_namespace",
    "QueueFlavor": "aistack.k8s.training_queue",
    # Governance as this stack's labels and annotations, for a team's own objects beside
    # the components' (stacks/kubernetes-operators labels its operators so).
    "labels_for": "aistack.k8s._base",
    "annotations_for": "aistack.k8s._base",
}

__all__ = sorted(_EXPORTS)

# What a type checker sees (`X as X`: an explicit re-export, since __all__ is computed);
# at run time the lazy exports below. tests/test_typed_api.py keeps the two equal.
if TYPE_CHECKING:
    from aistack.k8s._base import annotations_for as annotations_for
    from aistack.k8s._base import labels_for as labels_for
    from aistack.k8s._inference_args import InferenceServiceArgs as InferenceServiceArgs
    from aistack.k8s.gpu_monitoring import GpuMonitoring as GpuMonitoring
    from aistack.k8s.gpu_monitoring import GpuMonitoringArgs as GpuMonitoringArgs
    from aistack.k8s.image_policy import ImagePolicy as ImagePolicy
    from aistack.k8s.image_policy import ImagePolicyArgs as ImagePolicyArgs
    from aistack.k8s.inference_service.component import InferenceService as InferenceService
    from aistack.k8s.team_namespace import EgressAllow as EgressAllow
    from aistack.k8s.team_namespace import TeamNamespace as TeamNamespace
    from aistack.k8s.team_namespace import TeamNamespaceArgs as TeamNamespaceArgs
    from aistack.k8s.team_namespace import WorkloadAccount as WorkloadAccount
    from aistack.k8s.training_job_template import TrainingJobTemplate as TrainingJobTemplate
    from aistack.k8s.training_job_template import TrainingJobTemplateArgs as TrainingJobTemplateArgs
    from aistack.k8s.training_queue import QueueFlavor as QueueFlavor
    from aistack.k8s.training_queue import TrainingQueue as TrainingQueue
    from aistack.k8s.training_queue import TrainingQueueArgs as TrainingQueueArgs


__getattr__, __dir__ = lazy_exports("aistack.k8s", _EXPORTS, globals())

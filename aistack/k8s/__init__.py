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
from aistack._registry import exports

# Each component and its Args come from the registry (aistack/_registry.py); below, the
# package's other public names.
_EXPORTS = {
    **exports("k8s"),
    "WorkloadAccount": "aistack.k8s.team_namespace",
    "EgressAllow": "aistack.k8s.team_namespace",
    "QueueFlavor": "aistack.k8s.training_queue",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("aistack.k8s", _EXPORTS, globals())

"""What every Kubernetes component shares: labels and annotations, child options, versions.

The label rules and keys live in `aistack.contracts.k8s`, where the readers find them.
Governance goes in twice: as labels cut to those rules, which budgets, queues and
policies select on, and as annotations holding the exact text (an owner's e-mail, a legal
basis, an approver, the third-party services), which no selector needs.
"""

from __future__ import annotations

import json

import pulumi
import pulumi_kubernetes

from aistack._options import child_opts, stateful_opts
from aistack.config import Governance
from aistack.contracts.k8s import (
    LABEL_PREFIX,
    MANAGED_LABEL,
    NEWEST_KUBERNETES,
    OLDEST_KUBERNETES,
    THIRD_PARTY_ANNOTATION,
    label_key,
    label_value,
    stack_label,
)
from aistack.contracts.k8s import labels_for as contract_labels

_ = pulumi_kubernetes.core.v1.Namespace  # the SDK loads its modules lazily: load it here

__all__ = [
    "LABEL_PREFIX",
    "MANAGED_LABEL",
    "OLDEST_KUBERNETES",
    "NEWEST_KUBERNETES",
    "annotations_for",
    "child_opts",
    "label_key",
    "label_value",
    "labels_for",
    "stack_id",
    "stateful_opts",
]


def stack_id() -> str:
    """This stack's identity in labels (`aistack.dev/stack`)."""
    return stack_label(pulumi.get_project(), pulumi.get_stack())


def labels_for(governance: Governance, workload: str | None = None, **extra: str) -> dict[str, str]:
    """Governance as this stack's Kubernetes labels (`aistack.contracts.k8s.labels_for`)."""
    return contract_labels(governance, stack_id(), workload, **extra)


def annotations_for(governance: Governance, **extra: str) -> dict[str, str]:
    """The free text labels cannot hold, exactly: owner, cost centre, allowed regions and
    the third-party services that see the data (G6), plus `extra` (`legal-basis`,
    `approved-by`, ...) under `aistack.dev/`."""
    annotations = {
        "aistack.dev/owner": governance.owner,
        "aistack.dev/cost-center": governance.cost_center,
        "aistack.dev/allowed-regions": " ".join(governance.allowed_regions),
        THIRD_PARTY_ANNOTATION: json.dumps(
            [service.model_dump(by_alias=True) for service in governance.third_party_services]
        ),
    }
    annotations.update({LABEL_PREFIX + key: value for key, value in extra.items()})
    return annotations

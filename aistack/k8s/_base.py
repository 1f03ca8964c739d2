"""What every Kubernetes component shares: labels and annotations, child options, versions.

Kubernetes labels are selectors, not free text: a key is an optional DNS-subdomain prefix
(at most 253 characters) and a name of at most 63 of `[A-Za-z0-9._-]`, starting and ending
alphanumeric; a value the same, at most 63 (apimachinery IsQualifiedName,
IsValidLabelValue; the simulated API server refuses anything else, as the real one does).
So governance goes in twice: as labels cut to those rules, which budgets, queues and
policies select on, and as annotations holding the exact text (an owner's e-mail, a legal
basis, an approver, the third-party services), which no selector needs.
"""

from __future__ import annotations

import json
import re

import pulumi
import pulumi_kubernetes

from aistack._options import child_opts, stateful_opts
from aistack.config import ALLOWED_REGIONS_TAG, STACK_TAG, WORKLOAD_TAG, Governance
from aistack.k8s._versions import NEWEST_KUBERNETES, OLDEST_KUBERNETES

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

#: Every aistack label and annotation key lives under this prefix (a DNS subdomain the
#: project owns: Kubernetes reserves kubernetes.io and k8s.io for itself).
LABEL_PREFIX = "aistack.dev/"
#: On every object an aistack component creates; admission policies bind to it.
MANAGED_LABEL = "aistack.dev/managed"


_NOT_LABEL_CHAR = re.compile(r"[^A-Za-z0-9._-]")
_EDGE = re.compile(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$")


def label_key(tag: str) -> str:
    """`aistack:cost-center` -> `aistack.dev/cost-center`."""
    name = tag.removeprefix("aistack:")
    return LABEL_PREFIX + label_value(name)


def label_value(text: str) -> str:
    """`text` as a valid label value: other characters become `-`, at most 63, alphanumeric
    at both ends (an empty value is valid)."""
    value = _NOT_LABEL_CHAR.sub("-", text.replace(" ", "_"))[:63]
    return _EDGE.sub("", value)


def stack_id() -> str:
    """This stack's identity in labels (`aistack.dev/stack`)."""
    return label_value(f"{pulumi.get_project()}-{pulumi.get_stack()}")


def labels_for(governance: Governance, workload: str | None = None, **extra: str) -> dict[str, str]:
    """Governance as Kubernetes labels, plus `aistack.dev/managed` and `extra` (keys under
    `aistack.dev/`). The allowed regions, joined by `_`, continue in
    `aistack.dev/allowed-regions-2`, `-3`, ... when they do not fit 63 characters."""
    tags = {
        STACK_TAG: stack_id(),
        "aistack:owner": governance.owner,
        "aistack:cost-center": governance.cost_center,
        "aistack:environment": governance.environment,
        "aistack:data-classification": governance.data_classification,
    }
    if workload:
        tags[WORKLOAD_TAG] = workload
    labels = {label_key(key): label_value(value) for key, value in tags.items()}
    chunks: list[list[str]] = [[]]
    for region in governance.allowed_regions:
        if chunks[-1] and len("_".join([*chunks[-1], region])) > 63:
            chunks.append([])
        chunks[-1].append(region)
    key = label_key(ALLOWED_REGIONS_TAG)
    for index, chunk in enumerate(chunks):
        labels[key if index == 0 else f"{key}-{index + 1}"] = "_".join(chunk)
    labels[MANAGED_LABEL] = "true"
    labels.update({LABEL_PREFIX + key: label_value(value) for key, value in extra.items()})
    return labels


def annotations_for(governance: Governance, **extra: str) -> dict[str, str]:
    """The free text labels cannot hold, exactly: owner, cost centre, allowed regions and
    the third-party services that see the data (G6), plus `extra` (`legal-basis`,
    `approved-by`, ...) under `aistack.dev/`."""
    annotations = {
        "aistack.dev/owner": governance.owner,
        "aistack.dev/cost-center": governance.cost_center,
        "aistack.dev/allowed-regions": " ".join(governance.allowed_regions),
        "aistack.dev/third-party-services": json.dumps(
            [service.model_dump(by_alias=True) for service in governance.third_party_services]
        ),
    }
    annotations.update({LABEL_PREFIX + key: value for key, value in extra.items()})
    return annotations

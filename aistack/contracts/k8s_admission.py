"""Which namespaces k8s.ImagePolicy's admission bindings select: written by the component
(aistack.k8s.image_policy) and read by the rules (aistack.queries.k8s_admission_policies),
so a rule can judge a stack against the policy another stack installs.

The bindings select, by default, every namespace labelled `aistack.dev/managed: "true"`
(every namespace an aistack component or stack creates), never a Kubernetes system
namespace, never one named in `excludeNamespaces`, and never one labelled
`aistack.dev/image-policy: exempt`. The exemption is a namespace's own declaration,
made where the namespace is created, so it holds whichever stack installs the policy:
stacks/kubernetes-operators sets it on every namespace whose Helm chart installs its
images by tag (Kueue, JobSet, KEDA, kube-prometheus-stack, the DCGM exporter). Without it
the digest policy refuses those operators' pods, and a Kueue without pods refuses every
Job and Deployment in the cluster through its `failurePolicy: Fail` webhooks (kueue
v0.19.2 charts/kueue/templates/webhook/manifests.yaml). The annotation
`aistack.dev/image-policy-exempt-because` says why, and AIS-E1-09 checks that no denying
binding selects a namespace that holds a Helm release with tag-only images.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aistack.contracts.k8s import MANAGED_LABEL

__all__ = [
    "DEFAULT_NAMESPACE_LABELS",
    "IMAGE_POLICY_EXEMPT",
    "IMAGE_POLICY_EXEMPT_BECAUSE",
    "IMAGE_POLICY_LABEL",
    "SYSTEM_NAMESPACES",
    "image_policy_exemption",
    "image_policy_selector",
]

#: The namespace label whose value `exempt` takes a namespace out of every k8s.ImagePolicy
#: binding (a `NotIn` expression: only that value exempts, a missing label does not).
IMAGE_POLICY_LABEL = "aistack.dev/image-policy"
IMAGE_POLICY_EXEMPT = "exempt"
#: The annotation beside it: what runs there that is not pinned by digest, and where
#: that is decided (a chart's values file, say).
IMAGE_POLICY_EXEMPT_BECAUSE = "aistack.dev/image-policy-exempt-because"

#: Namespaces Kubernetes owns: never selected, even if someone labels them managed.
SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease")
#: The labels k8s.ImagePolicy's bindings select by default (`namespaceLabels`).
DEFAULT_NAMESPACE_LABELS: Mapping[str, str] = {MANAGED_LABEL: "true"}


def image_policy_selector(
    namespace_labels: Mapping[str, str] | None = None, exclude_namespaces: Iterable[str] = ()
) -> dict[str, Any]:
    """The bindings' `matchResources.namespaceSelector` (a metav1.LabelSelector: its
    matchLabels and matchExpressions are ANDed). `kubernetes.io/metadata.name` is set on
    every namespace by the API server (Kubernetes docs, "Well-Known Labels, Annotations
    and Taints"), so the system and excluded namespaces are left out by name."""
    labels = DEFAULT_NAMESPACE_LABELS if namespace_labels is None else namespace_labels
    return {
        "matchLabels": dict(labels),
        "matchExpressions": [
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "NotIn",
                "values": sorted({*SYSTEM_NAMESPACES, *exclude_namespaces}),
            },
            {"key": IMAGE_POLICY_LABEL, "operator": "NotIn", "values": [IMAGE_POLICY_EXEMPT]},
        ],
    }


def image_policy_exemption(because: str) -> tuple[dict[str, str], dict[str, str]]:
    """(labels, annotations) that exempt a namespace from k8s.ImagePolicy, with the reason."""
    if not because.strip():
        raise ValueError("an image-policy exemption needs its reason")
    return (
        {IMAGE_POLICY_LABEL: IMAGE_POLICY_EXEMPT},
        {IMAGE_POLICY_EXEMPT_BECAUSE: because},
    )

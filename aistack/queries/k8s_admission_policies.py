"""Admission policies and what they select, over a stack's graph: the bindings of the policies
that enforce a checklist item (k8s.ImagePolicy's, labelled `aistack.dev/enforces`), the
labels of the namespaces they judge, and the Helm releases whose images they would judge.

A Helm release is one resource in the graph (`kubernetes:helm.sh/v3:Release`): its chart's
templates and default values are Helm's, fetched at deploy time, and not in the graph. What
the graph shows of its images is the `values` the program passes; `release_images` reads
the image references and image blocks there (`repository` with `tag`, `digest` or `sha`),
and a release counts as pinned only when its values name images and pin every one of them
by digest. A chart installed from its defaults counts as tag-only: every chart aistack
installs defaults to tags (Kueue, JobSet, KEDA, kube-prometheus-stack, the DCGM exporter,
the device plugin, Karpenter: stacks/kubernetes-operators names the values lines).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from aistack.contracts.k8s import ENFORCES_LABEL
from aistack.contracts.k8s_admission import image_policy_selector
from aistack.engine.graph import Resource, StackGraph
from aistack.queries import revealed
from aistack.queries.k8s import NAMESPACE, manifest, metadata_of, selector_matches

__all__ = [
    "BINDING",
    "POLICY",
    "RELEASE",
    "Binding",
    "HelmRelease",
    "binding_selects",
    "default_image_policy_selector",
    "enforcing_bindings",
    "helm_releases",
    "namespace_labels",
    "release_images",
]

POLICY = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
RELEASE = "kubernetes:helm.sh/v3:Release"

#: `<64 hex>` or `sha256:<64 hex>`: how charts take a digest (kube-prometheus-stack's `sha`
#: is the hex alone, its templates add `@sha256:`; others take `sha256:...`).
_DIGEST = re.compile(r"^(sha256:)?[0-9a-f]{64}$")
_PINNED_REFERENCE = re.compile(r"^[^@\s]+@sha256:[0-9a-f]{64}$")
_DIGEST_SUFFIX = re.compile(r"@sha256:[0-9a-f]{64}$")
#: Keys under which charts keep an image block or reference.
_IMAGE_KEYS = frozenset({"image", "images"})


@dataclass(frozen=True)
class Binding:
    """A ValidatingAdmissionPolicyBinding of a policy that enforces a checklist item."""

    resource: Resource
    spec: dict[str, Any]

    @property
    def name(self) -> str:
        return str(metadata_of(self.resource).get("name") or self.resource.name)

    @property
    def denies(self) -> bool:
        return "Deny" in (self.spec.get("validationActions") or [])

    @property
    def namespace_selector(self) -> dict[str, Any] | None:
        return (self.spec.get("matchResources") or {}).get("namespaceSelector")


def enforcing_bindings(graph: StackGraph, checklist_id: str) -> list[Binding]:
    """The bindings in the graph of every policy labelled as enforcing `checklist_id`
    (`aistack.dev/enforces`, the checklist ids joined by `_`: k8s.ImagePolicy's `E1_S7`)."""
    policies = {
        metadata_of(p).get("name")
        for p in graph.of_type(POLICY)
        if checklist_id
        in str((metadata_of(p).get("labels") or {}).get(ENFORCES_LABEL, "")).split("_")
    }
    found = []
    for binding in graph.of_type(BINDING):
        spec = manifest(binding).get("spec") or {}
        if spec.get("policyName") in policies:
            found.append(Binding(binding, spec))
    return found


def default_image_policy_selector() -> dict[str, Any]:
    """What k8s.ImagePolicy's bindings select with its default arguments: the policy a
    stack that runs `k8s.ImagePolicy("image-policy", {"governance": ...})` puts on the
    cluster (stacks/kubernetes, stacks/kubernetes-eks and stacks/kubernetes-gke do)."""
    return image_policy_selector()


def binding_selects(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """Whether a binding's namespaceSelector selects a namespace with `labels`. A binding
    without one judges every namespace (ValidatingAdmissionPolicyBinding v1
    `matchResources.namespaceSelector`: "Default to the empty LabelSelector, which matches
    everything")."""
    return True if selector is None else selector_matches(selector, labels)


def namespace_labels(graph: StackGraph, name: str) -> tuple[dict[str, str], bool]:
    """The labels a namespace has on the cluster as far as the graph tells, with the
    `kubernetes.io/metadata.name` the API server adds, and whether the graph creates it
    (when not, only its name is known)."""
    for namespace in graph.of_type(NAMESPACE):
        meta = manifest(namespace)["metadata"]
        if meta.get("name") == name:
            return {**(meta.get("labels") or {}), "kubernetes.io/metadata.name": name}, True
    return {"kubernetes.io/metadata.name": name}, False


@dataclass(frozen=True)
class HelmRelease:
    """One Helm release of the graph: where it installs, and the images its values name."""

    resource: Resource
    name: str
    chart: str
    version: str
    namespace: str
    pinned: tuple[str, ...] = field(default=())
    unpinned: tuple[str, ...] = field(default=())

    @property
    def images_pinned(self) -> bool:
        """Whether its values pin every image they name by digest, and name at least one.
        An image the chart has but the values do not override is not in the graph: a
        release installed from its chart's defaults is not pinned."""
        return bool(self.pinned) and not self.unpinned


def helm_releases(graph: StackGraph) -> list[HelmRelease]:
    """Every `kubernetes.helm.v3.Release` in the graph."""
    found = []
    for release in graph.of_type(RELEASE):
        inputs, outputs = release.inputs, release.outputs
        namespace = str(outputs.get("namespace") or revealed(inputs.get("namespace")) or "default")
        pinned, unpinned = release_images(revealed(inputs.get("values")) or {})
        found.append(
            HelmRelease(
                resource=release,
                name=str(outputs.get("name") or inputs.get("name") or release.name),
                chart=str(inputs.get("chart") or ""),
                version=str(inputs.get("version") or ""),
                namespace=namespace,
                pinned=tuple(pinned),
                unpinned=tuple(unpinned),
            )
        )
    return found


def release_images(values: Any) -> tuple[list[str], list[str]]:
    """(pinned, unpinned): the image references a release's values name, by where they are
    (`image`, `controller.image`...). An image block is a mapping with `repository`
    (and `registry`, `tag`, `digest` or `sha`), or a string under an image key; pinned
    means a sha256 digest."""
    pinned: list[str] = []
    unpinned: list[str] = []
    for path, image in _images(values, ""):
        (pinned if _is_pinned(image) else unpinned).append(path)
    return pinned, unpinned


def _images(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        if "repository" in value and isinstance(value.get("repository"), str):
            yield path or "(values)", value
            return
        for key, child in value.items():
            child_path = f"{path}.{key}" if path else str(key)
            if key in _IMAGE_KEYS and isinstance(child, str):
                yield child_path, child
            else:
                yield from _images(child, child_path)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _images(child, f"{path}[{index}]")
    elif isinstance(value, str) and _PINNED_REFERENCE.match(value):
        yield path, value


def _is_pinned(image: Any) -> bool:
    if isinstance(image, str):
        return bool(_PINNED_REFERENCE.match(image))
    digest = str(image.get("digest") or image.get("sha") or "")
    # A digest in the tag (`v1.2.3@sha256:...`) or in the repository reference itself.
    ends_in_digest = (str(image.get("tag") or ""), str(image.get("repository") or ""))
    return bool(_DIGEST.match(digest)) or any(_DIGEST_SUFFIX.search(s) for s in ends_in_digest)

"""AIS-E1-07: where a stack installs an image-digest admission policy (k8s.ImagePolicy),
it denies, and every namespace the stack manages is selected by one of its bindings.

What can be judged offline is the stack's own graph: a cluster-wide policy installed by
another stack (a platform stack, say) is not in it, so a stack without any such policy is
not judged here. Which policy judges digests is read from its `aistack.dev/enforces`
label (k8s.ImagePolicy sets `E1_S7`); the CEL itself is proven in
tests/k8s/test_image_policy.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from aistack.contracts.k8s import MANAGED_LABEL as MANAGED
from aistack.contracts.k8s_admission import (
    IMAGE_POLICY_EXEMPT,
    IMAGE_POLICY_EXEMPT_BECAUSE,
    IMAGE_POLICY_LABEL,
)
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import NAMESPACE, manifest, metadata_of
from aistack.queries.k8s_admission_policies import binding_selects, enforcing_bindings


def selects(spec: dict[str, Any], namespace: Resource) -> bool:
    """Whether a binding's namespaceSelector selects a namespace of the graph (the API
    server labels each one with its name)."""
    meta = manifest(namespace)["metadata"]
    labels = {**(meta.get("labels") or {}), "kubernetes.io/metadata.name": meta.get("name")}
    selector = (spec.get("matchResources") or {}).get("namespaceSelector")
    return binding_selects(selector, labels)


@rule(
    id="AIS-E1-07",
    checklist=["E1"],
    info="The stack's image-digest admission policy denies, in every namespace it manages.",
    why="A policy that only warns admits the tagged image anyway, and a namespace its "
    "binding does not select runs whatever a tag points to today: the digests the stack "
    "pins are then a convention, not a control.",
    fix="Use k8s.ImagePolicy with mode 'deny' (the default), and keep the stack's "
    "namespaces labelled aistack.dev/managed=true and out of excludeNamespaces; a namespace "
    "that must run tagged images (an operator's chart) declares the exemption with its "
    f"reason ({IMAGE_POLICY_LABEL}={IMAGE_POLICY_EXEMPT} and {IMAGE_POLICY_EXEMPT_BECAUSE}).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    bindings = enforcing_bindings(graph, "E1")
    if not bindings:
        return
    for binding in bindings:
        if not binding.denies:
            yield fail(
                binding.resource,
                f"binding only {'/'.join(binding.spec.get('validationActions') or [])}s: "
                "images without a digest are still admitted.",
            )
    denying = [binding.spec for binding in bindings if binding.denies]
    for namespace in graph.of_type(NAMESPACE):
        labels = metadata_of(namespace).get("labels") or {}
        name = metadata_of(namespace).get("name")
        if labels.get(MANAGED) != "true":
            continue
        if labels.get(IMAGE_POLICY_LABEL) == IMAGE_POLICY_EXEMPT:
            # A declared exception: the namespace says why (aistack.contracts.k8s_admission).
            annotations = metadata_of(namespace).get("annotations") or {}
            because = str(annotations.get(IMAGE_POLICY_EXEMPT_BECAUSE) or "").strip()
            if because:
                yield ok(namespace, f"namespace {name!r} is exempt: {because}")
            else:
                yield fail(namespace, f"namespace {name!r} is exempt and says not why.")
            continue
        if any(selects(spec, namespace) for spec in denying):
            yield ok(namespace, f"namespace {name!r} refuses images without a digest.")
        else:
            yield fail(namespace, f"no denying image-policy binding selects namespace {name!r}.")

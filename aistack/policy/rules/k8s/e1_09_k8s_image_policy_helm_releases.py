"""AIS-E1-09: an image-digest admission policy never selects a namespace that holds a Helm
release whose images are not pinned by digest.

Why it is a deploy-breaking invariant, not a style point: the policy (k8s.ImagePolicy,
`Deny`, `failurePolicy: Fail`) refuses every new pod of such a release. Helm's `atomic`
install then times out and rolls back, and a running operator loses its pods at the next
node drain. With Kueue the whole cluster stops: its webhooks are `failurePolicy: Fail` and
cover every namespace but kube-system and its own (kueue v0.19.2
charts/kueue/templates/webhook/manifests.yaml, `mdeployment.kb.io`, `mjob.kb.io`), so a
Kueue without pods refuses every Deployment and Job.

What the rule sees, and what it cannot:

- the stack's own graph. The Helm releases, their namespaces and the namespaces' labels
  are judged where they are created: in stacks/kubernetes-operators they are all in one
  graph. The bindings it judges against are the digest-enforcing ones in the same graph
  (labelled `aistack.dev/enforces` E1, as k8s.ImagePolicy's are; only the denying ones
  refuse pods). When the graph holds none, the policy is installed by another stack
  (stacks/kubernetes, -eks and -gke each create a k8s.ImagePolicy with its defaults), so
  the rule judges against what k8s.ImagePolicy selects by default
  (aistack.contracts.k8s_admission.image_policy_selector). A policy with other
  `namespaceLabels` or `excludeNamespaces` in another stack, or a third-party admission
  controller (Kyverno, Gatekeeper), is not in the graph and is not seen;
- a namespace the stack does not create (kube-system, say) is known by its name only:
  the system namespaces are never selected; another one is judged with no labels but its
  name, which no managed-label selector matches. Its real labels are the cluster's;
- a release's images as far as its `values` name them (aistack.queries.
  k8s_admission_policies.release_images). The chart's own defaults are fetched by Helm at
  deploy time and are not in the graph, so a release counts as pinned only when its
  values pin, by digest, every image they name and name at least one; an image of the
  chart that the values leave at its default is not seen. A chart that runs no pods
  (prometheus-operator-crds) counts as tag-only too: keep it in its operator's namespace.
"""

from __future__ import annotations

from collections.abc import Iterator

from aistack.contracts.k8s_admission import IMAGE_POLICY_EXEMPT, IMAGE_POLICY_LABEL
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s_admission_policies import (
    binding_selects,
    default_image_policy_selector,
    enforcing_bindings,
    helm_releases,
    namespace_labels,
)


@rule(
    id="AIS-E1-09",
    checklist=["E1"],
    info="No image-digest admission policy selects a namespace holding a Helm release "
    "whose images are not pinned by digest.",
    why="The policy refuses every pod of that release: the install rolls back, or a "
    "running operator never gets its pods back after a node drain. For Kueue, whose "
    "webhooks fail closed, that refuses every Job and Deployment in the cluster.",
    fix="Label the release's namespace aistack.dev/image-policy=exempt with the reason in "
    "aistack.dev/image-policy-exempt-because (stacks/kubernetes-operators does, "
    "aistack.contracts.k8s_admission.image_policy_exemption), or pin every image of the "
    "chart by digest in its values.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    releases = helm_releases(graph)
    if not releases:
        return
    bindings = enforcing_bindings(graph, "E1")
    if bindings:
        selectors = [(f"binding {b.name!r}", b.namespace_selector) for b in bindings if b.denies]
    else:
        selectors = [
            (
                "k8s.ImagePolicy's default binding (installed by another stack)",
                default_image_policy_selector(),
            )
        ]
    for release in releases:
        labels, created_here = namespace_labels(graph, release.namespace)
        where = f"namespace {release.namespace!r}"
        if release.images_pinned:
            yield ok(
                release.resource,
                f"Helm release {release.name!r} pins by digest every image its values "
                f"name ({', '.join(release.pinned)}); the chart's other defaults cannot "
                "be seen offline.",
            )
            continue
        selecting = [name for name, selector in selectors if binding_selects(selector, labels)]
        images = (
            f"its values name {', '.join(release.unpinned)} without a digest"
            if release.unpinned
            else f"chart {release.chart} {release.version} installs its default images, by tag"
        )
        if selecting:
            yield fail(
                release.resource,
                f"Helm release {release.name!r} runs in {where}, which {selecting[0]} "
                f"selects, and {images}: the digest policy would refuse its pods.",
            )
        else:
            if labels.get(IMAGE_POLICY_LABEL) == IMAGE_POLICY_EXEMPT:
                why = f" (it is labelled {IMAGE_POLICY_LABEL}={IMAGE_POLICY_EXEMPT})"
            elif not created_here:
                why = " (not created in this stack: judged by its name)"
            else:
                why = ""
            yield ok(
                release.resource,
                f"Helm release {release.name!r} installs images by tag into {where}, "
                f"which no image-digest binding selects{why}.",
            )

"""`k8s.ImagePolicy`: admission policies that refuse, in the namespaces aistack manages,
images without a digest (E1) and serving pods without an explicit model version (S7).

What it creates, and why (docs/components/k8s/image-policy.md says more): per shape of pod
spec a `ValidatingAdmissionPolicy` (admissionregistration.k8s.io/v1, GA in Kubernetes 1.30,
aistack's oldest) and a `ValidatingAdmissionPolicyBinding` that puts it in force:

- `pods`: Pods, and the `pods/ephemeralcontainers` subresource `kubectl debug` writes to;
- `workloads`: the pod template of Deployments, StatefulSets, DaemonSets, ReplicaSets and
  Jobs (`spec.template.spec`);
- `cronjobs`: CronJobs (`spec.jobTemplate.spec.template.spec`);
- `jobsets`: JobSets (`jobset.x-k8s.io`, a CRD: a policy matches custom resources like any
  other; the API server only skips their type checking), each replicated Job's template.

One shape per policy because the API server type-checks every expression against every kind
the policy matches and reports a missing field as a warning in `status.typeChecking`
(Kubernetes docs, "Validating Admission Policy" > "Type checking"): `object.spec.template`
does not exist on a Pod. Split, every expression is well-typed for every kind it meets.

Each policy has two validations. E1: every container, init container and ephemeral container
image ends in `@sha256:<64 hex>`. S7, only in namespaces labelled `aistack.dev/tier: serve`
(k8s.TeamNamespace sets it on serving namespaces; the policy reads it from
`namespaceObject`): the pod, or template, carries `aistack.dev/model-name` and an
`aistack.dev/model-version` that is neither empty nor a moving label (`latest`, ...):
the contract k8s.InferenceService keeps.

What is deliberately NOT refused:

- namespaces aistack does not manage: the bindings select `aistack.dev/managed: "true"`
  and never the Kubernetes system namespaces, where add-ons run images their installers
  chose;
- namespaces that declare themselves exempt (`aistack.dev/image-policy: exempt`, with the
  reason in `aistack.dev/image-policy-exempt-because`; aistack.contracts.k8s_admission):
  stacks/kubernetes-operators labels so each operator namespace whose Helm chart installs
  images by tag. Were they selected, the operators' pods would be refused, and Kueue's
  `failurePolicy: Fail` webhooks, left without pods, would refuse every Job and
  Deployment in the cluster. The declaration sits on the namespace, so it holds whichever
  stack installs the policy; AIS-E1-09 fails a binding that selects a namespace holding a
  Helm release with tag-only images;
- updates that change no image, nor the model labels: on UPDATE an image, or model
  labels, already in `oldObject` are admitted again, so adding a label to, or a
  controller removing its finalizer from, a pod created before the policy existed still
  works (a refused finalizer removal would leave the pod stuck terminating); only new or
  changed images and model labels are judged;
- status and scale writes: controllers write `pods/status`, `deployments/status` and
  `deployments/scale`, subresources a rule matches only when it names them
  (`NamedRuleWithOperations.resources`: "'pods' means pods. 'pods/log' means the log
  subresource of pods", Kubernetes API reference, ValidatingAdmissionPolicy v1);
- mirror pods: the kubelet's API copy of a static pod (annotation
  `kubernetes.io/config.mirror`, created by a node). Refusing it would not stop the static
  pod, which the kubelet runs from its manifest file, only hide it from the API.

Sources: Kubernetes docs, "Validating Admission Policy"
(kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/: the CEL
variables `object`, `oldObject`, `request`, `namespaceObject`; `variables`,
`matchConditions`, `messageExpression`, validation actions, type checking) and the API
reference (kubernetes.io/docs/reference/kubernetes-api/policy-resources/
validating-admission-policy-v1/ and ...-binding-v1/: `matchConstraints`,
`matchResources.namespaceSelector`, `validationActions`, `failurePolicy`).

Enforcement is `Deny` with `failurePolicy: Fail` (an expression that errors refuses the
request rather than letting it through). `mode: warn` ([Warn, Audit]) or `audit` ([Audit])
is for a rollout: see what would be refused before it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field, field_validator

from aistack.config import AistackModel, Governance
from aistack.contracts.k8s import (
    ENFORCES_LABEL,
    MODEL_NAME_LABEL,
    MODEL_VERSION_LABEL,
    TIER_LABEL,
)
from aistack.contracts.k8s_admission import SYSTEM_NAMESPACES, image_policy_selector
from aistack.contracts.model_versions import moving_label_regex
from aistack.errors import Problems
from aistack.k8s._base import MANAGED_LABEL, annotations_for, child_opts, labels_for

__all__ = [
    "DIGEST_REGEX",
    "ImagePolicy",
    "ImagePolicyArgs",
    "MODEL_NAME_LABEL",
    "MODEL_VERSION_LABEL",
    "ENFORCES_LABEL",
    "SHAPES",
    "SYSTEM_NAMESPACES",
    "TIER_LABEL",
    "VALIDATION_ACTIONS",
]

#: A reference ending in a sha256 digest, one `@`: `repo[:tag]@sha256:<64 lowercase hex>`.
#: Container runtimes pull by the digest and ignore a tag beside it (aistack.contracts.images). RE2
#: syntax, as CEL's `matches` reads it in the API server; Python's `re` reads it the same.
DIGEST_REGEX = "^[^@]+@sha256:[0-9a-f]{64}$"

Mode = Literal["deny", "warn", "audit"]
#: Kubernetes docs, "Validating Admission Policy" > "Validation actions": Deny refuses,
#: Warn returns an HTTP warning to the client, Audit records the failure in the audit
#: event; Deny and Warn may not be combined.
VALIDATION_ACTIONS: dict[str, list[str]] = {
    "deny": ["Deny"],
    "warn": ["Warn", "Audit"],
    "audit": ["Audit"],
}

_DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"


@dataclass(frozen=True)
class Shape:
    """Where one family of kinds keeps its pods, as CEL over `o` (`object` or
    `oldObject`): `specs(o)` is the list of its PodSpecs, `labels(o)` the list of the
    labels of its pod templates (an empty map where a template has none)."""

    role: str
    rules: tuple[tuple[str, tuple[str, ...]], ...]  # (API group, resources)
    specs: Callable[[str], str]
    labels: Callable[[str], str]
    conditions: tuple[tuple[str, str], ...] = ()


def _labels_of(template: str) -> str:
    """CEL: a PodTemplateSpec's labels; its metadata and labels are optional."""
    return (
        f"(has({template}.metadata) && has({template}.metadata.labels) ? "
        f"{template}.metadata.labels : {{}})"
    )


def _templated(role: str, path: str, rules: tuple[tuple[str, tuple[str, ...]], ...]) -> Shape:
    return Shape(
        role=role,
        rules=rules,
        specs=lambda o: f"[{o}.{path}.spec]",
        labels=lambda o: f"[{_labels_of(f'{o}.{path}')}]",
    )


#: Mirror pods: the kubelet's copies of static pods (annotation kubernetes.io/config.mirror,
#: Kubernetes docs "Create static Pods"), created by a node (group system:nodes, the
#: matchConditions example in the Kubernetes docs' "Validating Admission Policy"). Both must
#: hold, so a user cannot step around the policy with the annotation alone.
_NOT_A_MIRROR_POD = (
    "!(has(object.metadata.annotations) && "
    "'kubernetes.io/config.mirror' in object.metadata.annotations && "
    "has(request.userInfo.groups) && 'system:nodes' in request.userInfo.groups)"
)

#: jobset.x-k8s.io v1alpha2 (the CRD kept under aistack/scan/data/crds/jobset-v0.12.0):
#: spec.replicatedJobs and each Job template's spec are optional, a JobSpec's pod template
#: is required.
_REPLICATED = (
    "(has({o}.spec) && has({o}.spec.replicatedJobs) ? {o}.spec.replicatedJobs"
    ".filter(r, has(r.template.spec)).map(r, {each}) : [])"
)

SHAPES: tuple[Shape, ...] = (
    Shape(
        role="pods",
        # The ephemeralcontainers subresource takes the whole Pod (`kubectl debug` writes
        # it); pods/status and pods/binding are not matched.
        rules=(("", ("pods", "pods/ephemeralcontainers")),),
        specs=lambda o: f"[{o}.spec]",
        labels=lambda o: f"[has({o}.metadata.labels) ? {o}.metadata.labels : {{}}]",
        conditions=(("not-a-mirror-pod", _NOT_A_MIRROR_POD),),
    ),
    _templated(
        "workloads",
        "spec.template",
        (
            ("apps", ("deployments", "statefulsets", "daemonsets", "replicasets")),
            ("batch", ("jobs",)),
        ),
    ),
    _templated("cronjobs", "spec.jobTemplate.spec.template", (("batch", ("cronjobs",)),)),
    Shape(
        role="jobsets",
        rules=(("jobset.x-k8s.io", ("jobsets",)),),
        specs=lambda o: _REPLICATED.format(o=o, each="r.template.spec.template.spec"),
        labels=lambda o: _REPLICATED.format(o=o, each=_labels_of("r.template.spec.template")),
    ),
)


def _containers(spec: str) -> str:
    """Every container of a PodSpec: init, regular and ephemeral (the lists are optional
    but `containers`, which the API server requires)."""
    return (
        f"((has({spec}.initContainers) ? {spec}.initContainers : []) + {spec}.containers + "
        f"(has({spec}.ephemeralContainers) ? {spec}.ephemeralContainers : []))"
    )


def _model(labels: str) -> str:
    """CEL: [model name, model version] from a labels map, '' for a missing label."""
    return (
        f"[('{MODEL_NAME_LABEL}' in {labels} ? {labels}['{MODEL_NAME_LABEL}'] : ''), "
        f"('{MODEL_VERSION_LABEL}' in {labels} ? {labels}['{MODEL_VERSION_LABEL}'] : '')]"
    )


def policy_spec(shape: Shape) -> dict[str, Any]:
    """The ValidatingAdmissionPolicy spec for one shape (plain data: tests evaluate its
    CEL with a real CEL interpreter, tests/k8s/test_image_policy.py)."""
    image = "(has(c.image) ? c.image : '')"
    variables = [
        {"name": "specs", "expression": shape.specs("object")},
        {
            # Images the object already had: on UPDATE they are admitted again, so a change
            # that touches no image (labels, finalizers, replicas) is never refused.
            "name": "oldImages",
            "expression": (
                "request.operation == 'UPDATE' && oldObject != null ? "
                f"{shape.specs('oldObject')}.map(s, {_containers('s')}.map(c, {image})) : []"
            ),
        },
        {
            # Per pod spec, the containers whose image is new and not pinned by digest.
            "name": "unpinned",
            "expression": (
                f"variables.specs.map(s, {_containers('s')}.filter(c, "
                f"!{image}.matches('{DIGEST_REGEX}') && "
                f"!variables.oldImages.exists(l, {image} in l))"
                f".map(c, c.name + ' (' + {image} + ')'))"
            ),
        },
        {
            # Per pod template, [model name, model version] from its labels.
            "name": "models",
            "expression": f"{shape.labels('object')}.map(l, {_model('l')})",
        },
        {
            # The same on UPDATE from oldObject: a change that keeps them (a label added,
            # a finalizer removed from a pod created before the policy) is not refused.
            "name": "oldModels",
            "expression": (
                "request.operation == 'UPDATE' && oldObject != null ? "
                f"{shape.labels('oldObject')}.map(l, {_model('l')}) : []"
            ),
        },
        {
            # Templates without a model name, or without an explicit version of it.
            "name": "unversioned",
            "expression": (
                "variables.models.filter(m, m[0] == '' || m[1] == '' || "
                f"m[1].matches('{moving_label_regex()}'))"
            ),
        },
        {
            # S7 applies in serving namespaces only (k8s.TeamNamespace tier: serve).
            "name": "serving",
            "expression": (
                "namespaceObject != null && has(namespaceObject.metadata.labels) && "
                f"'{TIER_LABEL}' in namespaceObject.metadata.labels && "
                f"namespaceObject.metadata.labels['{TIER_LABEL}'] == 'serve'"
            ),
        },
    ]
    validations = [
        {
            "expression": "variables.unpinned.all(l, size(l) == 0)",
            "message": "every container image must be referenced by digest "
            "(repo@sha256:<64 hex>; checklist E1). Fix: pin it, e.g. with the digest "
            "`docker buildx imagetools inspect <image>` prints.",
            "messageExpression": (
                "object.kind + ': container ' + "
                "variables.unpinned.filter(l, size(l) > 0)[0][0] + "
                "' has no image digest (checklist E1). Fix: reference the image as "
                "repo@sha256:<64 hex>; `docker buildx imagetools inspect <image>` prints it.'"
            ),
        },
        {
            "expression": (
                "!variables.serving || variables.models == variables.oldModels || "
                "size(variables.unversioned) == 0"
            ),
            "message": (
                f"serving pods must carry the labels {MODEL_NAME_LABEL} and "
                f"{MODEL_VERSION_LABEL} with an explicit version, not latest, current, "
                "stable, head, newest or default (checklist S7). Fix: deploy with "
                f"k8s.InferenceService, or label the pod template "
                f"{MODEL_VERSION_LABEL}=<the immutable version, e.g. 1.4.0>."
            ),
            "messageExpression": (
                f"object.kind + ': a serving pod needs {MODEL_NAME_LABEL} and an explicit "
                f"{MODEL_VERSION_LABEL} (found \"' + variables.unversioned[0][0] + '\" and "
                "\"' + variables.unversioned[0][1] + '\"; latest, current, stable, head, "
                "newest and default are not versions: checklist S7). Fix: deploy with "
                "k8s.InferenceService, or label the pod template "
                f"{MODEL_VERSION_LABEL}=<the immutable version, e.g. 1.4.0>.'"
            ),
        },
    ]
    spec: dict[str, Any] = {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {
                    "apiGroups": [group],
                    "apiVersions": ["*"],
                    "resources": list(resources),
                    "operations": ["CREATE", "UPDATE"],
                }
                for group, resources in shape.rules
            ]
        },
        "variables": variables,
        "validations": validations,
    }
    if shape.conditions:
        spec["matchConditions"] = [
            {"name": name, "expression": expression} for name, expression in shape.conditions
        ]
    return spec


class ImagePolicyArgs(AistackModel):
    governance: Governance
    mode: Mode = Field(
        "deny",
        description="'deny' (default): refuse what breaks the policy (validationActions "
        "[Deny]). 'warn' ([Warn, Audit]) admits it with a warning to the client and an "
        "audit record, 'audit' ([Audit]) only records it: for a rollout, to see what "
        "would be refused before it is. AIS-E1-07 fails until it is 'deny'.",
    )
    namespace_labels: dict[str, str] = Field(
        default_factory=lambda: {MANAGED_LABEL: "true"},
        min_length=1,
        description="The labels of the namespaces the policy is in force in. Default "
        "aistack.dev/managed=true: every namespace an aistack component creates.",
    )
    exclude_namespaces: tuple[str, ...] = Field(
        (),
        description="Namespaces left out although they match namespaceLabels, each a "
        "decision (a namespace another tool creates, whose labels you do not control). "
        "The Kubernetes system namespaces, and namespaces labelled "
        "aistack.dev/image-policy=exempt (stacks/kubernetes-operators labels so each "
        "operator namespace whose chart installs images by tag), are always left out.",
    )
    jobsets: bool = Field(
        True,
        description="Also judge JobSets (jobset.x-k8s.io). Harmless on a cluster without "
        "the JobSet CRD: the rule then matches nothing. Their pods are judged either way.",
    )

    @field_validator("exclude_namespaces")
    @classmethod
    def _are_namespaces(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        bad = [n for n in names if not re.fullmatch(_DNS_LABEL, n)]
        if bad:
            raise ValueError(
                f"{bad} are not namespace names. Fix: DNS-1123 labels, e.g. 'kueue-system'."
            )
        return names


class ImagePolicy(pulumi.ComponentResource):
    """Admission policies: images by digest (E1) and explicit model versions on serving
    pods (S7) in the namespaces aistack manages."""

    args: ImagePolicyArgs
    policies: dict[str, k8s.admissionregistration.v1.ValidatingAdmissionPolicy]
    bindings: dict[str, k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding]

    def __init__(
        self,
        name: str,
        args: ImagePolicyArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        def checks(args: ImagePolicyArgs) -> None:
            _check(name, args)

        args = ImagePolicyArgs.validate_with(args, checks, where=name)[0]
        super().__init__("aistack:index:K8sImagePolicy", name, None, opts)
        self.args = args
        governance = args.governance
        labels = labels_for(governance, workload="image-policy")
        selector = namespace_selector(args)
        self.policies, self.bindings = {}, {}
        for shape in SHAPES:
            if shape.role == "jobsets" and not args.jobsets:
                continue
            # Cluster-scoped objects: the name must be unique on the cluster, and it is
            # what a refused client reads ("ValidatingAdmissionPolicy '<name>' with
            # binding '<name>' denied request: ...").
            object_name = f"{name}-{shape.role}"
            policy = k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
                f"{name}-{shape.role}",
                metadata={
                    "name": object_name,
                    "labels": {**labels, ENFORCES_LABEL: "E1_S7"},
                    "annotations": annotations_for(
                        governance, checklist="E1 S7", judges=shape.role
                    ),
                },
                spec=_untyped(policy_spec(shape)),
                opts=child_opts(self),
            )
            self.policies[shape.role] = policy
            self.bindings[shape.role] = (
                k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
                    f"{name}-{shape.role}-binding",
                    metadata={"name": object_name, "labels": labels},
                    spec=_untyped(
                        {
                            # The literal name, not the policy's Output: known in a preview
                            # and to policy packs; depends_on orders the two.
                            "policyName": object_name,
                            "validationActions": VALIDATION_ACTIONS[args.mode],
                            "matchResources": {"namespaceSelector": selector},
                        }
                    ),
                    opts=child_opts(self, depends_on=[policy]),
                )
            )
        self.policy_names = {
            role: policy.metadata.apply(lambda m: str(m.name))
            for role, policy in self.policies.items()
        }
        self.register_outputs({"policy_names": self.policy_names})


def namespace_selector(args: ImagePolicyArgs) -> dict[str, Any]:
    """The bindings' namespaceSelector: the managed label(s), never a system namespace, an
    excluded one, nor one labelled `aistack.dev/image-policy: exempt`
    (aistack.contracts.k8s_admission.image_policy_selector, which the rules read too)."""
    return image_policy_selector(args.namespace_labels, args.exclude_namespaces)


def _check(name: str, args: ImagePolicyArgs) -> None:
    problems = Problems()
    if not re.fullmatch(_DNS_SUBDOMAIN, f"{name}-workloads") or len(name) > 200:
        problems.add(
            name,
            "names the cluster-scoped policies (<name>-pods, ...), which must be DNS subdomains.",
            "use lowercase letters, digits and '-', e.g. 'image-policy'.",
        )
    for key, value in args.namespace_labels.items():
        if not key or not re.fullmatch(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?", value):
            problems.add(
                f"{name}.namespaceLabels.{key}",
                f"{value!r} is not a label value.",
                "at most 63 of [A-Za-z0-9._-], alphanumeric at both ends.",
            )
    problems.raise_if_any()


def _untyped(document: dict[str, Any]) -> Any:
    """A plain dict where pulumi-kubernetes types its TypedDicts: the shape is checked by
    kubernetes-validate against the API's schemas (tests/k8s/test_schemas.py)."""
    return document

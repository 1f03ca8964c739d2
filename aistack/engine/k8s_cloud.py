"""The simulated cloud's Kubernetes answers: what pulumi-kubernetes and the API server return.

`SimulatedCloud` (aistack.engine.cloud) hands every `kubernetes:` registration and the
Kubernetes invokes to `K8sCloud`, the simulation of package `kubernetes` (a
`SimulatedProvider`, aistack.engine.context); the clusters are those of the `kubernetes`
providers the program registered. Behaviour follows pulumi-kubernetes
4.x (provider/pkg) and the API server, each cited where it is built:

- an object without `metadata.name` is auto-named `<logical name>-<8 hex>` and annotated
  `pulumi.com/autonamed: "true"` (provider/pkg/metadata/naming.go, AssignNameIfAutonamable,
  `resource.NewUniqueName(seed, urn.Name()+"-", 0, 0)`: randlen 0 means 8 hex characters);
- the id is `<namespace>/<name>` for namespaced objects and `<name>` for cluster-scoped ones
  (provider/pkg/clients FqName); a namespaced object without a namespace lands in the
  provider's `namespace`, else the kubeconfig context's namespace, else `default` (the
  precedence pulumi_kubernetes.Provider documents for `namespace`);
- `metadata` comes back with what the API server fills in: `uid`, `resourceVersion`,
  `creationTimestamp`, `generation`, `namespace`;
- custom resources (`apiextensions.CustomResource`) register as
  `kubernetes:<group>/<version>:<Kind>` and are answered like built-in kinds; their scope is
  known for the CRDs aistack uses, else taken from whether the program gave a namespace;
- a Helm release (`helm.sh/v3:Release`) is answered as the provider's Helm code answers it:
  named, namespaced, with a `status`, but no chart is fetched (`helm_release`); the
  `helm.sh/v4:Chart` and `yaml/v2:ConfigFile`/`ConfigGroup` components are recorded with
  their inputs and no children (they are the provider's own components, which the mocks
  do not construct), so a URL they name is never read;
- the API server refuses names and labels that break its rules (HTTP 422 "is invalid"),
  and a provider whose kubeconfig does not parse, or names a context the kubeconfig lacks,
  fails the run as `pulumi up` does ("configured Kubernetes cluster is unreachable").

The simulated cluster answers no invokes yet: an unknown invoke fails loudly in
`SimulatedCloud.call`, as on AWS and GCP.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pulumi.runtime import MockResourceArgs

from aistack.engine.context import Invoke, SimContext
from aistack.errors import AistackError

__all__ = [
    "CLUSTER_SCOPED",
    "DNS1123_LABEL",
    "DNS1123_SUBDOMAIN",
    "HELM_RELEASE",
    "K8sCloud",
    "LABEL_NAME",
    "SimulatedK8sError",
    "cluster_of",
    "helm_release",
    "is_builtin_api",
    "is_cluster_scoped",
    "label_problems",
    "resource",
]

#: apimachinery/pkg/util/validation/validation.go: IsDNS1123Label (at most 63 characters),
#: IsDNS1123Subdomain (at most 253), IsDNS1035Label (Service names: start with a letter),
#: and the name part of a qualified name (label and annotation keys, label values).
DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")

#: Kinds the API server serves cluster-scoped (`kubectl api-resources --namespaced=false`
#: on Kubernetes 1.30-1.37), plus those of the operators aistack composes (their CRDs say
#: `scope: Cluster`: Kueue config/components/crd/bases, Karpenter pkg/apis/crds).
CLUSTER_SCOPED = frozenset(
    {
        "v1:Namespace",
        "v1:Node",
        "v1:PersistentVolume",
        "v1:ComponentStatus",
        "rbac.authorization.k8s.io/v1:ClusterRole",
        "rbac.authorization.k8s.io/v1:ClusterRoleBinding",
        "storage.k8s.io/v1:StorageClass",
        "storage.k8s.io/v1:CSIDriver",
        "storage.k8s.io/v1:CSINode",
        "storage.k8s.io/v1:VolumeAttachment",
        "scheduling.k8s.io/v1:PriorityClass",
        "node.k8s.io/v1:RuntimeClass",
        "networking.k8s.io/v1:IngressClass",
        "apiextensions.k8s.io/v1:CustomResourceDefinition",
        "apiregistration.k8s.io/v1:APIService",
        "admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy",
        "admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding",
        "admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration",
        "admissionregistration.k8s.io/v1:MutatingWebhookConfiguration",
        "certificates.k8s.io/v1:CertificateSigningRequest",
        "flowcontrol.apiserver.k8s.io/v1:FlowSchema",
        "flowcontrol.apiserver.k8s.io/v1:PriorityLevelConfiguration",
        "gateway.networking.k8s.io/v1:GatewayClass",
        "kueue.x-k8s.io/v1beta1:ResourceFlavor",
        "kueue.x-k8s.io/v1beta1:ClusterQueue",
        "kueue.x-k8s.io/v1beta1:WorkloadPriorityClass",
        "kueue.x-k8s.io/v1beta1:AdmissionCheck",
        "kueue.x-k8s.io/v1beta1:ProvisioningRequestConfig",
        "kueue.x-k8s.io/v1beta2:ResourceFlavor",
        "kueue.x-k8s.io/v1beta2:ClusterQueue",
        "kueue.x-k8s.io/v1beta2:WorkloadPriorityClass",
        "kueue.x-k8s.io/v1beta2:AdmissionCheck",
        "kueue.x-k8s.io/v1beta2:ProvisioningRequestConfig",
        "kueue.x-k8s.io/v1beta2:Cohort",
        "karpenter.sh/v1:NodePool",
        "karpenter.sh/v1:NodeClaim",
        "karpenter.k8s.aws/v1:EC2NodeClass",
        # prometheus-engine charts/operator/crds at v0.17.2: scope Cluster.
        "monitoring.googleapis.com/v1:ClusterPodMonitoring",
        "monitoring.googleapis.com/v1:ClusterNodeMonitoring",
        "monitoring.googleapis.com/v1:ClusterRules",
        "monitoring.googleapis.com/v1:GlobalRules",
    }
)

#: What pulumi-kubernetes reports for a Namespace right after create (status.phase).
_NAMESPACE_STATUS = {"phase": "Active"}
#: The simulated API server's clock: every object was created at this instant, so two runs
#: of one program record the same graph.
CREATION_TIMESTAMP = "2026-01-01T00:00:00Z"


class SimulatedK8sError(AistackError):
    """A registration the Kubernetes API server (or pulumi-kubernetes) would refuse."""


def _digest(*parts: str, length: int = 8) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:length]


def _api_version_and_kind(token: str) -> tuple[str, str]:
    """`kubernetes:core/v1:Namespace` -> (`v1`, `Namespace`); a custom resource's token is
    its own apiVersion (`kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue`)."""
    _, api_version, kind = token.split(":", 2)
    return api_version.removeprefix("core/"), kind


#: API groups the API server serves itself: the core group (`v1`), the unqualified groups
#: (apps, batch, autoscaling, policy) and `*.k8s.io`, except the `*.k8s.io` groups of SIG
#: projects that are installed as CRDs (Kueue, JobSet, Gateway API, ...).
_BUILTIN_GROUP = re.compile(r"[a-z0-9]+|[a-z0-9.-]+\.k8s\.io")
_CRD_GROUP_UNDER_K8S_IO = re.compile(
    r"(kueue|jobset|gateway\.networking|inference\.networking(\.x)?|snapshot\.storage)"
    r"\.k8s\.io|.*\.x-k8s\.io"
)


def is_builtin_api(api_version: str) -> bool:
    """True for an apiVersion the API server serves itself, False for a custom resource's."""
    if "/" not in api_version:
        return True
    group = api_version.split("/", 1)[0]
    return bool(_BUILTIN_GROUP.fullmatch(group)) and not _CRD_GROUP_UNDER_K8S_IO.fullmatch(group)


def is_cluster_scoped(api_version: str, kind: str, inputs: dict[str, Any]) -> bool:
    if f"{api_version}:{kind}" in CLUSTER_SCOPED:
        return True
    if is_builtin_api(api_version):
        return False  # A built-in kind not listed above is namespaced.
    # A custom resource of a CRD the table does not know: pulumi-kubernetes asks the cluster
    # (discovery); offline, the program's own namespace says which it meant.
    return not (inputs.get("metadata") or {}).get("namespace")


def cluster_of(ctx: SimContext, provider: str | None) -> dict[str, Any]:
    """The cluster a provider reaches: its kubeconfig (parsed), the context in use and the
    default namespace. Raises what pulumi-kubernetes raises when it cannot be reached."""
    inputs = ctx.providers.get(provider or "", {}) if provider else {}
    explicit = bool(inputs)
    source = (
        inputs
        if explicit
        else {
            key.removeprefix("kubernetes:"): value
            for key, value in ctx.config.items()
            if key.startswith("kubernetes:")
        }
    )
    raw = source.get("kubeconfig")
    if not raw:
        # The ambient kubeconfig (~/.kube/config): offline, a simulated cluster.
        return {
            "context": source.get("context") or "simulated",
            "namespace": source.get("namespace") or "default",
        }
    config = _parse_kubeconfig(str(raw))
    contexts = {
        str(entry.get("name")): dict(entry.get("context") or {})
        for entry in config.get("contexts") or []
        if isinstance(entry, dict)
    }
    wanted = str(source.get("context") or config.get("current-context") or "")
    if wanted not in contexts:
        # client-go clientcmd (client_config.go getContext), as the provider reports it.
        raise SimulatedK8sError(
            "configured Kubernetes cluster is unreachable: invalid configuration: context "
            f"was not found for specified context: {wanted or '(none)'} (kubeconfig contexts: "
            f"{', '.join(sorted(contexts)) or 'none'})"
        )
    context = contexts[wanted]
    return {
        "context": wanted,
        "cluster": context.get("cluster", ""),
        "namespace": source.get("namespace") or context.get("namespace") or "default",
    }


def _parse_kubeconfig(raw: str) -> dict[str, Any]:
    """A kubeconfig's contents or a path to one (pulumi_kubernetes.Provider `kubeconfig`:
    "The contents of a kubeconfig file or the path to a kubeconfig file")."""
    import yaml

    text = raw
    if "\n" not in raw and not raw.lstrip().startswith("{"):
        path = Path(raw).expanduser()
        if not path.is_file():
            raise SimulatedK8sError(
                "configured Kubernetes cluster is unreachable: failed to parse kubeconfig "
                f"data in `kubernetes:config:kubeconfig`- stat {raw}: no such file or directory"
            )
        text = path.read_text()
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as error:
        config = error
    if not isinstance(config, dict) or not isinstance(config.get("contexts", []), list):
        raise SimulatedK8sError(
            "configured Kubernetes cluster is unreachable: failed to parse kubeconfig data in "
            "`kubernetes:config:kubeconfig`- the value is neither a kubeconfig document "
            "(apiVersion: v1, kind: Config, clusters, contexts, users) nor a path to one"
        )
    return config


def label_problems(labels: dict[str, Any], *, annotations: bool = False) -> list[str]:
    """What the API server says of these labels (or annotation keys): apimachinery
    ValidateLabels / ValidateAnnotations, IsQualifiedName and IsValidLabelValue."""
    problems = []
    for key, value in labels.items():
        prefix, _, name = str(key).rpartition("/")
        if prefix and (len(prefix) > 253 or not DNS1123_SUBDOMAIN.fullmatch(prefix)):
            problems.append(f"{key!r}: prefix part must be a lowercase RFC 1123 subdomain")
        if len(name) > 63 or not LABEL_NAME.fullmatch(name):
            problems.append(
                f"{key!r}: name part must consist of alphanumeric characters, '-', '_' or "
                "'.', and must start and end with an alphanumeric character, at most 63"
            )
        if annotations:
            continue
        text = str(value)
        if len(text) > 63 or (text and not LABEL_NAME.fullmatch(text)):
            problems.append(
                f"{key}={text!r}: a valid label value must be 63 characters or less and must "
                "be empty or begin and end with an alphanumeric character ([a-z0-9A-Z]) with "
                "dashes (-), underscores (_), dots (.), and alphanumerics between"
            )
    return problems


def _name_problem(api_version: str, kind: str, name: str) -> str | None:
    if kind == "Namespace" and api_version == "v1":
        rule, limit, what = DNS1123_LABEL, 63, "a lowercase RFC 1123 label"
    elif kind == "Service" and api_version == "v1":
        rule, limit, what = DNS1035_LABEL, 63, "a DNS-1035 label"
    else:
        rule, limit, what = DNS1123_SUBDOMAIN, 253, "a lowercase RFC 1123 subdomain"
    if len(name) <= limit and rule.fullmatch(name):
        return None
    return (
        f"metadata.name: Invalid value: {name!r}: must be {what} of at most {limit} "
        f"characters (regex used for validation is '{rule.pattern}')"
    )


#: pulumi-kubernetes' Helm release resource (a Helm install, not a Kubernetes object).
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
#: provider/pkg/provider/helm_release.go (pulumi-kubernetes 4.x): `defaultTimeoutSeconds`.
HELM_DEFAULT_TIMEOUT = 300
#: Helm v3 pkg/chartutil/validate_name.go: a release name is a lowercase RFC 1123 subdomain
#: of at most 53 characters (`maxReleaseNameLen`: Kubernetes label values are 63, and Helm
#: keeps room for the suffixes it appends).
HELM_RELEASE_NAME_MAX = 53


def helm_release(
    ctx: SimContext, args: MockResourceArgs, inputs: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """What pulumi-kubernetes returns for a `helm.sh/v3:Release`, without the chart.

    provider/pkg/provider/helm_release.go: Check names an unnamed release
    `<logical name>-<8 hex>` (assignNameIfAutonameable, NewUniqueHex), puts it in the
    provider's namespace when none is given and sets `timeout` to 300 s unless `skipAwait`
    (setDefaults); Create returns the id `<namespace>/<name>` and a `status` (name,
    namespace, chart, version, revision, status) read from the installed release
    (setReleaseAttributes). Offline no chart is downloaded or rendered, so `version` is the
    one the program pinned, `appVersion` is absent and `resourceNames` (the objects the
    chart made) is empty: what a chart installs is judged by its own values, not here.
    """
    cluster = cluster_of(ctx, args.provider)
    out = dict(inputs)
    name = str(inputs.get("name") or f"{args.name}-{_digest(args.typ, args.name)}")
    namespace = str(inputs.get("namespace") or cluster["namespace"])
    problems = []
    if len(name) > HELM_RELEASE_NAME_MAX or not DNS1123_SUBDOMAIN.fullmatch(name):
        problems.append(
            f"release name {name!r} is invalid: a release name must be a lowercase RFC 1123 "
            f"subdomain of at most {HELM_RELEASE_NAME_MAX} characters"
        )
    if not DNS1123_LABEL.fullmatch(namespace):
        problems.append(f"namespace {namespace!r} is not a lowercase RFC 1123 label")
    if problems:
        raise SimulatedK8sError(f"helm Release {args.name!r}: " + "; ".join(problems))
    out.update(name=name, namespace=namespace)
    if not inputs.get("skipAwait") and "timeout" not in inputs:
        out["timeout"] = HELM_DEFAULT_TIMEOUT
    chart = str(inputs.get("chart") or "")
    out["status"] = {
        "name": name,
        "namespace": namespace,
        # The chart's own name (Chart.yaml `name`): the last part of a reference or URL.
        "chart": chart.rstrip("/").rsplit("/", 1)[-1],
        "version": str(inputs.get("version") or ""),
        "revision": 1,
        "status": "deployed",
    }
    return f"{namespace}/{name}", out


def resource(
    ctx: SimContext, args: MockResourceArgs, inputs: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The id and outputs pulumi-kubernetes returns for one `kubernetes:` registration."""
    if args.typ == HELM_RELEASE:
        return helm_release(ctx, args, inputs)
    api_version, kind = _api_version_and_kind(args.typ)
    if not args.custom:
        # Components (helm.sh/v4 Chart, yaml/v2 ConfigGroup): no object of their own.
        return f"{args.name}-{_digest(args.typ, args.name)}", dict(inputs)
    cluster = cluster_of(ctx, args.provider)
    out = dict(inputs)
    out.setdefault("apiVersion", api_version)
    out.setdefault("kind", kind)
    metadata = dict(out.get("metadata") or {})
    annotations = dict(metadata.get("annotations") or {})
    if not metadata.get("name"):
        metadata["name"] = f"{args.name}-{_digest(args.typ, args.name)}"
        annotations["pulumi.com/autonamed"] = "true"
    name = str(metadata["name"])
    problems = []
    name_problem = _name_problem(api_version, kind, name)
    if name_problem:
        problems.append(name_problem)
    problems += [f"metadata.labels: {p}" for p in label_problems(metadata.get("labels") or {})]
    problems += [
        f"metadata.annotations: {p}" for p in label_problems(annotations, annotations=True)
    ]
    if problems:
        # The API server's 422 answer, as pulumi-kubernetes surfaces it.
        raise SimulatedK8sError(
            f'{kind} "{name}" is invalid (resource {args.name!r}): ' + "; ".join(problems)
        )
    if is_cluster_scoped(api_version, kind, inputs):
        metadata.pop("namespace", None)
        resource_id = name
    else:
        metadata["namespace"] = str(metadata.get("namespace") or cluster["namespace"])
        resource_id = f"{metadata['namespace']}/{name}"
    if annotations:
        metadata["annotations"] = annotations
    metadata.update(
        uid=str(uuid.UUID(hex=_digest(args.typ, args.name, resource_id, length=32))),
        resourceVersion=str(int(_digest("rv", resource_id, length=6), 16)),
        creationTimestamp=CREATION_TIMESTAMP,
        generation=1,
    )
    out["metadata"] = metadata
    if api_version == "v1" and kind == "Namespace":
        # The API server labels every namespace with its own name (immutable; GA in 1.22,
        # "Well-Known Labels": kubernetes.io/metadata.name): NetworkPolicy namespace
        # selectors rely on it.
        metadata["labels"] = {**(metadata.get("labels") or {}), "kubernetes.io/metadata.name": name}
        out.setdefault("status", dict(_NAMESPACE_STATUS))
    return resource_id, out


class K8sCloud:
    """Answers `kubernetes:` registrations for one run; it answers no invokes yet."""

    package = "kubernetes"

    def __init__(self, ctx: SimContext) -> None:
        self.ctx = ctx

    def resource(
        self, args: MockResourceArgs, inputs: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        return resource(self.ctx, args, inputs)

    def invokes(self) -> Mapping[str, Invoke]:
        return {}

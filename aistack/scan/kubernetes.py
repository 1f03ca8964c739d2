"""`aistack scan` over a stack's Kubernetes objects: strict schemas, and checkov's view.

Three validators read the same manifests (`aistack.queries.k8s.manifest`: what `kubectl
apply` would take):

- built-in kinds against kubernetes-validate's schemas in strict mode (an unknown field is
  an error) for the oldest and the newest Kubernetes version aistack supports;
- custom resources against the upstream CRD of the pinned operator release
  (`aistack.scan.crd_schemas`);
- checkov's `kubernetes` framework, in the same checkov run as the Terraform plan
  (`aistack.scan.checkov`), over documents written by `write_for_checkov`.

checkov's NetworkPolicy check (CKV2_K8S_6) matches policies to pods by labels alone and
ignores namespaces, so a default deny in one namespace would cover the pods of every
other. Real NetworkPolicies select pods of their own namespace only (Kubernetes docs,
"Network Policies": "podSelector ... selects the grouping of pods to which the policy
applies ... in the same namespace as the NetworkPolicy"). The copies written for checkov
say that in labels: each pod template and each policy's podSelector gets
`aistack.dev/scan-namespace: <namespace>`, which changes nothing but the scope checkov
would otherwise ignore. The manifests themselves are not changed.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aistack.engine.graph import StackGraph
from aistack.errors import AistackError
from aistack.queries.k8s import builtin_manifests, custom_manifests, job_templates, namespace_of
from aistack.scan.findings import Finding

__all__ = [
    "SCAN_NAMESPACE_LABEL",
    "KubernetesDocument",
    "kubernetes_documents",
    "read_schemas_once",
    "schema_findings",
    "write_for_checkov",
]

#: The label the checkov copies carry to keep NetworkPolicy matching within a namespace.
SCAN_NAMESPACE_LABEL = "aistack.dev/scan-namespace"

#: Where each workload kind keeps its pod template's metadata.
_POD_TEMPLATE_PATHS = {
    "Pod": (),
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}


@dataclass(frozen=True)
class KubernetesDocument:
    """One object to validate: the Pulumi logical name it came from, and its manifest."""

    resource: str
    document: dict[str, Any]
    builtin: bool

    @property
    def where(self) -> str:
        metadata = self.document.get("metadata") or {}
        namespace = metadata.get("namespace")
        name = metadata.get("name") or metadata.get("generateName") or "?"
        return f"{self.document.get('kind')} {namespace + '/' if namespace else ''}{name}"


def kubernetes_documents(graph: StackGraph) -> list[KubernetesDocument]:
    """Every Kubernetes object the stack registers, built-in kinds first, then the Jobs and
    JobSets kept in ConfigMaps to be submitted later (named `<ConfigMap>:<key>`): what
    `kubectl create` will be given is judged like what the stack creates."""
    templates: list[KubernetesDocument] = []
    for found in job_templates(graph):
        name = f"{found.config_map.name}:{found.key}"
        document = _in_namespace(found.document, namespace_of(found.config_map))
        templates.append(KubernetesDocument(name, document, found.kind == "Job"))
        if found.kind == "JobSet":
            templates += [
                KubernetesDocument(f"{name}/{job['metadata']['name']}", job, True)
                for job in _child_jobs(document)
            ]
    return (
        [KubernetesDocument(r.name, m, True) for r, m in builtin_manifests(graph)]
        + [t for t in templates if t.builtin]
        + [KubernetesDocument(r.name, m, False) for r, m in custom_manifests(graph)]
        + [t for t in templates if not t.builtin]
    )


def _child_jobs(jobset: dict[str, Any]) -> list[dict[str, Any]]:
    """The Jobs a JobSet creates, one per replicated job (JobSet names them
    `<jobset>-<replicated job>-<index>`): checkov and kubernetes-validate know Jobs, not
    JobSets, so the pods a JobSet runs are judged through these."""
    metadata = jobset.get("metadata") or {}
    base = metadata.get("name") or metadata.get("generateName") or "jobset"
    jobs = []
    for replicated in (jobset.get("spec") or {}).get("replicatedJobs") or []:
        template = replicated.get("template") or {}
        job_metadata = {
            **(template.get("metadata") or {}),
            "name": f"{base.rstrip('-')}-{replicated.get('name')}-0",
        }
        if metadata.get("namespace"):
            job_metadata["namespace"] = metadata["namespace"]
        jobs.append(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": job_metadata,
                "spec": template.get("spec") or {},
            }
        )
    return jobs


def _in_namespace(document: dict[str, Any], namespace: str | None) -> dict[str, Any]:
    """A template as submitted: into the ConfigMap's namespace unless it names its own."""
    metadata = document.get("metadata") or {}
    if metadata.get("namespace") or not namespace:
        return document
    return {**document, "metadata": {**metadata, "namespace": namespace}}


def schema_findings(
    documents: list[KubernetesDocument], versions: tuple[str, ...] | None = None
) -> list[Finding]:
    """A Finding per schema error: built-in kinds for each of `versions` (default: the
    oldest and newest aistack supports), custom resources for their kept CRD."""
    from aistack.scan.crd_schemas import validate_custom_resource

    if versions is None:
        from aistack.contracts.k8s import SUPPORTED_KUBERNETES

        versions = SUPPORTED_KUBERNETES
    findings: list[Finding] = []
    for item in documents:
        if item.builtin:
            for version in versions:
                for error in _builtin_errors(item.document, version):
                    findings.append(_finding("K8S_SCHEMA", item, f"Kubernetes {version}: {error}"))
        else:
            for error in validate_custom_resource(item.document):
                findings.append(_finding("CRD_SCHEMA", item, error))
    return findings


def _finding(check_id: str, item: KubernetesDocument, title: str) -> Finding:
    return Finding(
        tool="schema", check_id=check_id, resource=item.resource, location=item.where, title=title
    )


def _builtin_errors(document: dict[str, Any], version: str) -> list[str]:
    try:
        import kubernetes_validate
    except ImportError as error:  # pragma: no cover - the dev environment has it
        raise AistackError(
            "kubernetes-validate is not installed. Fix: `make env` in the aistack repository, "
            "or `pip install kubernetes-validate`."
        ) from error
    read_schemas_once()
    try:
        kubernetes_validate.validate(document, version, strict=True)
    except kubernetes_validate.ValidationError as error:
        path = ".".join(str(p) for p in error.path) or "<root>"
        return [f"{path}: {error.message}"]
    except kubernetes_validate.SchemaNotFoundError as error:
        return [f"no schema: {error}"]
    return []


def read_schemas_once() -> None:
    """kubernetes-validate reads and parses the kind's schema and the version's whole
    `_definitions.json` (1.8 MB for 1.37) on every `validate` call, most of a call's time:
    a stack of 20 objects checked for two versions parsed it 40 times. The schema files are
    the package's own data, unchanged while the process runs, and the validator only reads
    what it is given, so each file is parsed once per process (a missing file still raises
    each time: functools.cache keeps no exceptions)."""
    from kubernetes_validate import utils

    if not getattr(utils.schema_contents, "aistack_read_once", False):
        read_once = functools.cache(utils.schema_contents)
        read_once.aistack_read_once = True  # type: ignore[attr-defined]
        utils.schema_contents = read_once


def write_for_checkov(documents: list[KubernetesDocument], directory: Path) -> dict[str, str]:
    """Each built-in object as its own YAML file in `directory`, namespace-scoped for
    checkov (see the module docstring). Returns checkov's `file_path` -> logical name."""
    import yaml

    names: dict[str, str] = {}
    for index, item in enumerate(d for d in documents if d.builtin):
        file_name = f"k8s-{index:04d}.yaml"
        # libyaml's emitter: the same YAML as safe_dump's, in a tenth of the time.
        text = yaml.dump(scoped_for_checkov(item.document), Dumper=yaml.CSafeDumper)
        (directory / file_name).write_text(text)
        names[f"/{file_name}"] = item.resource
    return names


def scoped_for_checkov(document: dict[str, Any]) -> dict[str, Any]:
    """The copy of `document` checkov reads: pods and NetworkPolicy selectors labelled
    with their namespace."""
    namespace = (document.get("metadata") or {}).get("namespace")
    kind = document.get("kind")
    if not namespace or (kind not in _POD_TEMPLATE_PATHS and kind != "NetworkPolicy"):
        return document
    scoped = copy.deepcopy(document)
    if kind == "NetworkPolicy":
        selector = scoped.setdefault("spec", {}).setdefault("podSelector", {})
        selector.setdefault("matchLabels", {})[SCAN_NAMESPACE_LABEL] = namespace
        return scoped
    template = scoped
    for key in _POD_TEMPLATE_PATHS[kind]:
        template = template.setdefault(key, {})
    metadata = template.setdefault("metadata", {})
    metadata.setdefault("labels", {})[SCAN_NAMESPACE_LABEL] = namespace
    return scoped

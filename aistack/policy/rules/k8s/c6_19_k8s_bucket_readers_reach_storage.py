"""AIS-C6-19: pods that read object storage run as a ServiceAccount with a cloud identity,
and their namespace's egress policy lets them reach the storage API."""

from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import builtin_manifests, job_templates, pod_specs

#: The ServiceAccount annotations of the keyless identities (GKE Workload Identity, EKS
#: IRSA; for EKS Pod Identity k8s.TeamNamespace records the associated role).
IDENTITY_ANNOTATIONS = (
    "iam.gke.io/gcp-service-account",
    "eks.amazonaws.com/role-arn",
    "aistack.dev/eks-pod-identity-role-arn",
)
_SCHEMES = ("gs://", "s3://")


def _reads_buckets(pod: dict[str, Any]) -> list[str]:
    """The bucket URIs a pod's containers name in their commands, arguments or env."""
    found = []
    for container in [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]:
        words = [*(container.get("command") or []), *(container.get("args") or [])]
        words += [str(e.get("value", "")) for e in container.get("env") or []]
        found += [w for w in words if isinstance(w, str) and w.startswith(_SCHEMES)]
    return found


def _opens_https(policy: dict[str, Any]) -> bool:
    for egress in (policy.get("spec") or {}).get("egress") or []:
        ports = egress.get("ports")
        https = not ports or any(p.get("port") in (443, "443", "https") for p in ports)
        targets = egress.get("to") or []
        if https and (not targets or any("ipBlock" in to for to in targets)):
            return True
    return False


def _pods(graph: StackGraph) -> Iterator[tuple[Resource, str, str | None, dict[str, Any]]]:
    for resource, document in builtin_manifests(graph):
        if document["kind"] in ("Deployment", "StatefulSet", "Job"):
            pod = ((document.get("spec") or {}).get("template") or {}).get("spec") or {}
            where = f"{document['kind']} {document['metadata'].get('name')!r}"
            yield resource, where, document["metadata"].get("namespace"), pod
    for template in job_templates(graph):
        namespace = (template.document.get("metadata") or {}).get("namespace") or (
            template.config_map.inputs.get("metadata") or {}
        ).get("namespace")
        # A JobSet's replicated Jobs share one ServiceAccount and namespace: judged once.
        readers = [pod for _, pod in pod_specs(template.document) if _reads_buckets(pod)]
        if readers:
            where = f"{template.kind} template {template.name!r}"
            yield template.config_map, where, namespace, readers[0]


@rule(
    id="AIS-C6-19",
    checklist=["C6"],
    info="Pods that read gs:// or s3:// run as a ServiceAccount with a keyless cloud "
    "identity, and a default-deny egress policy in their namespace opens HTTPS to the "
    "storage API.",
    why="No key is mounted (C6), so a pod reads a bucket only through its ServiceAccount's "
    "cloud identity; and a namespace whose egress is denied by default blocks the storage "
    "API unless a rule opens it. Either missing, the copy fails and the pod never starts "
    "(an init container in Error, a Deployment that never becomes Available).",
    fix="Give the TeamNamespace's ServiceAccount an identity (gke-workload-identity, "
    "eks-pod-identity or eks-irsa) and allowEgress to the storage API's range.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    objects = [document for _, document in builtin_manifests(graph)]
    accounts = {
        (o["metadata"].get("namespace"), o["metadata"].get("name")): o["metadata"]
        for o in objects
        if o["kind"] == "ServiceAccount"
    }
    policies: dict[str | None, list[dict[str, Any]]] = {}
    for o in objects:
        if o["kind"] == "NetworkPolicy":
            policies.setdefault(o["metadata"].get("namespace"), []).append(o)
    for resource, where, namespace, pod in _pods(graph):
        buckets = _reads_buckets(pod)
        if not buckets:
            continue
        problems = []
        account = pod.get("serviceAccountName", "default")
        metadata = accounts.get((namespace, account))
        annotations = (metadata or {}).get("annotations") or {}
        if not any(key in annotations for key in IDENTITY_ANNOTATIONS):
            problems.append(f"ServiceAccount {account!r} has no cloud identity")
        denied = [
            p
            for p in policies.get(namespace, [])
            if "Egress" in (p.get("spec") or {}).get("policyTypes", [])
        ]
        if denied and not any(_opens_https(p) for p in denied):
            problems.append(f"namespace {namespace!r} denies egress and opens no HTTPS")
        if problems:
            yield fail(resource, f"{where} reads {buckets[0]}, but " + "; ".join(problems) + ".")
        else:
            yield ok(resource, f"{where} reads {buckets[0]} as {account!r}, with a way out.")

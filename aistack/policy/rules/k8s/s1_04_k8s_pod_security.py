"""AIS-S1-04: every namespace enforces Pod Security `restricted` at a pinned version."""

import re
from collections.abc import Iterator

from aistack.contracts.k8s import PRIVILEGED_BECAUSE_ANNOTATION as PRIVILEGED_BECAUSE
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import NAMESPACE, SYSTEM_NAMESPACES, metadata_of, namespace_of

#: The annotation that declares why a namespace of node agents may not be restricted.
#: A Kubernetes minor version (`v1.30`); `latest` or no version follows the cluster.
_PINNED = re.compile(r"v1\.\d+")


@rule(
    id="AIS-S1-04",
    checklist=["S1", "C6"],
    info="Every namespace enforces Pod Security restricted with a pinned enforce-version.",
    why="A pod that may run privileged, mount host paths or use the host network steps "
    "around the namespace's isolation: host networking is not subject to NetworkPolicy, and "
    "the node's credentials and kubelet are one host path away. Pinning the version keeps a "
    "cluster upgrade from changing which pods are admitted.",
    fix="Use k8s.TeamNamespace, or label the namespace pod-security.kubernetes.io/enforce: "
    "restricted and pod-security.kubernetes.io/enforce-version: v1.<minor>. A node agent "
    "that must run privileged (a GPU metrics exporter reading the kubelet's sockets) gets a "
    "namespace of its own annotated aistack.dev/privileged-because: <why>; team namespaces "
    "(aistack.dev/tier) never can.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for namespace in graph.of_type(NAMESPACE):
        name = namespace_of(namespace)
        if name in SYSTEM_NAMESPACES:
            continue
        metadata = metadata_of(namespace)
        labels = metadata.get("labels") or {}
        level = labels.get("pod-security.kubernetes.io/enforce")
        because = (metadata.get("annotations") or {}).get(PRIVILEGED_BECAUSE)
        if level != "restricted" and because and "aistack.dev/tier" not in labels:
            # The explicit opt-out: a node agent's own namespace, with the reason on it.
            yield ok(
                namespace,
                f"namespace {name!r} is {level or 'unenforced'} by declaration: {because}",
            )
            continue
        version = labels.get("pod-security.kubernetes.io/enforce-version", "")
        if level != "restricted":
            yield fail(
                namespace,
                f"namespace {name!r} enforces Pod Security {level or 'nothing'}, not restricted.",
            )
        elif not _PINNED.fullmatch(str(version)):
            yield fail(
                namespace,
                f"namespace {name!r} enforces restricted at "
                f"{version or 'no version'} (follows the cluster), not a pinned v1.<minor>.",
            )
        else:
            yield ok(namespace, f"namespace {name!r} enforces restricted, pinned to {version}.")

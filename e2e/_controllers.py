"""Kueue and JobSet, run as processes beside the control plane, their webhooks served on
loopback.

In a cluster each runs as a Deployment whose webhook Service the API server calls. kwok
runs no containers, so here each controller runs as a process of the harness, and its
webhook configurations (from its module's config/components/webhook/manifests.yaml) call
it at https://127.0.0.1:<port><path>, with a CA of the harness's own in caBundle. Kueue
runs with what stacks/kubernetes-operators configures where it decides admission: the
Job and JobSet integrations only, in training namespaces only (managedJobsNamespaceSelector),
so its Job and JobSet webhooks are scoped to those namespaces and the webhooks of the
integrations it does not run are left out, as Kueue's chart does
(charts/kueue/templates/webhook/manifests.yaml).
"""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path
from typing import Any

import yaml

from e2e._cluster import Cluster, free_port

#: stacks/kubernetes-operators kueue_manager_config(): the frameworks and namespaces
#: Kueue manages (the namespaces k8s.TeamNamespace labels aistack.dev/tier=train).
KUEUE_FRAMEWORKS = ["batch/job", "jobset.x-k8s.io/jobset"]
KUEUE_MANAGED_NAMESPACES = {"matchLabels": {"aistack.dev/tier": "train"}}
#: What each kept Kueue webhook admits: its own objects, and the Jobs and JobSets of the
#: two integrations.
_KUEUE_OWN = {"clusterqueues", "resourceflavors", "workloads", "cohorts"}
_KUEUE_JOBS = {"jobs", "jobsets"}


def serving_certificate(directory: Path) -> Path:
    """A CA and a serving certificate for 127.0.0.1 signed by it, as controller-runtime's
    webhook server reads them (tls.crt, tls.key in its certDir). Returns the CA file."""
    directory.mkdir(parents=True, exist_ok=True)

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=directory)  # noqa: S603, S607

    subject = ["-nodes", "-days", "1", "-subj"]
    openssl("req", "-x509", "-newkey", "rsa:2048", *subject, "/CN=e2e-webhook-ca",
            "-keyout", "ca.key", "-out", "ca.crt")  # fmt: skip
    openssl("req", "-newkey", "rsa:2048", *subject, "/CN=127.0.0.1",
            "-keyout", "tls.key", "-out", "tls.csr")  # fmt: skip
    (directory / "san.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "tls.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "1", "-extfile", "san.cnf", "-out", "tls.crt")  # fmt: skip
    return directory / "ca.crt"


def _kustomize_patch(document: dict[str, Any], patches: Path) -> None:
    """The JSON 6902 `replace` patches a kustomization applies to this configuration
    (JobSet's patches/<mutating|validating>-patch.yaml)."""
    patch = patches / f"{document['kind'].removesuffix('WebhookConfiguration').lower()}-patch.yaml"
    if not patch.exists():
        return
    for op in yaml.safe_load(patch.read_text()):
        _, field, index = op["path"].split("/")
        if op["op"] != "replace" or field != "webhooks":
            raise ValueError(f"{patch}: unsupported patch {op['op']} {op['path']}")
        document["webhooks"][int(index)] = op["value"]


def _webhooks_at(
    manifest: Path, port: int, ca: Path, prefix: str, keep: Any
) -> list[dict[str, Any]]:
    """MANIFEST's webhook configurations (kustomize-patched), renamed PREFIX-…, calling
    127.0.0.1:PORT; KEEP decides for each webhook whether it stays and may change it."""
    bundle = base64.b64encode(ca.read_bytes()).decode()
    configurations = []
    for document in yaml.safe_load_all(manifest.read_text()):
        if not document:
            continue
        _kustomize_patch(document, manifest.parent / "patches")
        document["metadata"]["name"] = f"{prefix}-{document['metadata']['name']}"
        kept = []
        for webhook in document["webhooks"]:
            path = webhook["clientConfig"]["service"]["path"]
            webhook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": bundle}
            if keep(webhook):
                kept.append(webhook)
        document["webhooks"] = kept
        configurations.append(document)
    return configurations


def _kueue_keeps(webhook: dict[str, Any]) -> bool:
    resources = {resource for rule in webhook["rules"] for resource in rule["resources"]}
    if resources & _KUEUE_JOBS:
        webhook["namespaceSelector"] = KUEUE_MANAGED_NAMESPACES
        return True
    return bool(resources & _KUEUE_OWN)


#: Where Kueue's manager reads its metrics server's certificate when it does not manage
#: its own (cmd/kueue/main.go, v0.19.2: a fixed path, the Deployment's Secret volume).
KUEUE_METRICS_CERTS = "/etc/kueue/metrics/certs"


def with_mounts(mounts: dict[str, Path], argv: list[str | Path]) -> list[str | Path]:
    """ARGV run where each of MOUNTS' paths shows its directory, as a pod's volume mounts
    do, without touching the machine's own /etc: bubblewrap gives the process a private
    /etc (the machine's entries bound back read-only) to mount them in."""
    view: list[str | Path] = ["bwrap", "--die-with-parent", "--dev-bind", "/", "/"]
    view += ["--tmpfs", "/etc"]
    for entry in sorted(Path("/etc").iterdir()):
        if entry.is_symlink():
            view += ["--symlink", str(entry.readlink()), str(entry)]
        else:
            view += ["--ro-bind", str(entry), str(entry)]
    for inside, outside in mounts.items():
        view += ["--ro-bind", str(outside), inside]
    return [*view, "--", *argv]


def start_kueue(cluster: Cluster) -> None:
    root = cluster.root / "kueue"
    ca = serving_certificate(root / "certs")
    webhook_port = free_port()
    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "namespace": "kueue-system",
        "health": {"healthProbeBindAddress": f"127.0.0.1:{free_port()}"},
        "metrics": {"bindAddress": f"127.0.0.1:{free_port()}"},
        "webhook": {"host": "127.0.0.1", "port": webhook_port, "certDir": str(root / "certs")},
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "visibilityServer": {"bindAddress": "127.0.0.1", "bindPort": free_port()},
        "managedJobsNamespaceSelector": KUEUE_MANAGED_NAMESPACES,
        "integrations": {"frameworks": KUEUE_FRAMEWORKS},
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    cluster.kubectl("create", "namespace", "kueue-system")
    process = cluster.spawn(
        "kueue",
        with_mounts(
            {KUEUE_METRICS_CERTS: root / "certs"},
            [
                cluster.parts.kueue / "bin" / "kueue",
                f"--config={root / 'config.yaml'}",
                # The pending-workloads visibility API is an aggregated API server of its
                # own (certificates at a fixed /visibility); the stacks never call it.
                "--feature-gates=VisibilityOnDemand=false",
            ],
        ),
        env={"KUBECONFIG": str(cluster.kubeconfig_path)},
    )
    cluster.wait_until_serving(process, webhook_port)
    hooks = _webhooks_at(
        cluster.parts.kueue / "manifests" / "manifests.yaml",
        webhook_port,
        ca,
        "kueue",
        _kueue_keeps,
    )
    cluster.apply_objects(hooks)


def start_jobset(cluster: Cluster) -> None:
    root = cluster.root / "jobset"
    ca = serving_certificate(root / "certs")
    webhook_port = free_port()
    config = {
        "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": f"127.0.0.1:{free_port()}"},
        "metrics": {"bindAddress": f"127.0.0.1:{free_port()}"},
        "webhook": {"host": "127.0.0.1", "port": webhook_port, "certDir": str(root / "certs")},
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    process = cluster.spawn(
        "jobset",
        [cluster.parts.jobset / "bin" / "jobset", f"--config={root / 'config.yaml'}"],
        env={"KUBECONFIG": str(cluster.kubeconfig_path)},
    )
    cluster.wait_until_serving(process, webhook_port)
    hooks = _webhooks_at(
        cluster.parts.jobset / "manifests" / "manifests.yaml",
        webhook_port,
        ca,
        "jobset",
        lambda _: True,
    )
    cluster.apply_objects(hooks)

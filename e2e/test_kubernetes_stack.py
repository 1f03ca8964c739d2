"""stacks/kubernetes through the real Pulumi CLI and Kubernetes provider, on a real API
server: `up`, what the cluster then holds and refuses, a second `up`, then `destroy`.

The tests run in file order on one deployment (the last one destroys it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pulumi import automation as auto

from e2e._cluster import Cluster
from e2e._pulumi import REPO, open_stack

STACK_DIR = REPO / "stacks" / "kubernetes"
TRAIN, SERVE = "vision-train", "vision-serve"
NAMESPACES = [f"/api/v1/namespaces/{TRAIN}", f"/api/v1/namespaces/{SERVE}"]


def _log(line: str) -> None:
    print(line, end="" if line.endswith("\n") else "\n", file=sys.stderr)


@pytest.fixture(scope="module")
def stack(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> auto.Stack:
    return open_stack(STACK_DIR, cluster, tmp_path_factory.mktemp("kubernetes-state"))


@pytest.fixture(scope="module")
def first_up(stack: auto.Stack) -> auto.UpResult:
    return stack.up(on_output=_log, color="never")


def _deployed(stack: auto.Stack) -> list[dict[str, Any]]:
    resources = stack.export_stack().deployment.get("resources") or []
    return [
        r
        for r in resources
        if r["type"] != "pulumi:pulumi:Stack" and not r["type"].startswith("pulumi:providers:")
    ]


def _planned() -> Counter[str]:
    """What the offline preview (`aistack preview`) plans for the same stack file."""
    out = subprocess.run(  # noqa: S603
        [Path(sys.executable).parent / "aistack", "preview", STACK_DIR, "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    return Counter(r["type"] for r in json.loads(out)["resources"])


def _kubectl_kind(type_token: str) -> str:
    """`kubernetes:apps/v1:Deployment` as kubectl names it: Deployment.v1.apps."""
    _, api_version, kind = type_token.split(":")
    group, _, version = api_version.rpartition("/")
    return kind if group in ("", "core") else f"{kind}.{version}.{group}"


def test_up_creates_what_the_offline_preview_plans(
    first_up: auto.UpResult, stack: auto.Stack
) -> None:
    assert first_up.summary.result == "succeeded"
    assert Counter(r["type"] for r in _deployed(stack)) == _planned()


def test_the_api_server_holds_every_object(
    first_up: auto.UpResult, stack: auto.Stack, cluster: Cluster
) -> None:
    missing = []
    for resource in _deployed(stack):
        if not resource["type"].startswith("kubernetes:"):
            continue
        metadata = resource["outputs"]["metadata"]
        namespace = ["--namespace", metadata["namespace"]] if metadata.get("namespace") else []
        found = cluster.kubectl(
            "get",
            _kubectl_kind(resource["type"]),
            metadata["name"],
            *namespace,
            "-o",
            "json",
            check=False,
        )
        if found.returncode != 0 or json.loads(found.stdout)["metadata"]["uid"] != metadata["uid"]:
            missing.append(f"{resource['type']} {metadata['name']}: {found.stderr.strip()}")
    assert missing == []


def test_every_served_version_rolls_out_on_the_serving_pool(
    first_up: auto.UpResult, cluster: Cluster
) -> None:
    deployments = cluster.get_json(f"/apis/apps/v1/namespaces/{SERVE}/deployments")["items"]
    assert len(deployments) == 2
    for deployment in deployments:
        status = deployment["status"]
        assert status.get("availableReplicas") == deployment["spec"]["replicas"], status
    pods = cluster.get_json(f"/api/v1/namespaces/{SERVE}/pods")["items"]
    assert pods and {p["status"]["phase"] for p in pods} == {"Running"}
    assert {p["spec"]["nodeName"].rsplit("-", 1)[0] for p in pods} == {"gke-l4-serve"}


def test_the_serving_quota_holds_the_rollout(first_up: auto.UpResult, cluster: Cluster) -> None:
    for quota in cluster.get_json(f"/api/v1/namespaces/{SERVE}/resourcequotas")["items"]:
        hard, used = quota["status"]["hard"], quota["status"]["used"]
        assert set(used) == set(hard)


def _refusal(cluster: Cluster, pod: dict[str, Any]) -> str:
    created = cluster.kubectl(
        "create", "--dry-run=server", "-f", "-", stdin=json.dumps(pod), check=False
    )
    assert created.returncode != 0, f"admitted: {created.stdout}"
    return created.stderr


def _pod(namespace: str, image: str, security: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "intruder", "namespace": namespace},
        "spec": {
            "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "shell", "image": image, "securityContext": security}],
        },
    }


RESTRICTED = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsUser": 1000,
}
PINNED = "registry.example.com/tools/shell@sha256:" + "0" * 64


def test_a_privileged_pod_is_refused_by_pod_security(
    first_up: auto.UpResult, cluster: Cluster
) -> None:
    # Privileged implies privilege escalation; the API's own validation refuses the pair
    # before admission would see it.
    privileged = {**RESTRICTED, "privileged": True, "allowPrivilegeEscalation": True}
    refusal = _refusal(cluster, _pod(TRAIN, PINNED, privileged))
    # At the version TeamNamespace pins (enforce-version), not whatever the server runs.
    labels = cluster.get_json(f"/api/v1/namespaces/{TRAIN}")["metadata"]["labels"]
    version = labels["pod-security.kubernetes.io/enforce-version"]
    assert f'violates PodSecurity "restricted:{version}"' in refusal, refusal
    assert "privileged" in refusal, refusal


def test_an_unpinned_image_is_refused_by_the_image_policy(
    first_up: auto.UpResult, cluster: Cluster
) -> None:
    refusal = _refusal(cluster, _pod(TRAIN, "registry.example.com/tools/shell:latest", RESTRICTED))
    unpinned = "Pod: container shell (registry.example.com/tools/shell:latest) has no image digest"
    assert f"{unpinned} (checklist E1)" in refusal, refusal
    assert "image-policy-pods" in refusal, refusal


def test_a_pinned_restricted_pod_is_admitted(first_up: auto.UpResult, cluster: Cluster) -> None:
    """The refusals above are the policies', not a namespace that refuses everything."""
    admitted = cluster.kubectl(
        "create",
        "--dry-run=server",
        "-f",
        "-",
        stdin=json.dumps(_pod(TRAIN, PINNED, RESTRICTED)),
        check=False,
    )
    assert admitted.returncode == 0, admitted.stderr


def _git_checkout(directory: Path) -> Path:
    """A training code checkout, as the submit command is run from one."""
    directory.mkdir()
    (directory / "config.yaml").write_text("learning_rate: 0.0003\n")
    for command in (
        ["init", "--quiet"],
        ["add", "config.yaml"],
        ["-c", "user.email=e2e@example.com", "-c", "user.name=e2e", "commit", "--quiet", "-m", "c"],
    ):
        subprocess.run(["git", *command], cwd=directory, check=True, timeout=30)  # noqa: S603, S607
    return directory


def _workloads(cluster: Cluster) -> list[dict[str, Any]]:
    return list(
        cluster.get_json(f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{TRAIN}/workloads")["items"]
    )


def test_a_submitted_run_is_admitted_by_kueue_onto_the_spot_flavor(
    first_up: auto.UpResult, cluster: Cluster, tmp_path: Path
) -> None:
    """The stack's own submit command, run from a checkout: Kueue admits the JobSet onto
    the training flavor and injects its node labels and tolerations, so its pods reach
    Running on the Spot GPU nodes (the template names no node at all)."""
    submitted = subprocess.run(  # noqa: S603
        ["bash", "-c", first_up.outputs["submitCommand"].value],
        cwd=_git_checkout(tmp_path / "code"),
        env={
            **os.environ,
            "PATH": cluster.parts.path,
            "KUBECONFIG": str(cluster.kubeconfig_path),
            "RUN_ID": "run-1",
            "SEED": "7",
        },  # fmt: skip
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert submitted.returncode == 0, submitted.stderr
    cluster.wait_for(
        "the run's workload admitted",
        lambda: any(w.get("status", {}).get("admission") for w in _workloads(cluster)),
    )
    (workload,) = _workloads(cluster)
    flavors = {
        flavor
        for assignment in workload["status"]["admission"]["podSetAssignments"]
        for flavor in assignment["flavors"].values()
    }
    assert flavors == {"l4-spot-spot"}

    def ran() -> list[dict[str, Any]]:
        # kwok runs a Job's pods to completion at once: Running, then Succeeded.
        pods = cluster.get_json(f"/api/v1/namespaces/{TRAIN}/pods")["items"]
        return [p for p in pods if p["status"].get("phase") in ("Running", "Succeeded")]

    cluster.wait_for(
        "the run's two pods ran", lambda: len(ran()) == 2, explain=lambda: cluster.describe(TRAIN)
    )
    assert {p["spec"]["nodeName"].rsplit("-", 1)[0] for p in ran()} == {"gke-l4-spot"}


def test_a_second_up_changes_nothing(first_up: auto.UpResult, stack: auto.Stack) -> None:
    again = stack.up(on_output=_log, color="never", diff=True)
    changes = dict(again.summary.resource_changes or {})
    assert set(changes) == {"same"}, changes


def _uid(cluster: Cluster, path: str) -> str:
    return str(cluster.get_json(path)["metadata"]["uid"])


def test_destroy_keeps_the_namespaces_and_removes_the_rest(
    first_up: auto.UpResult, stack: auto.Stack, cluster: Cluster
) -> None:
    """The team namespaces hold runs, volumes and checkpoints: without allow_destroy they
    outlive the stack (retainOnDelete), live and not terminating. Everything else goes."""
    kept = {path: _uid(cluster, path) for path in NAMESPACES}
    stack.destroy(on_output=_log, color="never")
    assert _deployed(stack) == []
    for path, uid in kept.items():
        namespace = cluster.get_json(path)
        assert namespace["metadata"]["uid"] == uid, path
        assert namespace["status"]["phase"] == "Active", path
    for path in (
        "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/vision-gpu",
        "/apis/scheduling.k8s.io/v1/priorityclasses/vision-gpu-serving",
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/image-policy-pods",
    ):
        assert not cluster.exists(path), path
    for collection in (
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
        f"/api/v1/namespaces/{SERVE}/resourcequotas",
        f"/apis/apps/v1/namespaces/{SERVE}/deployments",
    ):
        assert cluster.get_json(collection)["items"] == [], collection


def test_up_after_destroy_adopts_the_kept_namespaces(
    first_up: auto.UpResult, stack: auto.Stack, cluster: Cluster
) -> None:
    """`destroy` then `up`: the provider's server-side apply takes the retained namespaces
    back (same uid, so their runs and volumes with them) and recreates the rest."""
    kept = {path: _uid(cluster, path) for path in NAMESPACES}
    again = stack.up(on_output=_log, color="never")
    assert dict(again.summary.resource_changes or {}).keys() == {"create"}
    assert {path: _uid(cluster, path) for path in NAMESPACES} == kept
    assert cluster.exists("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/vision-gpu")

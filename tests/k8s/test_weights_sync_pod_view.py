"""The serving pods' weights sync, run as the pod runs it: the model-sync init container's
own command (`aws s3 sync`), in its pod's filesystem view (tests/_harness/pod_view.py: the
read-only root, /tmp and the model emptyDir at their mount paths, the pod's UID), against a
stand-in bucket (moto's S3 server on loopback). The weights must land where the runtime
reads them. The AWS CLI and moto come locked on their own (tools/s3-standin); `make test`
installs them. gcloud, which the gs:// sync runs, is not installable offline: not run here.

What stands in for the cluster: the endpoint (AWS_ENDPOINT_URL_S3, where the pod reaches S3
through its VPC endpoint) and static credentials (where EKS Pod Identity's agent hands the
SDK the role's)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import boto3
import pytest

from aistack.queries.k8s import builtin_manifests
from tests._harness import previews
from tests._harness.pod_view import BWRAP_MISSING, PodView, find_bwrap

ROOT = Path(__file__).resolve().parents[2]
STANDIN = ROOT / "tools" / "s3-standin" / ".venv"
MISSING = "the weights-sync tests need tools/s3-standin: run `make test`, which syncs it"
FILES = {
    "config.json": b'{"architectures": ["LlamaForCausalLM"]}',
    "model.safetensors": b"\0" * 4096,
}

pytestmark = pytest.mark.xdist_group("k8s-pod-view")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def s3():
    """moto's S3 server on 127.0.0.1, stopped when the module ends, whatever happens."""
    if find_bwrap() is None:
        pytest.fail(BWRAP_MISSING)
    if not (STANDIN / "bin" / "aws").exists():
        pytest.fail(MISSING)
    port = _free_port()
    server = subprocess.Popen(
        [str(STANDIN / "bin" / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("moto's S3 server did not start")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def _sync_pods(stack: str):
    graph = previews.run_project(ROOT / stack)
    for _, document in builtin_manifests(graph):
        if document["kind"] != "Deployment":
            continue
        pod = document["spec"]["template"]["spec"]
        for container in pod.get("initContainers") or []:
            if container["name"] == "model-sync":
                yield document["metadata"]["name"], pod, container


def _seed(endpoint: str, uri: str) -> None:
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="standin",
        aws_secret_access_key="standin",
    )
    if bucket not in {b["Name"] for b in client.list_buckets().get("Buckets", [])}:
        client.create_bucket(Bucket=bucket)
    for name, body in FILES.items():
        client.put_object(Bucket=bucket, Key=f"{prefix.rstrip('/')}/{name}", Body=body)


def test_every_weights_sync_fills_the_model_volume_in_the_pods_view(s3, tmp_path):
    # Each serving version's pod in turn: the preview is not run at collection time.
    pods = list(_sync_pods("stacks/kubernetes-eks"))
    assert len(pods) >= 2
    for name, pod, sync in pods:
        (tmp_path / name).mkdir()
        _fills_the_model_volume(s3, pod, sync, tmp_path / name)


def _fills_the_model_volume(s3, pod, sync, tmp_path):
    [source] = [word for word in sync["command"] if word.startswith("s3://")]
    _seed(s3, source)
    target = sync["command"][-1]
    view = PodView(pod, "model-sync", {}, tmp_path)
    assert view.read_only_root() and view.ids()[0] != 0
    base = Path(sys.base_prefix)
    done = view.run(
        # The container's own command, then what it left in the model volume.
        ["/bin/sh", "-c", '"$@" && cd "$0" && find . -type f | sort', target, *sync["command"]],
        timeout_s=60,
        programs=(STANDIN, base),
        env={
            "AWS_ENDPOINT_URL_S3": s3,
            "AWS_ACCESS_KEY_ID": "standin",
            "AWS_SECRET_ACCESS_KEY": "standin",
            "AWS_DEFAULT_REGION": "us-east-1",
        },
        share_net=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == sorted(f"./{name}" for name in FILES)
    # Where the runtime container reads the weights from: the same volume, read-only.
    runtime = next(c for c in pod["containers"] if c["name"] == "runtime")
    mounts = {m["mountPath"]: m for m in runtime["volumeMounts"]}
    assert mounts[target]["readOnly"] is True


def test_a_read_only_model_volume_fails_the_sync_as_it_would_in_the_pod(s3, tmp_path):
    """The harness sees what the pod sees: with the model volume mounted read-only in the
    init container, as the runtime mounts it, the copy fails."""
    name, pod, sync = next(_sync_pods("stacks/kubernetes-eks"))
    [source] = [word for word in sync["command"] if word.startswith("s3://")]
    _seed(s3, source)
    target = sync["command"][-1]
    mounts = [
        {**m, "readOnly": True} if m["mountPath"] == target else m for m in sync["volumeMounts"]
    ]
    pod = {**pod, "initContainers": [{**sync, "volumeMounts": mounts}]}
    done = PodView(pod, "model-sync", {}, tmp_path).run(
        sync["command"],
        timeout_s=60,
        programs=(STANDIN, Path(sys.base_prefix)),
        env={
            "AWS_ENDPOINT_URL_S3": s3,
            "AWS_ACCESS_KEY_ID": "standin",
            "AWS_SECRET_ACCESS_KEY": "standin",
            "AWS_DEFAULT_REGION": "us-east-1",
        },
        share_net=True,
    )
    assert done.returncode != 0
    assert "Read-only file system" in done.stderr + done.stdout

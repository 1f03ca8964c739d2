"""Every gateway sidecar of every Kubernetes example stack, run by real nginx in its pod's
filesystem view (tests/_harness/pod_view.py): each volume at its mount path, emptyDirs
empty, the root read-only, as the pod's UID and GID. `nginx -t` passes, the readiness probe
answers, and one request reaches the model through it. Schema-valid is not enough: an
nginx whose temp directory is not in its emptyDir never starts
(../shared/research/k8s-fidelity-audit.md, defect 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aistack.gateway.local import NGINX_MISSING, find_nginx
from aistack.queries.k8s import builtin_manifests
from tests._harness import previews
from tests._harness.pod_view import BWRAP_MISSING, PodView, find_bwrap

STACKS = ["stacks/kubernetes", "stacks/kubernetes-eks", "stacks/kubernetes-gke"]
DRIVER = (Path(__file__).parents[1] / "_harness" / "gateway_driver.py").read_text()

pytestmark = pytest.mark.xdist_group("k8s-pod-view")


def _gateways(stack: str):
    graph = previews.run_project(previews.ROOT / stack)
    objects = [document for _, document in builtin_manifests(graph)]
    maps = {o["metadata"]["name"]: o.get("data") or {} for o in objects if o["kind"] == "ConfigMap"}
    for deployment in (o for o in objects if o["kind"] == "Deployment"):
        pod = deployment["spec"]["template"]["spec"]
        if any(c["name"] == "gateway" for c in pod["containers"]):
            namespace = deployment["metadata"].get("namespace")
            services = [
                o["metadata"]["name"]
                for o in objects
                if o["kind"] == "Service" and o["metadata"].get("namespace") == namespace
            ]
            yield deployment, pod, maps, namespace, services


def _dns_names(services: list[str], namespace: str) -> list[str]:
    suffixes = ["", f".{namespace}", f".{namespace}.svc", f".{namespace}.svc.cluster.local"]
    return [f"{name}{suffix}" for name in services for suffix in suffixes]


@pytest.fixture(scope="module", autouse=True)
def _tools():
    if find_bwrap() is None:
        pytest.fail(BWRAP_MISSING)
    if find_nginx() is None:
        pytest.fail(NGINX_MISSING)


# By stack, each of its gateways in turn: the previews are not run at collection time.
@pytest.mark.parametrize("stack", STACKS)
def test_every_gateway_starts_and_serves_in_its_pods_filesystem(stack, tmp_path):
    gateways = list(_gateways(stack))
    assert gateways
    for case in gateways:
        _starts_and_serves(*case, tmp_path / case[0]["metadata"]["name"])


def _starts_and_serves(deployment, pod, maps, namespace, services, tmp_path):
    tmp_path.mkdir()
    view = PodView(pod, "gateway", maps, tmp_path, _dns_names(services, namespace))
    gateway = view.container
    assert gateway["securityContext"]["readOnlyRootFilesystem"] is True
    ports = {p["name"]: p["containerPort"] for p in gateway["ports"]}
    probe = gateway["readinessProbe"]["httpGet"]
    [runtime] = [c for c in pod["containers"] if c["name"] != "gateway"]
    model = deployment["spec"]["template"]["metadata"]["labels"]["aistack.dev/model-name"]
    result = view.drive(
        DRIVER,
        {
            "command": gateway["command"],
            "port": ports[probe["port"]] if isinstance(probe["port"], str) else probe["port"],
            "probe_path": probe["path"],
            "runtime_port": runtime["ports"][0]["containerPort"],
            "request_path": "/v1/completions",
            "model": model,
        },
    )
    assert result["test_rc"] == 0, result["test_output"]
    assert result["ready"], result.get("server_output")
    assert result["status"] == 200, result.get("server_output")
    assert result["reached_model"]


def test_a_temp_directory_outside_its_volume_fails_in_the_view(tmp_path):
    """The harness sees the audit's defect: mount the temp volume one level above the
    directory nginx writes to and `nginx -t` fails, as it would in the pod."""
    stack = STACKS[0]
    deployment, pod, maps, namespace, services = next(_gateways(stack))
    gateway = next(c for c in pod["containers"] if c["name"] == "gateway")
    conf_map = next(
        v["configMap"]["name"]
        for v in pod["volumes"]
        if "configMap" in v and any(m["name"] == v["name"] for m in gateway["volumeMounts"])
    )
    conf = maps[conf_map]["nginx.conf"]
    temp_mount = next(m for m in gateway["volumeMounts"] if m["name"] == "gateway-tmp")
    broken = conf.replace(f"{temp_mount['mountPath']}/", f"{temp_mount['mountPath']}/tmp/")
    assert broken != conf
    view = PodView(
        pod,
        "gateway",
        {**maps, conf_map: {"nginx.conf": broken}},
        tmp_path,
        _dns_names(services, namespace),
    )
    done = view.run([*gateway["command"], "-t"])
    assert done.returncode != 0
    assert "No such file or directory" in done.stderr

"""A Kubernetes cluster of the real programs, on loopback, in a temporary directory.

etcd, kube-apiserver, kube-controller-manager and kube-scheduler as Kubernetes runs them,
and kwok in the kubelets' place: its nodes become Ready and the pods bound to them Running
and Ready, so the API server's admission (Pod Security, quotas, ValidatingAdmissionPolicy,
CRD schemas and CEL), the controllers and the scheduler all do their real work, and only
the containers are not run. Every process listens on 127.0.0.1, is started in a session of
its own and is stopped by `stop()` (SIGTERM, then SIGKILL), whatever happened.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from e2e._parts import Parts

#: How long a program may take to answer its health check after it starts.
START_SECONDS = 90
ADMIN_TOKEN = "aistack-e2e-admin"
SERVICE_CIDR = "10.96.0.0/16"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def stop(self) -> None:
        if self.popen.poll() is not None:
            return
        os.killpg(self.popen.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=15)


@dataclass
class Cluster:
    parts: Parts
    root: Path
    processes: list[Process] = field(default_factory=list)
    api_port: int = 0

    # -- starting --------------------------------------------------------------------

    def start(self) -> None:
        """etcd, the API server, the controller manager, the scheduler and kwok, each
        waited for before the next one starts."""
        try:
            self._keys()
            etcd_url = self._etcd()
            self._api_server(etcd_url)
            self._write_kubeconfig()
            self._controller_manager()
            self._scheduler()
            self._kwok()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.stop()
        self.processes.clear()

    def spawn(
        self, name: str, argv: Sequence[str | Path], env: dict[str, str] | None = None
    ) -> Process:
        log = self.root / f"{name}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(  # noqa: S603 - our own built binaries
                [str(arg) for arg in argv],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                cwd=self.root,
                env={**os.environ, **(env or {})},
            )
        process = Process(name, popen, log)
        self.processes.append(process)
        return process

    def _wait(self, process: Process, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if process.popen.poll() is not None:
                raise RuntimeError(f"{process.name} exited:\n{process.tail()}")
            try:
                if ready():
                    return
            except (OSError, urllib.error.URLError, ssl.SSLError):
                pass
            time.sleep(0.5)
        raise RuntimeError(f"{process.name} not ready in {START_SECONDS} s:\n{process.tail()}")

    def _keys(self) -> None:
        """The service account signing key (kube-apiserver signs the pods' tokens with it,
        the controller manager the legacy ones), and the admin's token."""
        pki = self.root / "pki"
        pki.mkdir()
        subprocess.run(  # noqa: S603
            ["openssl", "genrsa", "-out", str(pki / "sa.key"), "2048"],
            check=True,
            capture_output=True,
        )
        subprocess.run(  # noqa: S603
            ["openssl", "rsa", "-in", str(pki / "sa.key"), "-pubout", "-out", str(pki / "sa.pub")],
            check=True,
            capture_output=True,
        )
        (pki / "tokens.csv").write_text(f'{ADMIN_TOKEN},admin,admin,"system:masters"\n')

    def _etcd(self) -> str:
        client, peer = free_port(), free_port()
        process = self.spawn(
            "etcd",
            [
                self.parts.etcd / "bin" / "etcd",
                "--name=e2e",
                f"--data-dir={self.root / 'etcd'}",
                f"--listen-client-urls=http://127.0.0.1:{client}",
                f"--advertise-client-urls=http://127.0.0.1:{client}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster=e2e=http://127.0.0.1:{peer}",
                # A throwaway store: fsync would only make the tests slower.
                "--unsafe-no-fsync",
            ],
        )
        url = f"http://127.0.0.1:{client}"
        self._wait(process, lambda: _get_json(f"{url}/health").get("health") == "true")
        return url

    def _api_server(self, etcd_url: str) -> None:
        pki = self.root / "pki"
        self.api_port = free_port()
        process = self.spawn(
            "kube-apiserver",
            [
                self.parts.kubernetes / "bin" / "kube-apiserver",
                f"--etcd-servers={etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.api_port}",
                # A self-signed serving certificate for 127.0.0.1 and its CA, written here.
                f"--cert-dir={pki}",
                f"--token-auth-file={pki / 'tokens.csv'}",
                "--authorization-mode=Node,RBAC",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={pki / 'sa.pub'}",
                f"--service-account-signing-key-file={pki / 'sa.key'}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--profiling=false",
                # As GKE and EKS run it: privileged pods exist for system daemons (the
                # GPU device plugin), so refusing them is Pod Security's job, which is
                # what the tests prove, not the API server's blanket default.
                "--allow-privileged=true",
            ],
        )
        self._wait(process, lambda: self.get_raw("/readyz") == b"ok")

    @property
    def ca_file(self) -> Path:
        # kube-apiserver --cert-dir writes the serving certificate, then its CA, in one file.
        return self.root / "pki" / "apiserver.crt"

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.api_port}"

    @property
    def kubeconfig_path(self) -> Path:
        return self.root / "kubeconfig"

    def kubeconfig(self, context: str = "e2e") -> str:
        return json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "e2e",
                        "cluster": {
                            "server": self.server,
                            "certificate-authority": str(self.ca_file),
                        },
                    }
                ],
                "users": [{"name": "admin", "user": {"token": ADMIN_TOKEN}}],
                "contexts": [{"name": context, "context": {"cluster": "e2e", "user": "admin"}}],
                "current-context": context,
            }
        )

    def _write_kubeconfig(self) -> None:
        self.kubeconfig_path.write_text(self.kubeconfig())

    def _controller_manager(self) -> None:
        pki = self.root / "pki"
        process = self.spawn(
            "kube-controller-manager",
            [
                self.parts.kubernetes / "bin" / "kube-controller-manager",
                f"--kubeconfig={self.kubeconfig_path}",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                "--leader-elect=false",
                f"--service-account-private-key-file={pki / 'sa.key'}",
                f"--root-ca-file={self.ca_file}",
                "--use-service-account-credentials=false",
            ],
        )
        # Ready once it has made the default namespace's ServiceAccount.
        self._wait(
            process,
            lambda: bool(self.get_json("/api/v1/namespaces/default/serviceaccounts/default")),
        )

    def _scheduler(self) -> None:
        process = self.spawn(
            "kube-scheduler",
            [
                self.parts.kubernetes / "bin" / "kube-scheduler",
                f"--kubeconfig={self.kubeconfig_path}",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                "--leader-elect=false",
            ],
        )
        self._wait(process, lambda: "Starting Kubernetes Scheduler" in process.log.read_text())

    def _kwok(self) -> None:
        process = self.spawn(
            "kwok",
            [
                self.parts.kwok / "bin" / "kwok",
                f"--kubeconfig={self.kubeconfig_path}",
                f"--config={self.parts.kwok / 'stages.yaml'}",
                # Only the nodes this harness adds (nodes.py), never another kubelet's.
                "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
                "--cidr=10.244.0.0/16",
                "--node-ip=127.0.0.1",
                # The Lease each node renews (the heartbeat stage), as kubelets do; 40 s
                # as kubelet's nodeLeaseDurationSeconds default.
                "--node-lease-duration-seconds=40",
                f"--server-address=127.0.0.1:{free_port()}",
            ],
        )
        self._wait(
            process,
            lambda: "Starting" in process.log.read_text() or "Watching" in process.log.read_text(),
        )

    def wait_until_serving(self, process: Process, port: int) -> None:
        """Until PROCESS accepts TLS connections on 127.0.0.1:PORT (its webhook server)."""

        def accepts() -> bool:
            with socket.create_connection(("127.0.0.1", port), timeout=2):
                return True

        self._wait(process, accepts)

    # -- talking to it ---------------------------------------------------------------

    def _request(
        self,
        path: str,
        method: str = "GET",
        body: Any = None,
        content_type: str = "application/json",
    ) -> bytes:
        context = ssl.create_default_context(cafile=str(self.ca_file))
        data = (
            None
            if body is None
            else (body if isinstance(body, bytes) else json.dumps(body).encode())
        )
        request = urllib.request.Request(  # noqa: S310 - https on loopback
            f"{self.server}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": content_type},
        )
        with urllib.request.urlopen(request, context=context, timeout=30) as response:  # noqa: S310
            return bytes(response.read())

    def get_raw(self, path: str) -> bytes:
        return self._request(path)

    def get_json(self, path: str) -> dict[str, Any]:
        return dict(json.loads(self._request(path)))

    def exists(self, path: str) -> bool:
        try:
            self._request(path)
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return False
            raise
        return True

    def kubectl(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(  # noqa: S603
            [
                str(self.parts.kubernetes / "bin" / "kubectl"),
                f"--kubeconfig={self.kubeconfig_path}",
                *args,
            ],
            input=stdin,
            capture_output=True,
            text=True,
            check=check,
            timeout=120,
        )

    def apply(self, manifests: Iterator[Path] | Sequence[Path]) -> None:
        """Server-side apply, as a platform team installs CRDs."""
        for manifest in manifests:
            self.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(manifest))

    def apply_objects(self, objects: Sequence[dict[str, Any]]) -> None:
        listed = {"apiVersion": "v1", "kind": "List", "items": list(objects)}
        self.kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(listed))

    def wait_for(
        self,
        what: str,
        check: Callable[[], bool],
        seconds: float = 120,
        explain: Callable[[], str] | None = None,
    ) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if check():
                return
            time.sleep(1)
        logs = "\n".join(f"--- {p.name}\n{p.tail(10)}" for p in self.processes)
        state = explain() if explain else ""
        raise AssertionError(f"{what}: not within {seconds} s\n{state}\n{logs}")

    def describe(self, namespace: str) -> str:
        """What a person would look at first: the namespace's workloads and its events."""
        listed = self.kubectl(
            *("--namespace", namespace, "get", "jobsets,jobs,pods,workloads", "-o", "wide"),
            check=False,
        )
        events = self.kubectl(
            "--namespace", namespace, "get", "events", "--sort-by=.lastTimestamp", check=False
        )
        return f"{listed.stdout}{listed.stderr}\n{events.stdout}{events.stderr}"


def _get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
        return dict(json.loads(response.read()))

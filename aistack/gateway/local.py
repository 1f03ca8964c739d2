"""Run the gateway on this machine: a real nginx with the rendered config, unprivileged.

For local development, the tests and the benchmark:

    with FakeModelServer() as model, LocalGateway(upstream=model.address) as gateway:
        status, headers, body = gateway.post("/v1/completions", {"prompt": "hi"})

`LocalGateway` puts every file nginx writes in a fresh temporary directory, listens on a
free loopback port and stops nginx on exit. `FakeModelServer` is a tiny OpenAI-style
server that counts requests and how many it handles at once.
"""

from __future__ import annotations

import contextlib
import getpass
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from aistack.errors import AistackError
from aistack.gateway.config import GatewayConfig
from aistack.gateway.nginx import render_nginx_conf, required_directories

__all__ = [
    "FakeModelServer",
    "LocalGateway",
    "NginxNotFound",
    "Response",
    "find_nginx",
    "free_port",
    "http_request",
]

NGINX_MISSING = (
    "nginx is not installed: the gateway tests and benchmark run a real nginx. "
    "`make test` installs it when missing (Debian/Ubuntu: `apt-get install nginx-light`)."
)


class NginxNotFound(AistackError, RuntimeError):
    """No nginx binary on PATH or at /usr/sbin/nginx."""


def find_nginx() -> str | None:
    """Path of the nginx binary, or None."""
    found = shutil.which("nginx")
    if found:
        return found
    for candidate in ("/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


Response = tuple[int, dict[str, str], bytes]


def http_request(
    port: int,
    method: str,
    path: str,
    body: bytes | Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    *,
    timeout: float = 5.0,
) -> Response:
    """One HTTP/1.1 request to 127.0.0.1:port; (status, lower-cased headers, body)."""
    if body is not None and not isinstance(body, bytes):
        body = json.dumps(body).encode()
    send = {"Content-Type": "application/json"} if body is not None else {}
    send.update(headers or {})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=send)
        response = conn.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        conn.close()


class _ModelHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out as separate writes: without TCP_NODELAY, Nagle and delayed
    # ACKs add 40 ms to every keepalive answer.
    disable_nagle_algorithm = True
    server: _ModelHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:
        if self.path.startswith("/v1/models"):
            self._send(200, {"object": "list", "data": [{"id": self.server.owner.name}]})
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            request = json.loads(raw or b"{}")
        except ValueError:
            request = {}
        if not isinstance(request, dict):
            request = {}
        owner = self.server.owner
        number = owner._enter()
        try:
            delay = float(request.get("sleep", owner.delay))
            status = owner.status
            if request.get("stream"):
                # `finally` below counts this request out; leaving here too would make
                # in_flight negative and hide a broken concurrency cap.
                self._stream(request, number, delay)
                return
            time.sleep(delay)
        finally:
            owner._leave()
        prompt = request.get("prompt", request.get("messages", ""))
        self._send(
            status,
            {
                "id": f"cmpl-{owner.name}-{number}",
                "object": "text_completion",
                "model": owner.name,
                "served_by": owner.name,
                "request_number": number,
                "body_bytes": len(raw),
                "choices": [{"index": 0, "text": f"echo: {prompt}"[:200]}],
            },
        )

    def _stream(self, request: dict[str, Any], number: int, delay: float) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for index in range(int(request.get("chunks", 3))):
            event = {"id": f"cmpl-{number}", "index": index, "sent_at": time.time()}
            data = f"data: {json.dumps(event)}\n\n".encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
            time.sleep(delay)
        data = b"data: [DONE]\n\n"
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n")
        self.wfile.flush()

    def _send(self, status: int, payload: Mapping[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _ModelHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    owner: FakeModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # nginx closing an idle keepalive connection is not an error worth printing.
        pass


class FakeModelServer:
    """An OpenAI-style model server on 127.0.0.1 that counts what reaches it.

    POST answers echo the prompt after `delay` seconds with HTTP `status` (a request's
    JSON body may override the delay with "sleep", and ask for an SSE stream with
    "stream": true). `requests` is how many POSTs arrived, `max_in_flight` the most it
    worked on at the same time.
    """

    def __init__(
        self, name: str = "model", *, delay: float = 0.0, status: int = 200, port: int = 0
    ) -> None:
        self.name = name
        self.delay = delay
        self.status = status
        self._lock = threading.Lock()
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._server = _ModelHTTPServer(("127.0.0.1", port), _ModelHandler)
        self._server.owner = self
        self.port = int(self._server.server_address[1])
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _enter(self) -> int:
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self.requests

    def _leave(self) -> None:
        # Called once the answer is computed, before it is written: the server counts as
        # busy with a request only while it works on it.
        with self._lock:
            self.in_flight -= 1

    def reset(self) -> None:
        with self._lock:
            self.requests = 0
            self.max_in_flight = self.in_flight

    def start(self) -> FakeModelServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LocalGateway:
    """nginx running `render_nginx_conf` of a local config, unprivileged, in a temp dir.

    Keyword arguments are `GatewayConfig` fields; paths, listen address and port default
    to a fresh temporary directory and a free loopback port.
    """

    def __init__(self, workdir: str | Path | None = None, **settings: Any) -> None:
        nginx = find_nginx()
        if nginx is None:
            raise NginxNotFound(NGINX_MISSING)
        self.nginx = nginx
        self._own_workdir = workdir is None
        # Short: the unix socket paths below it must fit in 107 bytes.
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="aistack-gw-"))
        defaults: dict[str, Any] = {
            "listen_address": "127.0.0.1",
            "listen_port": free_port(),
            "run_dir": str(self.workdir / "run"),
            "temp_dir": str(self.workdir / "tmp"),
            "cache_dir": str(self.workdir / "cache"),
            "log_dir": str(self.workdir / "log"),
        }
        if os.geteuid() == 0:
            # Workers would otherwise run as nobody and not reach the temp directory.
            defaults["worker_user"] = getpass.getuser()
        self.config = GatewayConfig.parse({**defaults, **settings})
        self.conf_path = self.workdir / "nginx.conf"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def port(self) -> int:
        return self.config.listen_port

    def command(self, *extra: str) -> list[str]:
        return [self.nginx, "-p", str(self.workdir), "-c", str(self.conf_path), *extra]

    def write(self) -> Path:
        for directory in required_directories(self.config):
            Path(directory).mkdir(parents=True, exist_ok=True)
        self.conf_path.write_text(render_nginx_conf(self.config))
        return self.conf_path

    def check(self) -> subprocess.CompletedProcess[str]:
        """`nginx -t` on the rendered config."""
        self.write()
        return subprocess.run(
            self.command("-t", "-q"), capture_output=True, text=True, timeout=15, check=False
        )

    def start(self, *, ready_timeout: float = 10.0) -> LocalGateway:
        self.write()
        self._stderr = open(self.workdir / "nginx.stderr", "wb")  # noqa: SIM115
        self.process = subprocess.Popen(
            self.command("-g", "daemon off;"),
            stdin=subprocess.DEVNULL,
            stdout=self._stderr,
            stderr=self._stderr,
        )
        deadline = time.monotonic() + ready_timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited with {self.process.returncode}:\n{self.logs()}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                if self.request("GET", self.config.health_path, timeout=1)[0] == 200:
                    # The port was free when chosen; if another process took it since,
                    # this nginx fails to bind and exits, and that 200 was someone else's.
                    time.sleep(0.05)
                    if self.process.poll() is None:
                        return self
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"nginx not ready after {ready_timeout}s:\n{self.logs()}")
            time.sleep(0.02)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        if getattr(self, "_stderr", None):
            self._stderr.close()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def logs(self) -> str:
        """nginx's stderr and error log, for failure messages."""
        parts = []
        for name in ("nginx.stderr", "log/error.log"):
            path = self.workdir / name
            if path.exists():
                parts.append(f"--- {name}\n{path.read_text(errors='replace')[-4000:]}")
        return "\n".join(parts)

    def request(
        self,
        method: str,
        path: str,
        body: bytes | Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        timeout: float = 5.0,
    ) -> Response:
        return http_request(self.port, method, path, body, headers, timeout=timeout)

    def post(
        self,
        path: str,
        body: bytes | Mapping[str, Any],
        headers: Mapping[str, str] | None = None,
        *,
        timeout: float = 5.0,
    ) -> Response:
        return self.request("POST", path, body, headers, timeout=timeout)

    def __enter__(self) -> LocalGateway:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

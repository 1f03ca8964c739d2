"""A local HTTP server answering the Google REST calls the budget guard function makes.

The function's real google-cloud clients (storage, compute_v1, container_v1, and an
AuthorizedSession for Cloud Billing) are pointed at it through `client_options
api_endpoint` with anonymous credentials, so the tests exercise the libraries' own request
building, JSON parsing, pagination and error mapping. Paths and bodies follow the REST
references: Cloud Storage JSON API (media download with `x-goog-generation`, multipart
upload with `ifGenerationMatch`, 412 on a mismatch), Compute Engine v1
(`aggregated/instanceGroupManagers`, `.../resize?size=`), GKE v1
(`locations/-/clusters`, `nodePools/*:setAutoscaling`, `:setSize`, `operations/*`),
Cloud Billing v1 (`PUT projects/*/billingInfo`). Errors are Google's JSON error body
(`{"error": {"code", "message", "status"}}`).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

_STATUS = {403: "PERMISSION_DENIED", 404: "NOT_FOUND", 412: "FAILED_PRECONDITION", 500: "INTERNAL"}


@dataclass
class FakeGoogle:
    project: str
    objects: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    #: scope ("zones/europe-west4-a") -> list of instanceGroupManager JSON
    groups: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: template path ("projects/p/global/instanceTemplates/t") -> labels
    templates: dict[str, dict[str, str]] = field(default_factory=dict)
    clusters: list[dict[str, Any]] = field(default_factory=list)
    #: (method, regex on the path) -> HTTP status to answer instead
    failures: dict[tuple[str, str], int] = field(default_factory=dict)
    calls: list[tuple[str, str, Any]] = field(default_factory=list)
    #: (method, path, query) of every request, for the permission check
    requests: list[tuple[str, str, dict[str, list[str]]]] = field(default_factory=list)
    billing_account: str = "billingAccounts/0X0X0X-0X0X0X-0X0X0X"
    _generation: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- helpers for tests ---------------------------------------------------------------

    def mig(
        self,
        scope: str,
        name: str,
        size: int,
        template: str,
        autoscaler: str = "",
        *,
        in_versions: bool = False,
    ) -> None:
        """A group; `in_versions`: declared with `versions[]` (as gcp.TrainingPool's is),
        the top-level `instanceTemplate` left out."""
        link = (
            f"https://www.googleapis.com/compute/v1/projects/{self.project}/{scope}/"
            f"instanceGroupManagers/{name}"
        )
        url = f"https://www.googleapis.com/compute/v1/{template}"
        where = (
            {"versions": [{"name": "primary", "instanceTemplate": url}]}
            if in_versions
            else {"instanceTemplate": url}
        )
        self.groups.setdefault(scope, []).append(
            {
                "kind": "compute#instanceGroupManager",
                "name": name,
                "selfLink": link,
                "targetSize": size,
                **where,
                "status": {"autoscaler": autoscaler} if autoscaler else {},
            }
        )

    def node_pool(
        self,
        cluster: str,
        location: str,
        pool: str,
        labels: dict[str, str],
        zones: dict[str, int],
        autoscaling: dict[str, Any] | None = None,
        *,
        accelerators: list[dict[str, Any]] | None = None,
        node_labels: dict[str, str] | None = None,
    ) -> None:
        """A node pool as GKE's clusters.list returns it (NodePool.config: resourceLabels,
        labels (the Kubernetes node labels), accelerators (`acceleratorCount`,
        `acceleratorType`, as GKE lists them for GPU pools))."""
        urls = []
        for zone, size in zones.items():
            group = f"gke-{cluster}-{pool}-grp"
            template = f"projects/{self.project}/global/instanceTemplates/gke-{cluster}-{pool}"
            # GKE's own groups: their templates carry the pool's labels and goog-gke-node.
            self.templates[template] = {**labels, "goog-gke-node": ""}
            self.mig(f"zones/{zone}", group, size, template)
            urls.append(self.groups[f"zones/{zone}"][-1]["selfLink"])
        found = next((c for c in self.clusters if c["name"] == cluster), None)
        if found is None:
            found = {"name": cluster, "location": location, "nodePools": []}
            self.clusters.append(found)
        found["nodePools"].append(
            {
                "name": pool,
                "config": {
                    "resourceLabels": labels,
                    "labels": node_labels or {"aistack.dev/pool": pool},
                    "accelerators": accelerators or [],
                },
                "instanceGroupUrls": urls,
                "autoscaling": autoscaling or {},
            }
        )

    def mutations(self) -> list[tuple[str, str, Any]]:
        return [c for c in self.calls if c[0] in ("POST", "PUT") and "/upload/" not in c[1]]

    def object(self, name: str) -> Any:
        return json.loads(self.objects[name][0])

    # -- the server ----------------------------------------------------------------------

    def serve(self) -> tuple[ThreadingHTTPServer, str]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, status: int, body: Any, headers: dict[str, str] | None = None):
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, message: str) -> None:
                error = {"code": status, "message": message, "status": _STATUS.get(status, "")}
                self._answer(status, {"error": error})

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                url = urlparse(self.path)
                path, query = unquote(url.path), parse_qs(url.query)
                fake.calls.append((method, path, body))
                fake.requests.append((method, path, query))
                for (fail_method, pattern), status in fake.failures.items():
                    if fail_method == method and re.search(pattern, path):
                        self._error(status, f"injected failure for {method} {path}")
                        return
                with fake._lock:
                    fake._route(self, method, path, query, body)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PUT(self) -> None:
                self._handle("PUT")

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server, f"http://127.0.0.1:{server.server_address[1]}"

    def _route(self, h: Any, method: str, path: str, query: dict, body: bytes) -> None:
        p = re.escape(self.project)
        if m := re.fullmatch(r"/download/storage/v1/b/([^/]+)/o/(.+)", path):
            stored = self.objects.get(m.group(2))
            if stored is None:
                return h._error(404, "No such object")
            return h._answer(200, stored[0], {"x-goog-generation": str(stored[1])})
        if m := re.fullmatch(r"/upload/storage/v1/b/([^/]+)/o", path):
            return self._upload(h, m.group(1), query, body)
        if (
            method == "GET"
            and path == f"/compute/v1/projects/{self.project}/aggregated/instanceGroupManagers"
        ):
            items = {scope: {"instanceGroupManagers": g} for scope, g in self.groups.items()}
            return h._answer(
                200, {"kind": "compute#instanceGroupManagerAggregatedList", "items": items}
            )
        if m := re.fullmatch(
            rf"/compute/v1/(projects/{p}/(?:global|regions/[^/]+)/instanceTemplates/[^/]+)", path
        ):
            labels = self.templates.get(m.group(1))
            if labels is None:
                return h._error(404, "template not found")
            return h._answer(
                200, {"name": m.group(1).rsplit("/", 1)[1], "properties": {"labels": labels}}
            )
        if m := re.fullmatch(
            rf"/compute/v1/projects/{p}/((?:zones|regions)/[^/]+)/instanceGroupManagers/([^/]+)/resize",
            path,
        ):
            for group in self.groups.get(m.group(1), []):
                if group["name"] == m.group(2):
                    group["targetSize"] = int(query["size"][0])
                    return h._answer(
                        200,
                        {"kind": "compute#operation", "name": "operation-resize", "status": "DONE"},
                    )
            return h._error(404, "group not found")
        if method == "GET" and path == f"/v1/projects/{self.project}/locations/-/clusters":
            return h._answer(200, {"clusters": self.clusters})
        if m := re.fullmatch(
            rf"/v1/projects/{p}/locations/([^/]+)/clusters/([^/]+)/nodePools/([^/:]+):(setAutoscaling|setSize)",
            path,
        ):
            request = json.loads(body or b"{}")
            for cluster in self.clusters:
                for pool in cluster["nodePools"]:
                    if cluster["name"] == m.group(2) and pool["name"] == m.group(3):
                        if m.group(4) == "setAutoscaling":
                            pool["autoscaling"] = request.get("autoscaling", {})
                        else:
                            for url in pool["instanceGroupUrls"]:
                                for groups in self.groups.values():
                                    for g in groups:
                                        if g["selfLink"] == url:
                                            g["targetSize"] = int(request.get("nodeCount", 0))
                        return h._answer(
                            200, {"name": f"operation-{m.group(4)}", "status": "RUNNING"}
                        )
            return h._error(404, "node pool not found")
        if m := re.fullmatch(rf"/v1/projects/{p}/locations/[^/]+/operations/([^/]+)", path):
            return h._answer(200, {"name": m.group(1), "status": "DONE"})
        if method == "PUT" and path == f"/v1/projects/{self.project}/billingInfo":
            self.billing_account = json.loads(body).get("billingAccountName", "")
            return h._answer(
                200,
                {
                    "name": f"projects/{self.project}/billingInfo",
                    "billingAccountName": self.billing_account,
                    "billingEnabled": bool(self.billing_account),
                },
            )
        return h._error(404, f"the fake does not answer {method} {path}")

    def _upload(self, h: Any, bucket: str, query: dict, body: bytes) -> None:
        # multipart/related: a JSON metadata part, then the media part.
        boundary = h.headers.get("Content-Type", "").split("boundary=")[-1].strip('"')
        parts = [part for part in body.split(b"--" + boundary.encode()) if part.strip(b"-\r\n")]
        metadata = json.loads(parts[0].split(b"\r\n\r\n", 1)[1])
        media = parts[1].split(b"\r\n\r\n", 1)[1].rstrip(b"\r\n")
        name = metadata.get("name") or query["name"][0]
        expected = query.get("ifGenerationMatch", [None])[0]
        current = self.objects.get(name, (b"", 0))[1]
        if expected is not None and int(expected) != current:
            return h._error(412, "At least one of the pre-conditions you specified did not hold.")
        self._generation += 1
        self.objects[name] = (media, self._generation)
        return h._answer(
            200,
            {
                "kind": "storage#object",
                "bucket": bucket,
                "name": name,
                "generation": str(self._generation),
            },
        )

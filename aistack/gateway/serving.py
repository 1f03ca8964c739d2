"""The gateway's nginx.conf as it runs before a model server in production.

`render_nginx_conf` writes the gateway; a serving node or pod adds two things: which
proxies it trusts to name the client (the load balancer on AWS and GCP, the Gateway API
implementation on Kubernetes) and what it logs per request, an explicit choice (G2).
`aws.InferenceTier`, `gcp.InferenceTier` and `k8s.InferenceService` all render their
gateway with `serving_nginx_conf`, so the same file runs on every platform.
"""

from __future__ import annotations

import re

from aistack.errors import AistackError
from aistack.gateway.config import GatewayConfig
from aistack.gateway.nginx import render_nginx_conf

__all__ = ["serving_nginx_conf"]

_ACCESS_LOG = re.compile(r"^    access_log (?P<target>\S+) aistack_json;$", re.MULTILINE)
_LOG_FORMAT = re.compile(r"^    log_format aistack_json (?P<body>.*)}';$", re.MULTILINE)
_HTTP_OPEN = "http {\n"


def serving_nginx_conf(
    gateway: GatewayConfig, *, request_logging: str, trusted_proxies: tuple[str, ...]
) -> str:
    """The gateway's nginx.conf, adapted to sit behind a load balancer or proxy.

    Two changes to what `render_nginx_conf` writes: the client address is taken from the
    X-Forwarded-For the proxy appends (only when the connection comes from
    `trusted_proxies`, the proxy's own ranges), so per-client rate limits apply per client
    rather than per proxy (S3); and the access log follows `request_logging` (G2): 'none' writes no
    access log, 'metadata' the gateway's JSON line (no bodies, no keys), 'full' that line
    plus the request body (the prompt; bodies nginx spooled to disk are not in memory and
    are left out). Answers are never logged by the gateway.
    """
    text = render_nginx_conf(gateway)
    access = list(_ACCESS_LOG.finditer(text))
    log_format = list(_LOG_FORMAT.finditer(text))
    if len(access) != 1 or len(log_format) != 1 or _HTTP_OPEN not in text:
        raise AistackError(
            "aistack.gateway renders its access log differently than this module expects; "
            "update aistack.gateway.serving.serving_nginx_conf"
        )
    target = access[0]["target"]
    if request_logging == "none":
        text = _ACCESS_LOG.sub("    access_log off;", text)
    elif request_logging == "full":
        full = f'    log_format aistack_full {log_format[0]["body"]},"body":"$request_body"}}\';'
        text = _LOG_FORMAT.sub(lambda m: m.group(0) + "\n" + full, text)
        text = _ACCESS_LOG.sub(f"    access_log {target} aistack_full;", text)
    real_ip = [
        "    # Behind a load balancer or proxy: the client is the address it appends to",
        "    # X-Forwarded-For, trusted only from the proxy's own ranges.",
        *(f"    set_real_ip_from {cidr};" for cidr in trusted_proxies),
        "    real_ip_header X-Forwarded-For;",
        "    real_ip_recursive on;",
        "",
    ]
    if trusted_proxies:
        text = text.replace(_HTTP_OPEN, _HTTP_OPEN + "\n".join(real_ip) + "\n", 1)
    return text

"""The inference front: one nginx config before every model server (S3, S4, G5).

`render_nginx_conf(GatewayConfig)` returns a complete nginx.conf for open-source nginx
(tested with 1.22, Debian's `nginx-light`; needs stub_status). The same file runs on every
serving node, in front of vLLM or Triton on loopback, and as a Kubernetes sidecar. It:

* limits each client's request rate (S3): the client is its API key header when sent,
  else its address; over the limit it gets 429 with a JSON error and Retry-After;
* caps requests in flight to the model server (S3) across all workers; beyond the cap a
  request gets 503 with a JSON error and Retry-After (nginx open source cannot queue);
* answers repeated identical requests from a disk cache (S4), keyed on method, URI,
  client key and the full body (nginx hashes the key with MD5), with X-Cache-Status;
* when the model server is down (G5), answers 503 JSON `model unavailable` with
  Retry-After, or sends the request to the previous model version;
* answers a health path itself and serves stub_status to loopback only.

`required_directories(config)` lists what must exist before nginx starts;
`aistack.gateway.local` runs the config locally against a fake model server.
"""

from aistack.gateway.config import Fallback, GatewayConfig
from aistack.gateway.nginx import (
    AT_CAPACITY_STATUS,
    FALLBACK_HEADER,
    RATE_LIMITED_STATUS,
    limiter_socket,
    render_nginx_conf,
    required_directories,
)

__all__ = [
    "AT_CAPACITY_STATUS",
    "FALLBACK_HEADER",
    "RATE_LIMITED_STATUS",
    "Fallback",
    "GatewayConfig",
    "limiter_socket",
    "render_nginx_conf",
    "required_directories",
]

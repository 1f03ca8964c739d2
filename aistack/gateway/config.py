"""`GatewayConfig`: every setting of the inference front, with production defaults.

Values end up verbatim in nginx.conf, so every string is checked against a strict pattern
(no whitespace, quotes, `;`, braces or `$`): a config value can never inject a directive.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from aistack.config import AistackModel

__all__ = ["Fallback", "GatewayConfig"]

Fallback = Literal["error", "previous_version"]

# host:port where host is a DNS name, an IPv4 address or a bracketed IPv6 address.
_HOST_PORT = re.compile(
    r"(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):(?P<port>\d{1,5})"
)
_LISTEN_ADDRESS = re.compile(r"[0-9.]+|\[[0-9A-Fa-f:.]+\]|\*")
_HEADER = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
_URL_PATH = re.compile(r"/[A-Za-z0-9._~/-]+")
_FS_PATH = re.compile(r"/[A-Za-z0-9._/@+-]*")
_USER = re.compile(r"[a-z_][a-z0-9_-]*(?: [a-z_][a-z0-9_-]*)?")


class GatewayConfig(AistackModel):
    """The nginx inference front that sits before one model server (S3, S4, G5).

    The same rendered config runs on every serving node, in front of the OpenAI-style
    HTTP API of vLLM or Triton on loopback, and as a Kubernetes sidecar. Build it with
    `GatewayConfig.parse({...})` (snake_case or camelCase keys); invalid values raise one
    `ConfigError` naming every bad field.
    """

    # --- where it listens and what it fronts -------------------------------------------
    listen_address: str = Field(
        "0.0.0.0",
        description="Address nginx listens on: an IPv4 address, a bracketed IPv6 address "
        "or '*'. Use 127.0.0.1 when another proxy or load balancer runs on the node.",
    )
    listen_port: int = Field(8080, ge=1, le=65535, description="Port clients connect to.")
    upstream: str = Field(
        "127.0.0.1:8000",
        description="host:port of the model server (vLLM, Triton) this gateway fronts.",
    )
    tls_certificate: str | None = Field(
        None,
        description="PEM certificate file: the gateway then listens with TLS (1.2 and 1.3) "
        "on listen_port. Set with tls_certificate_key. A load balancer in front that does "
        "not validate target certificates (AWS ALB) takes a self-signed one made on the "
        "node at boot. None: plain HTTP.",
    )
    tls_certificate_key: str | None = Field(
        None,
        # Checked even when left out, so a certificate without its key is refused.
        validate_default=True,
        description="PEM private key file of tls_certificate; set with it.",
    )

    # --- S3: per-client rate limit and the concurrency cap ----------------------------
    rate_limit_per_second: int = Field(
        10,
        gt=0,
        description="Sustained requests per second allowed per client (S3). The client is "
        "the value of `client_key_header` when the request carries it, else its address. "
        "Requests over the limit get 429 with a JSON error and Retry-After. Cache hits "
        "count too: the limit is checked before the cache.",
    )
    rate_limit_burst: int = Field(
        20,
        ge=0,
        description="Requests a client may make above the sustained rate at once, served "
        "without delay, before 429s start (nginx `limit_req burst=... nodelay`).",
    )
    client_key_header: str = Field(
        "Authorization",
        description="Request header that identifies a client (its API key). OpenAI-style "
        "clients send 'Authorization: Bearer <key>'; use e.g. 'X-API-Key' if yours differ. "
        "The gateway does not validate keys, the model server does: a client can mint "
        "fresh keys to get fresh rate budgets, which only buys it 401s from a model server "
        "that checks keys.",
    )
    max_concurrent_upstream: int = Field(
        32,
        gt=0,
        description="Most requests in flight to the model server at once, across all "
        "nginx workers (S3). Requests beyond it are refused at once with 503, a JSON "
        "error and Retry-After: 1 (open-source nginx cannot queue them). Cache hits do "
        "not take a slot.",
    )
    upstream_timeout_seconds: int = Field(
        300,
        gt=0,
        description="How long the model server may stay silent (between two reads or "
        "writes) before the request fails over to the fallback. Long non-streamed "
        "generations need a generous value.",
    )
    upstream_connect_timeout_seconds: int = Field(
        2,
        gt=0,
        description="Connect timeout to the model server; it is on loopback or in the pod, "
        "so a slow connect means it is down.",
    )

    # --- G5: what happens when the model server is down -------------------------------
    fallback: Fallback = Field(
        "error",
        description="When the model server refuses connections, times out or answers "
        "502/503/504 (G5): 'error' answers 503 with a JSON error and Retry-After; "
        "'previous_version' sends the request to `previous_upstream` instead (its answers "
        "carry 'X-Aistack-Fallback: previous_version' and are never cached), and answers "
        "the 503 only if that is down too.",
    )
    previous_upstream: str | None = Field(
        None,
        validate_default=True,
        description="host:port of the previous model version; required when fallback is "
        "'previous_version', refused otherwise.",
    )
    unavailable_retry_after_seconds: int = Field(
        10, gt=0, description="Retry-After sent with the 503 when no model answers."
    )

    # --- S4: cache for repeated inputs -------------------------------------------------
    cache_enabled: bool = Field(
        True,
        description="Answer repeated identical requests from a disk cache (S4). The key is "
        "method, URI, the client key (see cache_per_client) and the full request body; "
        "nginx stores its MD5 as the file name. Only 200 answers are stored; answers the "
        "model marks no-store/private or that set cookies are not; streamed "
        "(text/event-stream) answers pass through unbuffered and are not stored; requests "
        "with 'Cache-Control: no-cache' skip the lookup. Responses carry X-Cache-Status "
        "(HIT, MISS, BYPASS, EXPIRED...). Note that a cached answer to a sampled "
        "(temperature > 0) request is replayed verbatim within the TTL.",
    )
    cache_ttl_seconds: int = Field(
        300, gt=0, description="How long a stored answer is served, and kept on disk."
    )
    cache_max_size_mb: int = Field(
        1024, gt=0, description="Disk the cache may use; least recently used goes first."
    )
    cache_per_client: bool = Field(
        True,
        description="Put the client key header in the cache key, so a client is only "
        "served answers to its own requests. Keep it on unless every client is trusted: "
        "a shared cache serves a stored answer to anyone who sends the same body, without "
        "the model server ever checking their key. Cache files hold the key text (and the "
        "body), so cache_dir is as sensitive as the keys and the prompts.",
    )
    cache_lock: bool = Field(
        True,
        description="While a request fills a cache entry, identical requests wait for it "
        "instead of reaching the model too (nginx re-checks every 500 ms, so they wait up "
        "to 0.5 s longer than the first). Worth it for generation, which takes seconds; "
        "turn it off for models that answer in milliseconds (embeddings).",
    )
    cache_max_body_kb: int = Field(
        32,
        gt=0,
        le=40,
        description="Largest request body that is cached, in KiB (at most 40: nginx stores "
        "the key, which holds the body, in a cache file header limited to 64 KiB). It is "
        "also the gateway's in-memory body buffer. Larger requests skip the cache (BYPASS) "
        "and always reach the model; nginx spools their bodies to temp_dir.",
    )
    max_body_kb: int = Field(
        1024,
        gt=0,
        description="Largest request body accepted at all, in KiB; larger ones get 413.",
    )

    # --- endpoints nginx answers itself --------------------------------------------------
    health_path: str = Field(
        "/healthz",
        description="Path nginx answers with 200 itself (liveness of the gateway, not of "
        "the model); not rate limited.",
    )
    status_path: str = Field(
        "/nginx_status",
        description="Path of nginx stub_status (connection counters), answered only to "
        "loopback clients (127.0.0.1, ::1); 403 for everyone else.",
    )

    # --- process, files and paths ------------------------------------------------------
    worker_processes: int | Literal["auto"] = Field(
        "auto", description="nginx worker processes; 'auto' is one per CPU."
    )
    worker_connections: int = Field(
        4096,
        ge=64,
        description="Connections per worker. Each proxied request uses up to four (client, "
        "internal hop both ends, model server).",
    )
    worker_user: str | None = Field(
        None,
        description="OS user (optionally 'user group') the workers run as when nginx "
        "starts as root; None keeps nginx's build default (nobody). Ignored, with a "
        "warning, when nginx does not start as root (e.g. as a Kubernetes sidecar).",
    )
    run_dir: str = Field(
        "/run/aistack-gateway",
        description="Directory of the pid file and the internal unix socket of the "
        "concurrency limiter. Must exist; workers must be able to traverse it.",
    )
    temp_dir: str = Field(
        "/var/lib/aistack-gateway/tmp",
        description="Parent of nginx's temp directories (spooled bodies and responses). "
        "Must exist; nginx creates the subdirectories.",
    )
    cache_dir: str = Field(
        "/var/cache/aistack-gateway",
        description="Cache directory; nginx creates it if its parent exists. Holds prompts, "
        "answers and (with cache_per_client) client keys: keep it on a memory-backed "
        "(tmpfs; Kubernetes emptyDir medium Memory) or encrypted volume. Memory is also "
        "faster: every stored answer is a new file, which on a VM's ext4 disk added 3 ms "
        "(one request at a time) to 7 ms (eight at once) to each miss, against under "
        "0.5 ms on tmpfs.",
    )
    log_dir: str | None = Field(
        "/var/log/aistack-gateway",
        description="Directory of access.log (one JSON object per request; no bodies, "
        "no keys) and error.log. None logs to stdout/stderr, for containers.",
    )

    # --- validation ----------------------------------------------------------------------
    @field_validator("upstream")
    @classmethod
    def _upstream_is_host_port(cls, value: str) -> str:
        return _host_port(value)

    @field_validator("listen_address")
    @classmethod
    def _listen_address_is_address(cls, value: str) -> str:
        if not _LISTEN_ADDRESS.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a listen address. Fix: use an IPv4 address such as "
                "'0.0.0.0' or '127.0.0.1', a bracketed IPv6 address such as '[::1]', or '*'."
            )
        return value

    @field_validator("client_key_header")
    @classmethod
    def _header_is_token(cls, value: str) -> str:
        if not _HEADER.fullmatch(value):
            raise ValueError(
                f"{value!r} is not an HTTP header name. Fix: use letters, digits and '-', "
                "e.g. 'Authorization' or 'X-API-Key'."
            )
        return value

    @field_validator("health_path", "status_path")
    @classmethod
    def _url_path(cls, value: str) -> str:
        if not _URL_PATH.fullmatch(value) or "//" in value or "/." in value:
            raise ValueError(
                f"{value!r} is not a plain URL path. Fix: use an absolute path of letters, "
                "digits and '-_~/' other than '/', e.g. '/healthz'."
            )
        return value

    @field_validator("status_path")
    @classmethod
    def _status_differs_from_health(cls, value: str, info: ValidationInfo) -> str:
        if value == info.data.get("health_path"):
            raise ValueError(
                "status_path equals health_path. Fix: give the status page its own path."
            )
        return value

    @field_validator("tls_certificate", "tls_certificate_key")
    @classmethod
    def _absolute_file(cls, value: str | None) -> str | None:
        if value is not None and (
            not _FS_PATH.fullmatch(value) or "/../" in value or value.endswith("/")
        ):
            raise ValueError(
                f"{value!r} is not an absolute file path nginx can use. Fix: use an "
                "absolute path of letters, digits and '._/@+-'."
            )
        return value

    @field_validator("tls_certificate_key")
    @classmethod
    def _key_with_certificate(cls, value: str | None, info: ValidationInfo) -> str | None:
        if (value is None) != (info.data.get("tls_certificate") is None):
            raise ValueError(
                "tls_certificate and tls_certificate_key go together. Fix: set both, or "
                "neither for plain HTTP."
            )
        return value

    @field_validator("run_dir", "temp_dir", "cache_dir", "log_dir")
    @classmethod
    def _absolute_dir(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if not _FS_PATH.fullmatch(value) or "/../" in value + "/" or value == "/":
            raise ValueError(
                f"{value!r} is not an absolute directory path nginx can use. Fix: use an "
                "absolute path of letters, digits and '._/@+-', other than '/'."
            )
        return value.rstrip("/")

    @field_validator("run_dir")
    @classmethod
    def _socket_path_fits(cls, value: str) -> str:
        if len(value) > 90:
            raise ValueError(
                f"run_dir is {len(value)} characters long; unix socket paths inside it "
                "must fit in 107 bytes. Fix: use a directory path of at most 90 characters."
            )
        return value

    @field_validator("worker_user")
    @classmethod
    def _user_name(cls, value: str | None) -> str | None:
        if value is not None and not _USER.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a user name. Fix: use 'user' or 'user group', e.g. "
                "'www-data' or 'nginx nginx'."
            )
        return value

    @field_validator("worker_processes")
    @classmethod
    def _positive_workers(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 1:
            raise ValueError("worker_processes must be at least 1. Fix: use 1 or more, or 'auto'.")
        return value

    @field_validator("previous_upstream")
    @classmethod
    def _previous_matches_fallback(cls, value: str | None, info: ValidationInfo) -> str | None:
        fallback = info.data.get("fallback")
        if fallback == "previous_version" and value is None:
            raise ValueError(
                "previous_upstream is required when fallback is 'previous_version'. Fix: set "
                "it to host:port of the previous model version's server, or set fallback "
                "to 'error'."
            )
        if fallback == "error" and value is not None:
            raise ValueError(
                "previous_upstream is set but fallback is 'error', so it would never be "
                "used. Fix: set fallback to 'previous_version', or remove previous_upstream."
            )
        if value is not None:
            value = _host_port(value)
            if value == info.data.get("upstream"):
                raise ValueError(
                    "previous_upstream is the same server as upstream, so it cannot stand "
                    "in when that server is down. Fix: point it at the previous version."
                )
        return value

    @field_validator("max_body_kb")
    @classmethod
    def _max_body_holds_cacheable_body(cls, value: int, info: ValidationInfo) -> int:
        cacheable = info.data.get("cache_max_body_kb")
        if cacheable is not None and value < cacheable:
            raise ValueError(
                f"max_body_kb ({value}) is below cache_max_body_kb ({cacheable}). Fix: raise "
                "max_body_kb, or lower cache_max_body_kb."
            )
        return value


def _host_port(value: str) -> str:
    match = _HOST_PORT.fullmatch(value)
    if not match or not 1 <= int(match["port"]) <= 65535 or "://" in value:
        raise ValueError(
            f"{value!r} is not host:port. Fix: write it like '127.0.0.1:8000' or "
            "'vllm.default.svc:8000', without a scheme or path."
        )
    return value

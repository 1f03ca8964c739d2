"""Render `GatewayConfig` into one complete nginx.conf for open-source nginx.

Tested with nginx 1.22 (Debian bookworm `nginx-light`); it uses nothing newer than 1.11.8.
Layout: two (with fallback 'previous_version', three) `server`s in one nginx.

    client ──> front (listen_port)              limiter (internal unix socket)
               health, status, rate limit  ──>  concurrency cap ──> model server
               (S3), cache (S4), JSON errors    (S3)           └──> previous version (G5)

The front answers cache hits itself, so only misses take one of the
`max_concurrent_upstream` slots: `limit_conn` counts requests in the server where it
runs, and a single server would count cache hits too, starving them when the model is
saturated. The limiter does not buffer, so streamed answers flow straight through; it
marks text/event-stream answers `X-Accel-Buffering: no`, which makes the front pass them
on unbuffered (and therefore uncached) as well. The previous version is the limiter's
`backup` server, reached through a third internal server that marks its answers.

The limiter tells the front why it refused with private status codes that the front
turns into JSON answers, so the model server's own 429s pass through untouched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aistack.gateway.config import GatewayConfig

__all__ = [
    "AT_CAPACITY_STATUS",
    "FALLBACK_HEADER",
    "RATE_LIMITED_STATUS",
    "limiter_socket",
    "render_nginx_conf",
    "required_directories",
]

#: Status the limiter answers with when the concurrency cap is reached (front: 503 JSON).
AT_CAPACITY_STATUS = 597
#: Status `limit_req` rejects with inside nginx (front: 429 JSON).
RATE_LIMITED_STATUS = 598
#: Response header on answers that came from the previous model version.
FALLBACK_HEADER = "X-Aistack-Fallback"

# The cache key holds the body, the URI and the client key header (8 KiB each at most),
# and nginx skips the cache when the key does not fit in proxy_buffer_size ("... is not
# enough for cache key"). The key is also copied into the cache file header, whose
# offsets are 16-bit: past 64 KiB nginx cannot read the entry back ("cache file is too
# small"), which is why cache_max_body_kb stops at 40.
_KEY_OVERHEAD_KB = 24


def limiter_socket(config: GatewayConfig) -> str:
    """Path of the unix socket the front reaches the internal limiter on."""
    return f"{config.run_dir}/limiter.sock"


def _previous_socket(config: GatewayConfig) -> str:
    return f"{config.run_dir}/previous.sock"


def required_directories(config: GatewayConfig | Mapping[str, Any]) -> list[str]:
    """Directories that must exist before nginx starts (nginx creates the rest)."""
    config = GatewayConfig.parse(config)
    dirs = [config.run_dir, config.temp_dir, config.cache_dir.rsplit("/", 1)[0] or "/"]
    if config.log_dir:
        dirs.append(config.log_dir)
    if config.tls_certificate and config.tls_certificate_key:
        dirs += [p.rsplit("/", 1)[0] for p in (config.tls_certificate, config.tls_certificate_key)]
    return list(dict.fromkeys(d for d in dirs if d and d != "/"))


def _greater_than(limit: int) -> str:
    """A regex matching the decimal integers greater than `limit` (nginx maps compare
    strings, not numbers)."""
    digits = str(limit)
    options = [rf"[1-9]\d{{{len(digits)},}}"]  # more digits
    for i, digit in enumerate(digits):
        if digit != "9":
            rest = len(digits) - i - 1
            options.append(
                digits[:i] + f"[{int(digit) + 1}-9]" + (rf"\d{{{rest}}}" if rest else "")
            )
    return "^0*(" + "|".join(options) + ")$"


def _json_error(message: str, kind: str, code: int) -> str:
    body = json.dumps({"error": {"message": message, "type": kind, "code": code}})
    # The body sits in a single-quoted nginx string: no ' or \ may appear in it, and `$`
    # would start a variable.
    if set("'\\$") & set(body):
        raise AssertionError(f"JSON error body unsafe in nginx.conf: {body}")
    return body


def _variable(header: str) -> str:
    return "$http_" + header.lower().replace("-", "_")


def render_nginx_conf(config: GatewayConfig | Mapping[str, Any]) -> str:
    """A complete nginx.conf for `config`: run it with `nginx -p <prefix> -c <file>`.

    Every path in it is absolute; the directories of `required_directories(config)` must
    exist. `config` may be a `GatewayConfig` or the mapping to parse into one (raising
    `ConfigError`).
    """
    c = GatewayConfig.parse(config)
    client_header = _variable(c.client_key_header)
    cacheable_kb = c.cache_max_body_kb
    key_buffer_kb = cacheable_kb + _KEY_OVERHEAD_KB
    upstream_timeout = f"{c.upstream_timeout_seconds}s"
    connect_timeout = f"{c.upstream_connect_timeout_seconds}s"
    tries = 2 if c.fallback == "previous_version" else 1
    # The front waits for the limiter, which may try the model and then the fallback.
    front_timeout = (
        f"{tries * (c.upstream_timeout_seconds + c.upstream_connect_timeout_seconds) + 5}s"
    )

    if c.log_dir:
        error_log = f"{c.log_dir}/error.log warn"
        access_log = f"{c.log_dir}/access.log aistack_json"
    else:
        error_log = "stderr warn"
        access_log = "/dev/stdout aistack_json"

    rate_limited = _json_error(
        "Rate limit exceeded for this client; retry after the Retry-After delay.",
        "rate_limit_exceeded",
        429,
    )
    at_capacity = _json_error(
        "The model server is at its concurrency limit; retry shortly.",
        "server_at_capacity",
        503,
    )
    unavailable = _json_error("model unavailable", "model_unavailable", 503)

    lines: list[str] = [
        "# Rendered by aistack.gateway.render_nginx_conf: change GatewayConfig, not this file.",
    ]
    if c.worker_user:
        lines.append(f"user {c.worker_user};")
    lines += [
        f"worker_processes {c.worker_processes};",
        f"worker_rlimit_nofile {c.worker_connections * 2 + 1024};",
        f"pid {c.run_dir}/nginx.pid;",
        f"error_log {error_log};",
        "",
        "events {",
        f"    worker_connections {c.worker_connections};",
        "}",
        "",
        "http {",
        "    server_tokens off;",
        "    default_type application/json;",
        "    tcp_nodelay on;",
        "    keepalive_timeout 65s;",
        "",
        "    # Unprivileged-friendly: every path nginx writes to comes from GatewayConfig.",
        f"    client_body_temp_path {c.temp_dir}/client_body 1 2;",
        f"    proxy_temp_path {c.temp_dir}/proxy 1 2;",
        f"    fastcgi_temp_path {c.temp_dir}/fastcgi;",
        f"    uwsgi_temp_path {c.temp_dir}/uwsgi;",
        f"    scgi_temp_path {c.temp_dir}/scgi;",
        "",
        "    # One JSON object per request; no bodies, no keys, no query strings.",
        '    log_format aistack_json escape=json \'{"time":"$time_iso8601",'
        '"request_id":"$request_id","client":"$remote_addr","method":"$request_method",'
        '"path":"$uri","status":$status,"bytes_sent":$bytes_sent,'
        '"request_time":$request_time,"upstream_time":"$upstream_response_time",'
        '"upstream_status":"$upstream_status","cache":"$upstream_cache_status"}\';',
        f"    access_log {access_log};",
        "",
        "    # S3: the client is its API key header when sent, else its address.",
        f"    map {client_header} $aistack_client {{",
        '        ""      "addr:$binary_remote_addr";',
        f'        default "key:{client_header}";',
        "    }",
        f"    limit_req_zone $aistack_client zone=aistack_clients:10m "
        f"rate={c.rate_limit_per_second}r/s;",
        "    # S3: one shared counter of requests in flight to the model server.",
        "    limit_conn_zone $server_name zone=aistack_upstream:1m;",
        "",
        "    # Streamed answers must not be buffered (nor cached) by the front.",
        "    map $upstream_http_content_type $aistack_front_buffering {",
        '        "~*^text/event-stream" "no";',
        '        default "";',
        "    }",
    ]

    if c.cache_enabled:
        lines += [
            "",
            "    # S4: a body nginx spooled to a temp file (larger than the buffer) is absent",
            "    # from $request_body; such requests must neither read nor fill the cache.",
            "    map $request_body $aistack_body_empty {",
            '        "~(?s)." 0;',
            "        default 1;",
            "    }",
            '    map "$aistack_body_empty:$content_length:$http_transfer_encoding" '
            "$aistack_body_not_in_memory {",
            '        "~^1:[1-9]"   1;',
            '        "~^1:[^:]*:." 1;',
            "        default       0;",
            "    }",
            f"    map $content_length $aistack_body_too_large {{  # > {cacheable_kb} KiB",
            f'        "~{_greater_than(cacheable_kb * 1024)}" 1;',
            "        default 0;",
            "    }",
            "    map $http_cache_control $aistack_client_no_cache {",
            '        "~*no-cache|no-store" 1;',
            "        default 0;",
            "    }",
            f"    proxy_cache_path {c.cache_dir} levels=1:2 keys_zone=aistack_cache:10m "
            f"max_size={c.cache_max_size_mb}m inactive={c.cache_ttl_seconds}s "
            "use_temp_path=off;",
        ]

    # --- upstreams -------------------------------------------------------------------
    lines += [
        "",
        "    upstream aistack_model {",
        "        zone aistack_model_peers 64k;",
    ]
    if c.fallback == "previous_version":
        lines += [
            f"        server {c.upstream} max_fails=1 "
            f"fail_timeout={c.unavailable_retry_after_seconds}s;",
            f"        server unix:{_previous_socket(c)} backup;",
        ]
    else:
        lines.append(f"        server {c.upstream};")
    lines += [
        f"        keepalive {min(c.max_concurrent_upstream, 64)};",
        "    }",
        "    upstream aistack_limiter {",
        f"        server unix:{limiter_socket(c)};",
        "        keepalive 64;",
        "    }",
    ]
    if c.fallback == "previous_version":
        lines += [
            "    upstream aistack_previous {",
            f"        server {c.previous_upstream};",
            "        keepalive 8;",
            "    }",
        ]

    # --- the front ---------------------------------------------------------------------
    proxy_common = [
        "proxy_http_version 1.1;",
        'proxy_set_header Connection "";',
    ]
    lines += [
        "",
        "    server {",
        f"        listen {c.listen_address}:{c.listen_port}{' ssl' if c.tls_certificate else ''};",
        "        server_name _;",
        f"        client_max_body_size {c.max_body_kb}k;",
        f"        client_body_buffer_size {cacheable_kb}k;",
    ]
    if c.tls_certificate:
        lines += [
            "        # TLS from the load balancer to this node (checkov CKV_AWS_378).",
            f"        ssl_certificate {c.tls_certificate};",
            f"        ssl_certificate_key {c.tls_certificate_key};",
            "        ssl_protocols TLSv1.2 TLSv1.3;",
        ]
    if c.cache_enabled:
        lines += [
            "        # Cacheable bodies stay in memory, in one buffer, so that $request_body",
            "        # (part of the cache key) holds the whole body.",
            "        client_body_in_single_buffer on;",
        ]
    lines += [
        "",
        f"        location = {c.health_path} {{",
        "            access_log off;",
        '            return 200 \'{"status":"ok"}\';',
        "        }",
        "",
        f"        location = {c.status_path} {{",
        "            stub_status;",
        "            allow 127.0.0.1;",
        "            allow ::1;",
        "            deny all;",
        "            access_log off;",
        "        }",
        "",
        "        location / {",
        # nginx refuses `burst=0`; leaving it out means no burst.
        "            limit_req zone=aistack_clients"
        + (f" burst={c.rate_limit_burst} nodelay;" if c.rate_limit_burst else ";"),
        f"            limit_req_status {RATE_LIMITED_STATUS};",
        "",
        "            proxy_pass http://aistack_limiter;",
        *("            " + d for d in proxy_common),
        "            proxy_set_header Host $host;",
        "            proxy_set_header X-Real-IP $remote_addr;",
        "            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
        "            proxy_set_header X-Request-ID $request_id;",
        "            proxy_connect_timeout 5s;",
        f"            proxy_send_timeout {front_timeout};",
        f"            proxy_read_timeout {front_timeout};",
        "            proxy_next_upstream off;",
        "",
        "            # G5 and S3: the refusals of nginx and a dead model become JSON answers.",
        "            proxy_intercept_errors on;",
        "            error_page 502 503 504 = @unavailable;",
        f"            error_page {AT_CAPACITY_STATUS} = @at_capacity;",
        f"            error_page {RATE_LIMITED_STATUS} = @rate_limited;",
    ]
    if c.cache_enabled:
        scope = f"|{client_header}" if c.cache_per_client else ""
        lines += [
            "",
            "            # S4: nginx hashes this key (MD5) into the cache file name.",
            "            proxy_cache aistack_cache;",
            # The cache key must fit in proxy_buffer_size; nginx wants the busy buffers at
            # least that big and below all proxy_buffers but one.
            f"            proxy_buffer_size {key_buffer_kb}k;",
            f"            proxy_buffers 8 {-(-key_buffer_kb // 4)}k;",
            f"            proxy_busy_buffers_size {key_buffer_kb}k;",
            "            proxy_cache_methods GET HEAD POST;",
            f'            proxy_cache_key "$request_method|$request_uri{scope}|$request_body";',
            f"            proxy_cache_valid 200 {c.cache_ttl_seconds}s;",
            f"            proxy_cache_lock {'on' if c.cache_lock else 'off'};",
            f"            proxy_cache_lock_timeout {upstream_timeout};",
            f"            proxy_cache_lock_age {upstream_timeout};",
            "            proxy_cache_bypass $aistack_body_too_large $aistack_body_not_in_memory "
            "$aistack_client_no_cache;",
            "            proxy_no_cache $aistack_body_too_large $aistack_body_not_in_memory"
            + (" $upstream_http_x_aistack_fallback;" if c.fallback == "previous_version" else ";"),
            "            add_header X-Cache-Status $upstream_cache_status always;",
        ]
    lines += [
        "            add_header X-Request-ID $request_id always;",
        "        }",
        "",
        "        location @rate_limited {",
        "            add_header Retry-After 1 always;",
        "            add_header X-Request-ID $request_id always;",
        f"            return 429 '{rate_limited}';",
        "        }",
        "        location @at_capacity {",
        "            add_header Retry-After 1 always;",
        "            add_header X-Request-ID $request_id always;",
        f"            return 503 '{at_capacity}';",
        "        }",
        "        location @unavailable {",
        f"            add_header Retry-After {c.unavailable_retry_after_seconds} always;",
        "            add_header X-Request-ID $request_id always;",
        f"            return 503 '{unavailable}';",
        "        }",
        "    }",
    ]

    # --- the internal limiter ------------------------------------------------------------
    lines += [
        "",
        "    # Internal: caps requests in flight to the model server. Reached only by the",
        "    # front, through a unix socket.",
        "    server {",
        f"        listen unix:{limiter_socket(c)};",
        "        server_name aistack-upstream-limiter;",
        "        access_log off;",
        f"        client_max_body_size {c.max_body_kb}k;",
        "        # The front sends the length first: one body-sized buffer, no temp file.",
        f"        client_body_buffer_size {c.max_body_kb}k;",
        "",
        "        location / {",
        f"            limit_conn aistack_upstream {c.max_concurrent_upstream};",
        f"            limit_conn_status {AT_CAPACITY_STATUS};",
        "",
        "            proxy_pass http://aistack_model;",
        *("            " + d for d in proxy_common),
        "            proxy_set_header Host $host;",
        "            proxy_set_header X-Forwarded-For $http_x_forwarded_for;",
        f"            proxy_connect_timeout {connect_timeout};",
        f"            proxy_send_timeout {upstream_timeout};",
        f"            proxy_read_timeout {upstream_timeout};",
        "            proxy_buffering off;",
        "            add_header X-Accel-Buffering $aistack_front_buffering;",
    ]
    if c.fallback == "previous_version":
        lines += [
            "            # G5: a model that is down or answers 502/503/504 is skipped for",
            f"            # {c.unavailable_retry_after_seconds}s; the request goes to the "
            "previous version.",
            "            proxy_next_upstream error timeout http_502 http_503 http_504 "
            "non_idempotent;",
            "            proxy_next_upstream_tries 2;",
            f"            proxy_next_upstream_timeout {upstream_timeout};",
        ]
    else:
        lines.append("            proxy_next_upstream off;")
    lines += [
        "        }",
        "    }",
    ]

    if c.fallback == "previous_version":
        lines += [
            "",
            "    # Internal: the previous model version, as the limiter's backup server.",
            "    server {",
            f"        listen unix:{_previous_socket(c)};",
            "        server_name aistack-previous-version;",
            "        access_log off;",
            f"        client_max_body_size {c.max_body_kb}k;",
            f"        client_body_buffer_size {c.max_body_kb}k;",
            "",
            "        location / {",
            "            proxy_pass http://aistack_previous;",
            *("            " + d for d in proxy_common),
            "            proxy_set_header Host $host;",
            "            proxy_set_header X-Forwarded-For $http_x_forwarded_for;",
            f"            proxy_connect_timeout {connect_timeout};",
            f"            proxy_send_timeout {upstream_timeout};",
            f"            proxy_read_timeout {upstream_timeout};",
            "            proxy_buffering off;",
            "            proxy_next_upstream off;",
            "            # Marks the answer for the client, and keeps it out of the cache.",
            f"            add_header {FALLBACK_HEADER} previous_version always;",
            "        }",
            "    }",
        ]

    lines += ["}", ""]
    return "\n".join(lines)

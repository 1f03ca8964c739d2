"""The inference gateway (S3, S4, G5), proven against a real nginx.

Unit tests check the config model and the rendered text; the rest start nginx with the
rendered config (`nginx -p <tmp> -c <conf> -g 'daemon off;'`, unprivileged, free loopback
ports) in front of fake OpenAI-style model servers that count what reaches them. A
missing nginx fails these tests: `.ci/run` installs it.
"""

from __future__ import annotations

import concurrent.futures
import http.client
import json
import re
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aistack.errors import ConfigError
from aistack.gateway import (
    AT_CAPACITY_STATUS,
    FALLBACK_HEADER,
    RATE_LIMITED_STATUS,
    GatewayConfig,
    render_nginx_conf,
    required_directories,
)
from aistack.gateway.local import (
    NGINX_MISSING,
    FakeModelServer,
    LocalGateway,
    find_nginx,
)
from aistack.gateway.nginx import _greater_than

COMPLETIONS = "/v1/completions"


def _json(body: bytes) -> Any:
    return json.loads(body)


def _fields(error: ConfigError) -> set[str]:
    return set(error.fields)


# --- configuration ----------------------------------------------------------------------


def test_defaults_are_documented_and_production_ready() -> None:
    config = GatewayConfig.parse({})
    assert config.listen_port == 8080
    assert config.upstream == "127.0.0.1:8000"
    assert config.fallback == "error" and config.previous_upstream is None
    assert config.cache_enabled and config.cache_per_client
    assert config.run_dir.startswith("/run/") and config.cache_dir.startswith("/var/")
    for name, field in GatewayConfig.model_fields.items():
        assert field.description, f"{name} has no description"


def test_camel_case_keys_as_written_in_pulumi_config() -> None:
    config = GatewayConfig.parse(
        {"listenPort": 9000, "rateLimitPerSecond": 3, "clientKeyHeader": "X-API-Key"}
    )
    assert (config.listen_port, config.rate_limit_per_second) == (9000, 3)
    assert "map $http_x_api_key $aistack_client" in render_nginx_conf(config)


def test_previous_version_needs_previous_upstream() -> None:
    with pytest.raises(ConfigError) as caught:
        GatewayConfig.parse({"fallback": "previous_version"})
    assert _fields(caught.value) == {"previous_upstream"}
    assert "previous_upstream is required" in str(caught.value)


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"previous_upstream": "127.0.0.1:8001"}, "previous_upstream"),  # fallback 'error'
        (
            {"fallback": "previous_version", "previous_upstream": "127.0.0.1:8000"},
            "previous_upstream",
        ),
        ({"rate_limit_per_second": 0}, "rate_limit_per_second"),
        ({"rateLimitBurst": -1}, "rateLimitBurst"),
        ({"max_concurrent_upstream": 0}, "max_concurrent_upstream"),
        ({"cache_ttl_seconds": 0}, "cache_ttl_seconds"),
        ({"cache_max_body_kb": 41}, "cache_max_body_kb"),
        ({"max_body_kb": 16}, "max_body_kb"),  # below cache_max_body_kb
        ({"fallback": "retry"}, "fallback"),
        ({"listen_port": 70000}, "listen_port"),
        ({"status_path": "/healthz"}, "status_path"),
        ({"health_path": "/"}, "health_path"),
        ({"worker_processes": 0}, "worker_processes"),
        ({"run_dir": "/" + "r" * 95}, "run_dir"),
        ({"cache_dir": "relative/cache"}, "cache_dir"),
        ({"unknownField": 1}, "unknownField"),
    ],
)
def test_invalid_settings_raise_config_error_naming_the_field(
    settings: dict[str, Any], field: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        render_nginx_conf(settings)
    assert field in _fields(caught.value), str(caught.value)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("upstream", "127.0.0.1:8000; return 200"),
        ("upstream", "http://127.0.0.1:8000"),
        ("previous_upstream", "a:1 backup"),
        ("client_key_header", "X-Key $remote_addr"),
        ("health_path", "/h { deny all; }"),
        ("status_path", "/s'"),
        ("cache_dir", "/tmp/c levels=1"),
        ("log_dir", "/tmp/l;"),
        ("listen_address", "127.0.0.1:80 default_server"),
        ("worker_user", "root; daemon on"),
    ],
)
def test_values_cannot_inject_nginx_directives(field: str, value: str) -> None:
    settings: dict[str, Any] = {field: value}
    if field == "previous_upstream":
        settings["fallback"] = "previous_version"
    with pytest.raises(ConfigError) as caught:
        GatewayConfig.parse(settings)
    assert field in _fields(caught.value)


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        GatewayConfig.parse({"upstream": "nope", "rate_limit_per_second": 0, "fallback": "x"})
    assert _fields(caught.value) >= {"upstream", "rate_limit_per_second", "fallback"}


@given(st.integers(min_value=0, max_value=10**7), st.integers(min_value=0, max_value=10**7))
def test_content_length_regex_compares_numbers(limit: int, length: int) -> None:
    matches = re.fullmatch(_greater_than(limit), str(length)) is not None
    assert matches == (length > limit)


# --- the rendered text --------------------------------------------------------------------


def _blocks(conf: str) -> list[str]:
    """Top-level block names, after checking braces balance outside quoted strings."""
    depth, names = 0, []
    for line in conf.splitlines():
        line = line.split("#", 1)[0]  # no quoted string in the config holds a '#'
        line = re.sub(r"'[^']*'|\"[^\"]*\"", "''", line).strip()
        if line.endswith("{"):
            if depth == 0:
                names.append(line[:-1].strip())
            depth += 1
        depth -= line.count("}")
        assert depth >= 0, line
    assert depth == 0
    return names


def _location(conf: str, name: str) -> str:
    start = conf.index(f"location {name} {{")
    return conf[start : conf.index("}", start)]


def test_rendered_conf_is_complete_and_structured() -> None:
    conf = render_nginx_conf({"rate_limit_per_second": 7, "rate_limit_burst": 3})
    assert _blocks(conf) == ["events", "http"]
    assert "daemon" not in conf  # left to the command line (-g 'daemon off;')
    assert "pid /run/aistack-gateway/nginx.pid;" in conf
    assert "limit_req_zone $aistack_client zone=aistack_clients:10m rate=7r/s;" in conf
    assert '"" "addr:$binary_remote_addr";' in re.sub(r" +", " ", conf)
    assert "limit_req zone=aistack_clients burst=3 nodelay;" in conf
    assert f"limit_req_status {RATE_LIMITED_STATUS};" in conf
    assert "limit_conn aistack_upstream 32;" in conf
    assert f"limit_conn_status {AT_CAPACITY_STATUS};" in conf
    assert "server 127.0.0.1:8000;" in conf
    status = _location(conf, "= /nginx_status")
    assert "stub_status;" in status and "allow 127.0.0.1;" in status and "deny all;" in status
    assert "return 200" in _location(conf, "= /healthz")
    assert "Retry-After 10" in _location(conf, "@unavailable")
    assert '"model unavailable"' in _location(conf, "@unavailable")
    for path in ("client_body_temp_path", "proxy_temp_path", "fastcgi_temp_path"):
        assert f"{path} /var/lib/aistack-gateway/tmp/" in conf


def test_cache_directives_key_on_the_body_held_in_memory() -> None:
    conf = render_nginx_conf({"cache_ttl_seconds": 60, "cache_max_size_mb": 50})
    assert "proxy_cache_methods GET HEAD POST;" in conf
    assert (
        'proxy_cache_key "$request_method|$request_uri|$http_authorization|$request_body";' in conf
    )
    assert "max_size=50m inactive=60s" in conf
    assert "proxy_cache_valid 200 60s;" in conf
    assert "proxy_cache_lock on;" in conf
    assert "add_header X-Cache-Status $upstream_cache_status always;" in conf
    # The body stays in one in-memory buffer, and requests whose body is not there skip.
    assert "client_body_buffer_size 32k;" in conf
    assert "client_body_in_single_buffer on;" in conf
    assert "proxy_cache_bypass $aistack_body_too_large $aistack_body_not_in_memory" in conf
    assert "proxy_no_cache $aistack_body_too_large $aistack_body_not_in_memory;" in conf

    shared = render_nginx_conf({"cache_per_client": False})
    assert 'proxy_cache_key "$request_method|$request_uri|$request_body";' in shared


def test_cache_disabled_renders_no_cache() -> None:
    conf = render_nginx_conf({"cache_enabled": False})
    assert "proxy_cache" not in conf and "$request_body" not in conf


def test_fallback_modes() -> None:
    error = render_nginx_conf({})
    assert "backup" not in error and "aistack_previous" not in error
    previous = render_nginx_conf(
        {"fallback": "previous_version", "previous_upstream": "vllm-v1.svc:8000"}
    )
    assert "server 127.0.0.1:8000 max_fails=1 fail_timeout=10s;" in previous
    assert "server unix:/run/aistack-gateway/previous.sock backup;" in previous
    assert "server vllm-v1.svc:8000;" in previous
    assert f"add_header {FALLBACK_HEADER} previous_version always;" in previous
    assert "$upstream_http_x_aistack_fallback" in previous  # never cached


def test_logs_go_to_stdio_for_containers() -> None:
    conf = render_nginx_conf({"log_dir": None, "worker_user": "www-data"})
    assert "error_log stderr warn;" in conf
    assert "access_log /dev/stdout aistack_json;" in conf
    assert conf.splitlines()[1] == "user www-data;"
    assert "/var/log" not in conf
    assert required_directories({"log_dir": None}) == [
        "/run/aistack-gateway",
        "/var/lib/aistack-gateway/tmp",
        "/var/cache",
    ]


# --- real nginx -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nginx() -> str:
    path = find_nginx()
    if path is None:
        pytest.fail(NGINX_MISSING, pytrace=False)
    return path


@pytest.fixture
def start(nginx: str) -> Iterator[Callable[..., LocalGateway]]:
    """Start a gateway with the given settings; stopped at teardown."""
    started: list[LocalGateway] = []

    def _start(**settings: Any) -> LocalGateway:
        settings.setdefault("worker_processes", 2)  # zones must hold across workers
        gateway = LocalGateway(**settings)
        started.append(gateway)
        return gateway.start()

    yield _start
    for gateway in started:
        gateway.stop()


@pytest.fixture
def model() -> Iterator[FakeModelServer]:
    with FakeModelServer("current") as server:
        yield server


@pytest.fixture(scope="module")
def shared() -> Iterator[tuple[LocalGateway, FakeModelServer]]:
    """One gateway with a generous rate limit for the tests that need no special config."""
    path = find_nginx()
    if path is None:
        pytest.fail(NGINX_MISSING, pytrace=False)
    with (
        FakeModelServer("current") as server,
        LocalGateway(
            upstream=server.address, rate_limit_per_second=1000, worker_processes=2
        ) as gateway,
    ):
        yield gateway, server


@pytest.fixture
def dead() -> Iterator[Callable[[], str]]:
    """Addresses where nothing listens: bound, never listening, so connects are refused
    and no other process can take the port during the test."""
    sockets: list[socket.socket] = []

    def _dead() -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sockets.append(sock)
        return f"127.0.0.1:{sock.getsockname()[1]}"

    yield _dead
    for sock in sockets:
        sock.close()


def _key(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {name}"}


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"cache_enabled": False, "log_dir": None},
        {"fallback": "previous_version", "previous_upstream": "127.0.0.1:9"},
        {"client_key_header": "X-API-Key", "cache_per_client": False, "cache_max_body_kb": 40},
        {"worker_processes": 1, "listen_address": "[::1]", "upstream": "localhost:8000"},
        {"rate_limit_burst": 0},
    ],
)
def test_nginx_accepts_the_rendered_config(nginx: str, settings: dict[str, Any]) -> None:
    gateway = LocalGateway(**settings)
    try:
        result = gateway.check()
    finally:
        gateway.stop()
    assert result.returncode == 0, result.stderr


def test_health_is_answered_by_nginx_itself(shared: tuple[LocalGateway, FakeModelServer]) -> None:
    gateway, server = shared
    before = server.requests
    status, headers, body = gateway.request("GET", "/healthz")
    assert (status, _json(body)) == (200, {"status": "ok"})
    assert headers["content-type"] == "application/json"
    assert server.requests == before


def test_status_page_only_for_loopback(shared: tuple[LocalGateway, FakeModelServer]) -> None:
    gateway, _ = shared
    status, _, body = gateway.request("GET", "/nginx_status")
    assert status == 200 and b"Active connections" in body
    # The same host from another loopback address is not on the allow list.
    conn = http.client.HTTPConnection(
        "127.0.0.1", gateway.port, timeout=5, source_address=("127.0.0.2", 0)
    )
    try:
        conn.request("GET", "/nginx_status")
        assert conn.getresponse().status == 403
    finally:
        conn.close()


def test_repeated_request_is_served_from_cache(
    shared: tuple[LocalGateway, FakeModelServer],
) -> None:
    gateway, server = shared
    body = {"model": "m", "prompt": "the same question"}
    first = gateway.post(COMPLETIONS, body, _key("cache-a"))
    count = server.requests
    second = gateway.post(COMPLETIONS, body, _key("cache-a"))
    assert (first[0], first[1]["x-cache-status"]) == (200, "MISS")
    assert (second[0], second[1]["x-cache-status"]) == (200, "HIT")
    assert second[2] == first[2]
    assert server.requests == count  # the model never saw the repeat

    other_body = gateway.post(COMPLETIONS, {**body, "prompt": "another"}, _key("cache-a"))
    assert other_body[1]["x-cache-status"] == "MISS"
    assert server.requests == count + 1
    # Per-client cache: another key does not get client a's answer.
    other_client = gateway.post(COMPLETIONS, body, _key("cache-b"))
    assert other_client[1]["x-cache-status"] == "MISS"
    assert server.requests == count + 2
    # And the answer is keyed on the path too.
    other_path = gateway.post("/v1/chat/completions", body, _key("cache-a"))
    assert other_path[1]["x-cache-status"] == "MISS"


def test_client_can_skip_the_cache(shared: tuple[LocalGateway, FakeModelServer]) -> None:
    gateway, server = shared
    body = {"prompt": "sample me again"}
    gateway.post(COMPLETIONS, body, _key("nc"))
    count = server.requests
    status, headers, _ = gateway.post(
        COMPLETIONS, body, {**_key("nc"), "Cache-Control": "no-cache"}
    )
    assert (status, headers["x-cache-status"]) == (200, "BYPASS")
    assert server.requests == count + 1


def _chunked_post(port: int, chunks: list[bytes], headers: dict[str, str]) -> tuple[int, str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request(
            "POST",
            COMPLETIONS,
            body=iter(chunks),
            headers={"Content-Type": "application/json", **headers},
            encode_chunked=True,
        )
        response = conn.getresponse()
        return response.status, response.getheader("X-Cache-Status", ""), _json(response.read())
    finally:
        conn.close()


def test_bodies_beyond_the_buffer_skip_the_cache_safely(
    shared: tuple[LocalGateway, FakeModelServer],
) -> None:
    """A body nginx spooled to disk is missing from $request_body; without the guard such
    requests would share one cache key and get each other's answers."""
    gateway, server = shared
    key = _key("big")
    # An entry under the key an empty body makes.
    empty = gateway.post(COMPLETIONS, b"", key)
    assert gateway.post(COMPLETIONS, b"", key)[1]["x-cache-status"] == "HIT"
    # Chunked bodies (no Content-Length) beyond the 32 KiB buffer go to a temp file.
    answers = []
    for letter in (b"x", b"y"):
        count = server.requests
        status, cache, answer = _chunked_post(
            gateway.port, [b'{"prompt": "', letter * 50_000, b'"}'], key
        )
        assert (status, cache) == (200, "BYPASS")
        assert server.requests == count + 1
        assert answer["body_bytes"] == 50_014
        answers.append(answer["id"])
    assert len(set(answers)) == 2 and _json(empty[2])["id"] not in answers
    # With Content-Length: over cache_max_body_kb is never cached, even if it fits memory.
    big = {"prompt": "z" * 40_000}
    for _ in range(2):
        count = server.requests
        status, headers, _ = gateway.post(COMPLETIONS, big, key)
        assert (status, headers["x-cache-status"]) == (200, "BYPASS")
        assert server.requests == count + 1
    # Just under the limit is cached.
    fits = {"prompt": "w" * 32_000}
    assert gateway.post(COMPLETIONS, fits, key)[1]["x-cache-status"] == "MISS"
    assert gateway.post(COMPLETIONS, fits, key)[1]["x-cache-status"] == "HIT"
    # Over max_body_kb is refused.
    assert gateway.post(COMPLETIONS, b"a" * (1025 * 1024), key)[0] == 413


def test_streamed_answers_pass_through_unbuffered_and_uncached(
    shared: tuple[LocalGateway, FakeModelServer],
) -> None:
    gateway, server = shared
    body = json.dumps({"prompt": "stream", "stream": True, "chunks": 2, "sleep": 0.3})
    for _ in range(2):
        count = server.requests
        conn = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=5)
        try:
            conn.request("POST", COMPLETIONS, body=body, headers=_key("stream"))
            response = conn.getresponse()
            first = response.readline()
            first_arrived = time.time()
            rest = response.read()
        finally:
            conn.close()
        assert response.status == 200 and first.startswith(b"data: ")
        # Unbuffered: the first event is here before the server even sent the second,
        # whatever the machine's load (buffered, both would arrive together at the end).
        second = json.loads(rest.split(b"data: ", 2)[1].split(b"\n", 1)[0])
        assert first_arrived < second["sent_at"], "first event waited for the second: buffered"
        assert rest.rstrip().endswith(b"data: [DONE]")
        assert response.getheader("X-Cache-Status") != "HIT"
        assert server.requests == count + 1


def test_access_log_is_json_without_keys(shared: tuple[LocalGateway, FakeModelServer]) -> None:
    gateway, _ = shared
    gateway.post(COMPLETIONS, {"prompt": "secret prompt"}, _key("sk-very-secret"))
    deadline = time.monotonic() + 2
    lines: list[str] = []
    while time.monotonic() < deadline and not lines:
        text = (gateway.workdir / "log" / "access.log").read_text()
        lines = [line for line in text.splitlines() if line.strip()]
    assert lines
    entries = [json.loads(line) for line in lines]
    assert {"status", "request_time", "cache", "request_id"} <= entries[-1].keys()
    assert "sk-very-secret" not in text and "secret prompt" not in text


def test_rate_limit_per_client(start: Callable[..., LocalGateway], model: FakeModelServer) -> None:
    gateway = start(upstream=model.address, rate_limit_per_second=1, rate_limit_burst=3)
    body = {"prompt": "hello"}
    statuses = [gateway.post(COMPLETIONS, body, _key("alice"))[0] for _ in range(8)]
    # 1 + burst 3 pass; the rest of the burst within the same second is refused. (A slow
    # machine may earn one more token while looping.)
    assert statuses[:4] == [200] * 4
    assert statuses.count(429) >= 3 and set(statuses) == {200, 429}
    status, headers, raw = gateway.post(COMPLETIONS, body, _key("alice"))
    assert status == 429 and headers["retry-after"] == "1"
    assert headers["content-type"] == "application/json"
    assert _json(raw)["error"]["type"] == "rate_limit_exceeded"
    # Another key, and a client without key (by address), have their own budgets.
    assert gateway.post(COMPLETIONS, body, _key("bob"))[0] == 200
    assert gateway.post(COMPLETIONS, body)[0] == 200
    # nginx's health answer is not rate limited.
    assert gateway.request("GET", "/healthz")[0] == 200


def test_model_servers_own_429_passes_through(start: Callable[..., LocalGateway]) -> None:
    with FakeModelServer("busy", status=429) as busy:
        gateway = start(upstream=busy.address)
        status, _, raw = gateway.post(COMPLETIONS, {"prompt": "x"})
    assert status == 429 and _json(raw)["served_by"] == "busy"


def test_concurrency_cap_holds_under_load(start: Callable[..., LocalGateway]) -> None:
    with FakeModelServer("slow", delay=0.8) as slow:
        gateway = start(upstream=slow.address, max_concurrent_upstream=3)
        cached = {"prompt": "popular", "sleep": 0}
        assert gateway.post(COMPLETIONS, cached)[1]["x-cache-status"] == "MISS"

        def call(i: int) -> tuple[int, dict[str, str], bytes]:
            return gateway.post(COMPLETIONS, {"prompt": f"p{i}"}, _key(f"c{i}"), timeout=5)

        with concurrent.futures.ThreadPoolExecutor(max_workers=10) as pool:
            futures = [pool.submit(call, i) for i in range(10)]
            deadline = time.monotonic() + 5
            while slow.in_flight < 3 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert slow.in_flight == 3, "the model never reached the cap"
            during = gateway.post(COMPLETIONS, cached)
            results = [future.result(timeout=10) for future in futures]

    assert slow.max_in_flight == 3  # reached, never exceeded
    statuses = [status for status, _, _ in results]
    assert set(statuses) == {200, 503} and statuses.count(200) >= 3, statuses
    refused = next(r for r in results if r[0] == 503)
    assert refused[1]["retry-after"] == "1"
    assert _json(refused[2])["error"]["type"] == "server_at_capacity"
    # Cache hits do not need a slot: served while the model is saturated.
    assert (during[0], during[1]["x-cache-status"]) == (200, "HIT")


def test_dead_model_answers_503_json(
    start: Callable[..., LocalGateway], dead: Callable[[], str]
) -> None:
    gateway = start(upstream=dead(), unavailable_retry_after_seconds=7)
    status, headers, raw = gateway.post(COMPLETIONS, {"prompt": "anyone?"})
    assert status == 503
    assert headers["retry-after"] == "7"
    assert headers["content-type"] == "application/json"
    assert _json(raw)["error"]["message"] == "model unavailable"
    assert _json(raw)["error"]["type"] == "model_unavailable"


def test_previous_version_answers_when_the_model_is_down(
    start: Callable[..., LocalGateway], dead: Callable[[], str]
) -> None:
    with FakeModelServer("previous") as previous:
        gateway = start(
            upstream=dead(),
            fallback="previous_version",
            previous_upstream=previous.address,
        )
        body = {"prompt": "fallback please"}
        for expected in (1, 2):
            status, headers, raw = gateway.post(COMPLETIONS, body)
            assert status == 200 and _json(raw)["served_by"] == "previous"
            assert headers[FALLBACK_HEADER.lower()] == "previous_version"
            assert headers["x-cache-status"] == "MISS"  # fallback answers are not cached
            assert previous.requests == expected


def test_previous_version_answers_when_the_model_fails(
    start: Callable[..., LocalGateway],
) -> None:
    with (
        FakeModelServer("current", status=503) as current,
        FakeModelServer("previous") as previous,
    ):
        gateway = start(
            upstream=current.address,
            fallback="previous_version",
            previous_upstream=previous.address,
        )
        status, _, raw = gateway.post(COMPLETIONS, {"prompt": "x"})
        assert (status, _json(raw)["served_by"]) == (200, "previous")
        assert (current.requests, previous.requests) == (1, 1)
        # The failed model is skipped for a while: straight to the previous version.
        status, _, raw = gateway.post(COMPLETIONS, {"prompt": "y"})
        assert (status, _json(raw)["served_by"]) == (200, "previous")
        assert current.requests == 1


def test_both_versions_down_answers_503(
    start: Callable[..., LocalGateway], dead: Callable[[], str]
) -> None:
    gateway = start(upstream=dead(), fallback="previous_version", previous_upstream=dead())
    status, headers, raw = gateway.post(COMPLETIONS, {"prompt": "x"})
    assert status == 503 and headers["retry-after"] == "10"
    assert _json(raw)["error"]["message"] == "model unavailable"


def test_the_tls_listener_passes_nginx_and_answers_health_over_https(
    nginx: str, tmp_path: Any
) -> None:
    # The hop from an AWS ALB to a node whose data is confidential is TLS (checkov
    # CKV_AWS_378). The ALB does not validate target certificates, so the node makes a
    # self-signed one at boot, with the openssl command aistack/aws/serving/serve.sh runs.
    import shutil
    import ssl
    import subprocess

    openssl = shutil.which("openssl")
    assert openssl, "openssl is needed to make the test certificate"
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "825",
         "-subj", "/CN=aistack-gateway", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    gateway = LocalGateway(tls_certificate=str(cert), tls_certificate_key=str(key))
    try:
        checked = gateway.check()
        assert checked.returncode == 0, checked.stderr
        conf = gateway.conf_path.read_text()
        assert f"listen 127.0.0.1:{gateway.port} ssl;" in conf
        process = subprocess.Popen(
            gateway.command("-g", "daemon off;"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            deadline = time.monotonic() + 10
            while True:
                connection = http.client.HTTPSConnection(
                    "127.0.0.1", gateway.port, timeout=2, context=context
                )
                try:
                    connection.request("GET", gateway.config.health_path)
                    response = connection.getresponse()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
                finally:
                    peer = (
                        connection.sock.getpeercert(binary_form=True) if connection.sock else None
                    )
            assert response.status == 200
            assert peer == ssl.PEM_cert_to_DER_cert(cert.read_text())
            # Plain HTTP on the TLS port is refused by nginx (400), not served.
            assert gateway.request("GET", gateway.config.health_path)[0] == 400
        finally:
            process.terminate()
            process.wait(timeout=10)
    finally:
        gateway.stop()

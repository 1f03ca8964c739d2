"""Benchmark of the inference gateway (S3, S4): what nginx adds, and what the cache saves.

    uv run python benchmarks/gateway_bench.py [--duration 5] [--connections 16]

Starts a fake OpenAI-style model server on loopback (answers after --model-latency-ms)
and nginx with `render_nginx_conf` in front of it, then drives both with `wrk` (Debian
package `wrk`) and a Lua script that POSTs JSON bodies. Reports:

* cache-hit throughput: the same body over and over, answered by nginx;
* the latency the gateway adds on a miss: p50/p99 through the gateway with a unique body
  per request (cache on, so every request is a lookup, a miss and a store), against the
  same load sent to the model server directly;
* the share of repeated requests that reached the model within the TTL: a fixed set of
  bodies cycled by every connection at once (target 0: only the first of each may pass,
  concurrent duplicates wait on the cache lock). Its p99 shows those waits: nginx
  re-checks a cache lock every 500 ms.

The rate limit and concurrency cap are raised so that they do not interfere. Exits 2 when
wrk or nginx is missing, 1 when a target is missed. Not a test: `make bench` runs it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from aistack.gateway.local import NGINX_MISSING, FakeModelServer, LocalGateway, find_nginx

LUA = r"""
-- POSTs OpenAI-style completion requests. Args: mode ("fixed", "unique", "cycle") and,
-- for "cycle", how many distinct bodies to cycle through.
local counter = 0
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

function init(args)
  mode = args[1] or "fixed"
  cycle = tonumber(args[2] or "1")
end

local headers = {["Content-Type"] = "application/json", ["Authorization"] = "Bearer bench"}

function request()
  counter = counter + 1
  local n = "0"
  if mode == "unique" then
    n = tid .. "-" .. counter
  elseif mode == "cycle" then
    n = tostring(counter % cycle)
  end
  local body = '{"model":"bench","max_tokens":16,"prompt":"' .. mode .. ' prompt ' .. n .. '"}'
  return wrk.format("POST", "/v1/completions", headers, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'AISTACK_RESULT {"requests":%d,"duration_us":%d,"non_2xx":%d,"socket_errors":%d,' ..
    '"p50_us":%d,"p99_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean))
end
"""


@dataclass
class Result:
    name: str
    requests: int
    seconds: float
    non_2xx: int
    socket_errors: int
    p50_ms: float
    p99_ms: float
    model_requests: int

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def run_wrk(
    wrk: str, script: Path, url: str, args: argparse.Namespace, mode: str, cycle: int = 1
) -> dict[str, float]:
    command = [
        wrk,
        f"-t{args.threads}",
        f"-c{args.connections}",
        f"-d{args.duration}s",
        "--timeout",
        "5s",
        "-s",
        str(script),
        url,
        "--",
        mode,
        str(cycle),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=args.duration + 60, check=False
    )
    for line in done.stdout.splitlines():
        if line.startswith("AISTACK_RESULT "):
            return json.loads(line.removeprefix("AISTACK_RESULT "))
    raise RuntimeError(f"wrk failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


def measure(
    name: str,
    wrk: str,
    script: Path,
    url: str,
    model: FakeModelServer,
    args: argparse.Namespace,
    mode: str,
    cycle: int = 1,
) -> Result:
    time.sleep(0.5)  # requests of the previous run still on their way to the model
    model.reset()
    raw = run_wrk(wrk, script, url, args, mode, cycle)
    return Result(
        name=name,
        requests=int(raw["requests"]),
        seconds=raw["duration_us"] / 1e6,
        non_2xx=int(raw["non_2xx"]),
        socket_errors=int(raw["socket_errors"]),
        p50_ms=raw["p50_us"] / 1000,
        p99_ms=raw["p99_us"] / 1000,
        model_requests=model.requests,
    )


def version(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=10, check=False)
    return (done.stdout + done.stderr).strip().splitlines()[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=5, help="seconds per scenario")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model-latency-ms", type=float, default=5.0)
    parser.add_argument("--cycle", type=int, default=50, help="distinct bodies, repeat run")
    parser.add_argument(
        "--cache-parent",
        default="/dev/shm" if Path("/dev/shm").is_dir() else None,
        help="where to put the cache directory (default: memory-backed /dev/shm, as "
        "recommended; on a disk every cache store costs a file creation)",
    )
    args = parser.parse_args()

    wrk = shutil.which("wrk")
    nginx = find_nginx()
    missing = []
    if wrk is None:
        missing.append("wrk is not installed (Debian/Ubuntu: `apt-get install wrk`).")
    if nginx is None:
        missing.append(NGINX_MISSING)
    if missing or wrk is None or nginx is None:
        print("gateway_bench: " + " ".join(missing), file=sys.stderr)
        return 2

    print(f"{version([nginx, '-v'])}; {version([wrk, '-v'])}")
    print(
        f"model latency {args.model_latency_ms} ms, {args.connections} connections, "
        f"{args.threads} wrk threads, {args.duration} s per scenario"
    )
    results: list[Result] = []
    with (
        tempfile.TemporaryDirectory(prefix="aistack-bench-") as tmp,
        tempfile.TemporaryDirectory(prefix="aistack-bench-", dir=args.cache_parent) as cache,
    ):
        print(f"cache directory: {cache}/cache\n")
        script = Path(tmp) / "post.lua"
        script.write_text(LUA)
        with (
            FakeModelServer("bench", delay=args.model_latency_ms / 1000) as model,
            LocalGateway(
                upstream=model.address,
                rate_limit_per_second=1_000_000,
                rate_limit_burst=1_000_000,
                max_concurrent_upstream=max(64, args.connections * 2),
                cache_ttl_seconds=3600,
                cache_dir=f"{cache}/cache",
            ) as gateway,
        ):
            direct = f"http://{model.address}"
            front = f"http://127.0.0.1:{gateway.port}"
            results.append(
                measure("model server, direct", wrk, script, direct, model, args, "unique")
            )
            results.append(
                measure("gateway, miss (unique bodies)", wrk, script, front, model, args, "unique")
            )
            with LocalGateway(
                upstream=model.address,
                rate_limit_per_second=1_000_000,
                rate_limit_burst=1_000_000,
                max_concurrent_upstream=max(64, args.connections * 2),
                cache_enabled=False,
            ) as uncached:
                results.append(
                    measure(
                        "gateway, cache disabled",
                        wrk,
                        script,
                        f"http://127.0.0.1:{uncached.port}",
                        model,
                        args,
                        "unique",
                    )
                )
            # Warm the one entry first: requests that arrive while it is being filled wait
            # on the cache lock, which nginx polls every 500 ms, and wrk's latency
            # statistics do not survive such stalls.
            warm = b'{"model":"bench","max_tokens":16,"prompt":"fixed prompt 0"}'
            for _ in range(2):
                gateway.post("/v1/completions", warm, {"Authorization": "Bearer bench"})
            results.append(
                measure("gateway, cache hit (one body)", wrk, script, front, model, args, "fixed")
            )
            results.append(
                measure(
                    f"gateway, {args.cycle} bodies repeated",
                    wrk,
                    script,
                    front,
                    model,
                    args,
                    "cycle",
                    args.cycle,
                )
            )

    header = (
        f"{'scenario':<34} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8} {'model':>7}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r.name:<34} {r.rps:>9.0f} {r.p50_ms:>8.2f} {r.p99_ms:>8.2f} "
            f"{r.non_2xx + r.socket_errors:>8} {r.model_requests:>7}"
        )
    direct_r, miss, uncached_r, hit, repeat = results
    repeated = max(repeat.requests - args.cycle, 0)
    reached = max(repeat.model_requests - args.cycle, 0)
    share = reached / repeated if repeated else 0.0
    print()
    for label, r in (("a miss", miss), ("an uncached request", uncached_r)):
        print(
            f"gateway latency added on {label}: p50 {r.p50_ms - direct_r.p50_ms:+.2f} ms, "
            f"p99 {r.p99_ms - direct_r.p99_ms:+.2f} ms"
        )
    print(f"cache-hit throughput: {hit.rps:.0f} req/s ({hit.model_requests} reached the model)")
    print(
        f"repeated requests that reached the model within the TTL: {reached} of {repeated} "
        f"({share:.2%}; target 0)"
    )
    failures = [r.name for r in results if r.non_2xx or r.socket_errors]
    if failures:
        print(f"errors in: {', '.join(failures)}", file=sys.stderr)
    return 1 if reached or failures or hit.model_requests > 1 else 0


if __name__ == "__main__":
    sys.exit(main())

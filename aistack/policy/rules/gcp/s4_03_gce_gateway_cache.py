"""AIS-S4-03: serving VMs answer repeated requests from the gateway's body-keyed cache.

Where the startup script packs the aistack nginx gateway's config (gcp.InferenceTier), the
config itself is judged: a `proxy_cache` zone, a `proxy_cache_key` holding `$request_body`
(two prompts to one URL differ only in their body) and POST among `proxy_cache_methods`
(nginx caches GET and HEAD only by default: nginx docs, ngx_http_proxy_module). A template
booting some other gateway is judged by its `aistack-gateway-cache` label.
"""

import re
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import serving_templates, startup_files

CACHE_LABEL = "aistack-gateway-cache"
_CACHE = re.compile(r"^\s*proxy_cache\s+(\S+);", re.M)
_KEY = re.compile(r"^\s*proxy_cache_key\s+(.+);", re.M)
_METHODS = re.compile(r"^\s*proxy_cache_methods\s+([^;]+);", re.M)


def conf_problem(conf: str) -> str | None:
    """Why the nginx config caches no repeated request bodies; None when it does."""
    zones = [z for z in _CACHE.findall(conf) if z != "off"]
    if not zones:
        return "the gateway's nginx.conf enables no proxy_cache"
    if not any("$request_body" in key for key in _KEY.findall(conf)):
        return "the gateway's cache key leaves out $request_body: different prompts collide"
    if not any("POST" in m.upper().split() for m in _METHODS.findall(conf)):
        return "the gateway caches no POST requests, which is how prompts arrive"
    return None


@rule(
    id="AIS-S4-03",
    checklist=["S4"],
    info="Serving instance templates boot the gateway with a response cache keyed on the "
    "request body (read from its nginx.conf, or the aistack-gateway-cache label).",
    why="Every repeated request answered from the cache is GPU time not spent and latency "
    "not paid; without a cache, retries and popular prompts cost full price each time.",
    fix="Use gcp.InferenceTier with the gateway cache enabled (the default), or run the "
    f"aistack gateway with caching on your VMs and label the template {CACHE_LABEL}=on.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in serving_templates(graph):
        conf = startup_files(template).get("nginx.conf")
        if conf is not None:
            problem = conf_problem(conf)
            if problem:
                yield fail(template, f"{problem}.")
            else:
                yield ok(template, "the gateway caches repeated requests, keyed on the body.")
            continue
        value = (template.inputs.get("labels") or {}).get(CACHE_LABEL)
        if value == "on":
            yield ok(template, f"{CACHE_LABEL}=on: the gateway caches repeated requests.")
        else:
            yield fail(template, f"no cache in front is recorded ({CACHE_LABEL} is {value!r}).")

"""AIS-S4-01: serving nodes answer repeated inputs from the gateway's cache.

Identical requests (retries, popular prompts, evaluation runs) need not reach the GPU. The
nginx gateway keys its cache on the request body; whether a node runs it with the cache on
is recorded on its launch template as `aistack:gateway-cache=on` (aws.InferenceTier sets it
from its gateway config), since user data cannot be read back reliably.
"""

from __future__ import annotations

from collections.abc import Iterator

from aistack.contracts.aws import GATEWAY_CACHE_TAG
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import tags
from aistack.queries.aws_serving import serving_templates


@rule(
    id="AIS-S4-01",
    checklist=["S4"],
    info="Serving launch templates run the gateway with its response cache on "
    f"({GATEWAY_CACHE_TAG}=on).",
    why="Every repeated request answered from the cache is GPU time not spent and latency "
    "not paid; without a cache, retries and popular prompts cost full price each time.",
    fix="Use aws.InferenceTier with the gateway cache enabled (the default), or run the "
    f"aistack gateway with caching on your nodes and tag the template {GATEWAY_CACHE_TAG}=on.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in serving_templates(graph):
        value = tags(template).get(GATEWAY_CACHE_TAG)
        if value == "on":
            yield ok(template, "the gateway caches repeated requests.")
        elif value == "off":
            yield fail(template, "the gateway runs with its cache switched off.")
        else:
            yield fail(template, f"no {GATEWAY_CACHE_TAG} tag: no cache in front is recorded.")

"""AIS-S3-05: managed load balancer backends have a Cloud Armor throttle answering 429."""

import re
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import (
    BACKEND_SERVICES,
    MANAGED_SCHEMES,
    SECURITY_POLICIES,
    resource_by_reference,
)

_DENY = re.compile(r"^deny\(429\)$")


@rule(
    id="AIS-S3-05",
    checklist=["S3"],
    info="Backend services of managed application load balancers have a Cloud Armor "
    "policy that throttles per client with 429.",
    why="One client in a loop can take every GPU of a serving tier, and the autoscaler "
    "then buys more up to its cap. A Cloud Armor throttle keyed on the client IP or API key "
    "answers 429 beyond a rate before the request reaches a GPU "
    "(docs.cloud.google.com/armor/docs/rate-limiting-overview).",
    fix="Attach a (regional) security policy with a throttle rule, exceed_action "
    "deny(429), enforce_on_key IP or HTTP_HEADER (gcp.InferenceTier does).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for backend in graph.resources:
        if backend.type not in BACKEND_SERVICES:
            continue
        if backend.inputs.get("loadBalancingScheme") not in MANAGED_SCHEMES:
            continue
        policy = resource_by_reference(
            graph, backend.inputs.get("securityPolicy"), SECURITY_POLICIES
        )
        if policy is None:
            yield fail(backend, "no Cloud Armor policy: nothing limits a single client.")
            continue
        throttles = [
            r
            for r in policy.inputs.get("rules") or []
            if r.get("action") in ("throttle", "rate_based_ban")
            and _DENY.match(str((r.get("rateLimitOptions") or {}).get("exceedAction") or ""))
        ]
        if throttles:
            key = (throttles[0].get("rateLimitOptions") or {}).get("enforceOnKey") or "ALL"
            yield ok(backend, f"Cloud Armor throttles per {key} with 429.")
        else:
            yield fail(backend, "the Cloud Armor policy has no throttle answering 429.")

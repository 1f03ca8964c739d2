"""AIS-G5-01: every serving node declares what it answers when the model is unavailable.

Without a declared fallback a dead model server shows as hung connections or bare 502s, and
clients cannot tell "retry shortly" from "broken". The aistack gateway answers a JSON 503
with Retry-After ('error') or hands the request to the previous version
('previous_version'); the choice is recorded on the launch template as `aistack:fallback`.
"""

from __future__ import annotations

from collections.abc import Iterator

from aistack.contracts.aws import FALLBACK_TAG
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import tags
from aistack.queries.aws_serving import serving_templates

FALLBACKS = ("error", "previous_version")


@rule(
    id="AIS-G5-01",
    checklist=["G5"],
    info=f"Serving launch templates declare {FALLBACK_TAG} (error or previous_version).",
    why="Clients and operators need a defined answer when the model is down: a clear, "
    "retryable error or the previous version, never a hang.",
    fix="Use aws.InferenceTier (fallback, default 'error'), or run the aistack gateway and "
    f"tag your serving templates {FALLBACK_TAG}=error|previous_version.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in serving_templates(graph):
        value = tags(template).get(FALLBACK_TAG)
        if value in FALLBACKS:
            yield ok(template, f"fallback when the model is down: {value}.")
        else:
            yield fail(template, f"no declared fallback ({FALLBACK_TAG} is {value!r}).")

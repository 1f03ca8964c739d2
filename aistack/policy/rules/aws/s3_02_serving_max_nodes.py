"""AIS-S3-02: every serving auto scaling group has a deliberate, bounded maximum.

Autoscaling on load is what keeps latency flat, and its maximum is what keeps a traffic
spike (or a scraper) from turning into a GPU bill: the maximum is the serving cost cap.
A serving group passes when its maximum is at least its minimum and at most
MAX_SERVING_NODES; beyond that a fleet is a decision to make on its own, in a separate
group.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from aistack.contracts.aws import MAX_SERVING_NODES
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.aws_serving import serving_groups


def _int(value: Any) -> int | None:  # noqa: ANN401 - any recorded value; int() decides
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


@rule(
    id="AIS-S3-02",
    checklist=["S3"],
    info=f"Serving auto scaling groups have a maximum between their minimum and "
    f"{MAX_SERVING_NODES} nodes.",
    why="The autoscaling maximum is the serving cost cap: without a deliberate one a spike "
    "or a scraper scales GPU nodes as far as the account's quota allows.",
    fix="Set max_nodes on aws.InferenceTier (per version if needed), or maxSize on the group, "
    f"to the most nodes you will pay for (at most {MAX_SERVING_NODES} per group).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for group in serving_groups(graph):
        maximum = _int(group.inputs.get("maxSize"))
        minimum = _int(group.inputs.get("minSize")) or 0
        if maximum is None or maximum < 1:
            yield fail(group, "serving group has no usable maximum size.")
        elif maximum < minimum:
            yield fail(group, f"maximum {maximum} is below the minimum {minimum}.")
        elif maximum > MAX_SERVING_NODES:
            yield fail(group, f"maximum {maximum} nodes exceeds {MAX_SERVING_NODES}.")
        else:
            yield ok(group, f"scales between {minimum} and {maximum} nodes.")

"""AIS-T1-03: a stack with Karpenter Spot NodePools has an interruption queue fed the Spot
interruption warnings."""

import json
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.karpenter import capacity_types, node_pools, pool_name

EVENT_RULE = "aws:cloudwatch/eventRule:EventRule"
EVENT_TARGET = "aws:cloudwatch/eventTarget:EventTarget"
QUEUE = "aws:sqs/queue:Queue"
SPOT_WARNING = "EC2 Spot Instance Interruption Warning"


def _spot_warning_queues(graph: StackGraph) -> set[str | None]:
    """ARNs of SQS queues an EventBridge rule sends Spot interruption warnings to."""
    rules = set()
    for event_rule in graph.of_type(EVENT_RULE):
        try:
            pattern = json.loads(event_rule.inputs.get("eventPattern") or "{}")
        except ValueError:
            continue
        if SPOT_WARNING in (pattern.get("detail-type") or []):
            rules.add(event_rule.outputs.get("name"))
    queues = {queue.outputs.get("arn") for queue in graph.of_type(QUEUE)}
    return {
        target.inputs.get("arn")
        for target in graph.of_type(EVENT_TARGET)
        if target.inputs.get("rule") in rules and target.inputs.get("arn") in queues
    }


@rule(
    id="AIS-T1-03",
    checklist=["T1"],
    info="Karpenter Spot NodePools come with an SQS interruption queue that EventBridge "
    "sends Spot interruption warnings to.",
    why="Without its interruption queue (the Helm chart's settings.interruptionQueue) "
    "Karpenter learns of a Spot reclaim only when the node disappears: pods get no drain "
    "and no SIGTERM, so the trainer never writes its last checkpoint. With it Karpenter "
    "cordons and drains the node on the two-minute warning (Karpenter docs v1.14, "
    "Disruption, Interruption; the getting-started CloudFormation's SpotInterruptionRule).",
    fix="Use aws.KarpenterGpuPool (it creates the queue and its rules and outputs the name "
    "for settings.interruptionQueue), or add the queue and EventBridge rules as Karpenter's "
    "CloudFormation does.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    queues = None
    for pool in node_pools(graph):
        if "spot" not in capacity_types(pool):
            continue
        if queues is None:
            queues = _spot_warning_queues(graph)
        name = pool_name(pool)
        if queues:
            yield ok(pool, f"NodePool {name!r} can run Spot; its interruption queue exists.")
        else:
            yield fail(
                pool,
                f"NodePool {name!r} can run Spot, but no SQS queue receives Spot "
                "interruption warnings: nodes vanish without a drain.",
            )

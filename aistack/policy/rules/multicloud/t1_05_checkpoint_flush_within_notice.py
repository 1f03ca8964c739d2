"""AIS-T1-05: the checkpoint flush finishes within the platform's preemption notice."""

from collections.abc import Iterator

from aistack.contracts.preemption import (
    MIN_UPLOAD_SECONDS,
    PREEMPTION_NOTICE_SECONDS,
    flush_budget_problem,
)
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.checkpoint_flush import flush_nodes


@rule(
    id="AIS-T1-05",
    checklist=["T1"],
    info="Training nodes' spot watch starts the checkpoint flush early enough to finish it "
    "within the platform's preemption notice (GCE 30 s, EC2 120 s), leaving half the notice "
    "to the upload, and on GCE its unit's stop (which the soft-off starts) ends before the "
    "power-off.",
    why="Compute Engine sends the ACPI soft-off with the preemption notice and powers the VM "
    "off 30 s later (docs.cloud.google.com/compute/docs/instances/spot, 'Preemption "
    "process'); EC2's Spot interruption notice comes two minutes before the instance stops "
    "(docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html). "
    "A flush that waits 30 s after the signal on GCE never runs, and the run loses "
    "everything since its last periodic upload.",
    fix="Keep aistack.node.NodeBootstrapConfig's per-cloud defaults "
    "(aistack.contracts.preemption.FLUSH_TIMING) or shorten checkpoint_flush_delay_seconds "
    "and spot_poll_seconds; on GCP keep spot_stop_timeout_seconds under 30.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for node in flush_nodes(graph):
        poll = node.seconds("AISTACK_SPOT_POLL_SECONDS")
        delay = node.seconds("AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS")
        stop = node.seconds("AISTACK_SPOT_STOP_TIMEOUT_SECONDS")
        problem = flush_budget_problem(
            node.cloud, poll_seconds=poll, flush_delay_seconds=delay, stop_timeout_seconds=stop
        )
        notice = PREEMPTION_NOTICE_SECONDS[node.cloud]
        if problem:
            yield fail(node.resource, f"{problem} ({node.cloud}: {notice} s notice).")
        else:
            left = notice - poll - delay
            yield ok(
                node.resource,
                f"the flush starts within {poll + delay} s of the {notice} s notice, leaving "
                f"{left} s (at least {MIN_UPLOAD_SECONDS[node.cloud]}) to the upload.",
            )

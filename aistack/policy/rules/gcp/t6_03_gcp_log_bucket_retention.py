"""AIS-T6-03: logs of GPU VM groups go to a regional log bucket that keeps them."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import gpu_groups, log_routes
from aistack.queries.gcp_log_retention import MIN_RETENTION_DAYS, retention


@rule(
    id="AIS-T6-03",
    checklist=["T6"],
    info="A log sink routes each GPU VM group's logs to a regional log bucket with a "
    f"retention of at least {MIN_RETENTION_DAYS} days.",
    why="Training logs are the record of what a run did and why it failed. The _Default "
    "bucket is global and keeps 30 days, neither chosen by the team; a regional bucket "
    "with a set retention keeps them where the data lives (C4) as long as needed (T6).",
    fix="Add a logging.ProjectBucketConfig in the pool's region with retention_days and a "
    "logging.ProjectSink whose filter matches the group's VMs (gcp.TrainingPool does).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    routes = log_routes(graph)
    for group, _template in gpu_groups(graph):
        base = str(group.inputs.get("baseInstanceName") or "")
        kept, message = retention([r for r in routes if base and base in r.filter], "the group's")
        yield ok(group, message) if kept else fail(group, message)

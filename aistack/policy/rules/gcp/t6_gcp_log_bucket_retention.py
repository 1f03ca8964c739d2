"""AIS-T6-03: logs of GPU VM groups go to a regional log bucket that keeps them."""

from aistack.policy import fail, ok, rule
from aistack.queries.gcp import gpu_groups, log_routes

#: The _Default bucket keeps logs 30 days (Cloud Logging docs, "Routing and storage
#: overview"); aistack asks for at least that, in a region of the stack's choosing.
MIN_RETENTION_DAYS = 30


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
def check(graph):
    routes = log_routes(graph)
    for group, _template in gpu_groups(graph):
        base = str(group.inputs.get("baseInstanceName") or "")
        yield judge(group, [r for r in routes if base and base in r.filter], "the group's")


def judge(resource, routes, whose: str):
    """ok when one of `routes` keeps the logs regionally for MIN_RETENTION_DAYS or more."""
    verdict = None
    for route in routes:
        if route.location != "global" and route.retention_days >= MIN_RETENTION_DAYS:
            return ok(resource, f"logs kept {route.retention_days} days in {route.location}.")
        verdict = fail(
            resource, f"logs go to a bucket in {route.location} kept {route.retention_days} days."
        )
    return verdict or fail(resource, f"no sink routes {whose} logs to a log bucket.")

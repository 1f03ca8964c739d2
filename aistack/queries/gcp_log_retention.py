"""Whether a resource's logs are kept: routed by a sink to a regional log bucket with a
retention of at least `MIN_RETENTION_DAYS` (shared by the T6 rules of GPU VM groups and
GKE clusters)."""

from __future__ import annotations

from collections.abc import Iterable

from aistack.queries.gcp import LogRoute

__all__ = ["MIN_RETENTION_DAYS", "retention"]

#: The _Default bucket keeps logs 30 days (Cloud Logging docs, "Routing and storage
#: overview"); aistack asks for at least that, in a region of the stack's choosing.
MIN_RETENTION_DAYS = 30


def retention(routes: Iterable[LogRoute], whose: str) -> tuple[bool, str]:
    """(True, how) when one of `routes` keeps the logs regionally for MIN_RETENTION_DAYS or
    more; else (False, why not), naming the last route seen, or saying there is none
    (`whose` logs: "the group's")."""
    found = None
    for route in routes:
        if route.location != "global" and route.retention_days >= MIN_RETENTION_DAYS:
            return True, f"logs kept {route.retention_days} days in {route.location}."
        found = f"logs go to a bucket in {route.location} kept {route.retention_days} days."
    return False, found or f"no sink routes {whose} logs to a log bucket."

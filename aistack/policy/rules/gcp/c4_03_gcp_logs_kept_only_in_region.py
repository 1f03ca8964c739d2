"""AIS-C4-03: the audit logs said to be kept in the region are kept only there: routed to
the regional bucket and excluded from the global `_Default` bucket."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule

AUDIT_LOGS = "aistack:index:GcpAuditLogs"
SINK = "gcp:logging/projectSink:ProjectSink"
EXCLUSION = "gcp:logging/projectExclusion:ProjectExclusion"


@rule(
    id="AIS-C4-03",
    checklist=["C4"],
    info="Audit logs routed to a regional bucket are excluded from the global _Default bucket.",
    why="A sink copies: the _Default sink keeps Data Access audit logs (who read the "
    "personal data) in the _Default bucket too, which is global unless the organisation "
    "sets a default storage location, so 'kept in the region' would not be exclusive "
    "(../shared/research/gcp-fidelity-audit.md, defect 11; Logging API "
    "projects.exclusions: an exclusion is one in the _Default sink).",
    fix="Use gcp.AuditLogs, or add a logging.ProjectExclusion with the regional sink's filter.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    excluded = {r.inputs.get("filter") for r in graph.of_type(EXCLUSION)}
    for component in graph.of_type(AUDIT_LOGS):
        for sink in (r for r in graph.descendants(component) if r.type == SINK):
            if sink.inputs.get("filter") in excluded:
                yield ok(sink, "routed to the region's bucket and excluded from _Default.")
            else:
                yield fail(
                    sink,
                    "routed to the region's bucket, but _Default keeps a global copy.",
                )

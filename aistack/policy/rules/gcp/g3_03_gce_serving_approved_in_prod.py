"""AIS-G3-03: every served model version records who approved it; in prod it must.

As AIS-G3-01 on AWS: a version with an approver passes in any environment (a dev stack that
records approvals keeps G3 too), and only a prod version without one fails. Versions kept
at weight 0 count: a rollback puts them in front of users."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import serving_templates


@rule(
    id="AIS-G3-03",
    checklist=["G3"],
    info="Production serving templates carry their version's approver.",
    why="A model version reaching production users without a recorded approval cannot be "
    "traced to a decision when it misbehaves.",
    fix="Set gcp.InferenceTier versions[].approvedBy for every version in prod.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in serving_templates(graph):
        labels = template.inputs.get("labels") or {}
        approver = (template.inputs.get("metadata") or {}).get("aistack-approved-by")
        if approver and labels.get("aistack-approved") == "true":
            yield ok(template, f"approved by {approver}.")
        elif labels.get("aistack-environment") == "prod":
            yield fail(template, "a prod model version without a recorded approver.")

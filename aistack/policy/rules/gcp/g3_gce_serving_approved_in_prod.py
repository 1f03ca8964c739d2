"""AIS-G3-03: in prod, every served model version has a recorded approver."""

from aistack.policy import fail, ok, rule
from aistack.queries.gcp import serving_templates


@rule(
    id="AIS-G3-03",
    checklist=["G3"],
    info="Production serving templates carry their version's approver.",
    why="A model version reaching production users without a recorded approval cannot be "
    "traced to a decision when it misbehaves.",
    fix="Set gcp.InferenceTier versions[].approvedBy for every version in prod.",
)
def check(graph):
    for template in serving_templates(graph):
        labels = template.inputs.get("labels") or {}
        if labels.get("aistack-environment") != "prod":
            continue
        approver = (template.inputs.get("metadata") or {}).get("aistack-approved-by")
        if approver and labels.get("aistack-approved") == "true":
            yield ok(template, f"approved by {approver}.")
        else:
            yield fail(template, "a prod model version without a recorded approver.")

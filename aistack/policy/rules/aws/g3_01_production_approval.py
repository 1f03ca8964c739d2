"""AIS-G3-01: every model version deployable in production records who approved it.

A production stack (`aistack:environment=prod`) may serve only versions someone approved;
the approver is recorded on the version's launch template as `aistack:approved-by`
(aws.InferenceTier refuses prod versions without one). Versions kept at weight 0 count too:
a rollback puts them in front of users.
"""

from __future__ import annotations

from collections.abc import Iterator

from aistack.config import ENVIRONMENT_TAG
from aistack.contracts.aws import APPROVED_BY_TAG
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import tags
from aistack.queries.aws_serving import serving_templates


@rule(
    id="AIS-G3-01",
    checklist=["G3"],
    info=f"Production serving templates carry {APPROVED_BY_TAG}.",
    why="A model reaches users in production only after someone accountable approved that "
    "version; recording who makes the approval auditable.",
    fix="Set approved_by on every version of aws.InferenceTier in prod, or tag the "
    f"template {APPROVED_BY_TAG}=<approver>.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in serving_templates(graph):
        found = tags(template)
        approver = found.get(APPROVED_BY_TAG, "").strip()
        if approver and approver.lower() != "none":
            yield ok(template, f"approved by {approver}.")
        elif found.get(ENVIRONMENT_TAG) == "prod":
            yield fail(template, "production serving version without a recorded approver.")

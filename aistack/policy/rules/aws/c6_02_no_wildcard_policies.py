"""AIS-C6-02: no IAM policy allows every action, or every action of a service on everything."""

import re
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import as_list
from aistack.queries.aws_iam import documents, statements

_SERVICE_WILDCARD = re.compile(r"^[A-Za-z0-9-]+:\*$")


def broad_grants(document: object) -> list[str]:
    """Why `document` grants too much; empty when every Allow is bounded."""
    parsed = statements(document)
    if parsed is None:
        return ["the policy is not a readable JSON policy document"]
    problems = []
    for index, statement in enumerate(parsed):
        if statement.get("Effect") != "Allow":
            continue
        where = statement.get("Sid") or f"statement {index}"
        actions = [str(a) for a in as_list(statement.get("Action"))]
        resources = [str(r) for r in as_list(statement.get("Resource"))]
        everything = "*" in resources or "NotResource" in statement
        if "NotAction" in statement:
            problems.append(f"{where}: Allow with NotAction grants every other action")
        for action in actions:
            if action == "*" or action.startswith("*:"):
                problems.append(f"{where}: Action '{action}' allows every action")
            elif _SERVICE_WILDCARD.match(action) and everything:
                problems.append(f"{where}: '{action}' on Resource '*' allows a whole service")
    return problems


@rule(
    id="AIS-C6-02",
    checklist=["C6"],
    info="IAM policies never allow Action '*', NotAction, or 'service:*' on Resource '*'.",
    why="A role that may do everything turns any compromised workload into the whole "
    "account; least privilege keeps a leaked notebook a leaked notebook.",
    fix="List the actions the workload calls and the resources it touches (the grant_* "
    "helpers of aistack components do this).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for resource in graph.resources:
        for label, document in documents(resource):
            problems = broad_grants(document)
            if problems:
                yield fail(resource, f"{label}: " + "; ".join(problems) + ".")
            else:
                yield ok(resource, f"{label}: every allowed action is named and bounded.")

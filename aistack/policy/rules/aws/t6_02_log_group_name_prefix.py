"""AIS-T6-02: log groups kept on `pulumi destroy` take a name prefix, not a fixed name."""

from collections.abc import Iterator

from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule

LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"


def _retained(group: Resource) -> bool:
    return bool(group.retain_on_delete or group.protect or group.inputs.get("skipDestroy"))


@rule(
    id="AIS-T6-02",
    checklist=["T6"],
    info="Log groups that outlive the stack are named from a prefix, not a fixed name.",
    why="A retained log group stays in the account after `pulumi destroy`; with a fixed name "
    "the next `pulumi up` of the stack fails with ResourceAlreadyExistsException, and the "
    "logs of the new stack have nowhere to go.",
    fix="Set namePrefix instead of name on the log group (aistack's components do), or let "
    "it be deleted with the stack.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for group in graph.of_type(LOG_GROUP):
        if not _retained(group):
            continue  # deleted with the stack: its name is free for the next deployment
        if group.inputs.get("name"):
            yield fail(
                group,
                f"retained log group with the fixed name {group.inputs['name']!r}: a second "
                "deployment after destroy fails on it.",
            )
        else:
            yield ok(group, "retained log group named from a prefix.")

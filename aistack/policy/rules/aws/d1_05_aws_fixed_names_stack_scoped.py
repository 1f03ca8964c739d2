"""AIS-D1-05: every AWS name the stack fixes is its own: a second stack in the account, or
this stack again after a destroy, never meets it."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.fixed_names import fixed_names


@rule(
    id="AIS-D1-05",
    checklist=["D1"],
    info="Fixed AWS names (repositories, functions, queues, budgets) are stack-scoped.",
    why="Names are unique in the account or region: a second stack (this program's staging "
    "beside dev) that picks the same ECR repository, function or queue name fails "
    "with an already-exists error (../shared/research/aws-fidelity-audit-2.md, names on "
    "destroy and up; issue 33: two stacks of the reference collided on 3 ECR repositories).",
    fix="Leave the name to the aistack component (ECR repositories default to "
    "'<project>/<stack>/'; other names carry '<project>-<stack>'), or use a name prefix.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for fixed in fixed_names(graph, "aws"):
        if fixed.own_because is None:
            yield fail(
                fixed.resource,
                f"{fixed.name} is not the stack's own: another stack of the account can pick "
                f"it ({fixed.rule.source}).",
            )
        else:
            yield ok(fixed.resource, f"{fixed.name.name} {fixed.own_because}.")

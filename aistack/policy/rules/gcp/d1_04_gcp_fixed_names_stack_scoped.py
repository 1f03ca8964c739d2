"""AIS-D1-04: every GCP id the stack fixes is its own: a second stack, or this stack again
after a destroy, never meets it."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.fixed_names import fixed_names


@rule(
    id="AIS-D1-04",
    checklist=["D1"],
    info="Fixed GCP ids (accounts, roles, groups, log buckets, registries) are stack-scoped.",
    why="Ids are unique in the project: a second stack (this program's staging beside dev, "
    "or another example) that picks the same one fails with 409 or, for a log bucket, "
    "silently takes the first one's over, so destroying either deletes it for both "
    "(resource_logging_bucket_config.go acquire-or-create; "
    "../shared/research/gcp-fidelity-audit.md, defect 2).",
    fix="Leave the id to the aistack component (it ends it in the stack's digest), or put "
    "aistack.contracts.naming.stack_scoped(...) around an id you choose.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for fixed in fixed_names(graph, "gcp"):
        if fixed.own_because is None:
            yield fail(
                fixed.resource,
                f"{fixed.name} is not the stack's own: another stack of the project can pick "
                f"it ({fixed.rule.source}).",
            )
        else:
            yield ok(fixed.resource, f"{fixed.name.name} {fixed.own_because}.")

"""AIS-S6-01 (advisory): a serving load balancer keeps a previous model version behind it.

With two target groups behind one listener (the current version and the previous one at
weight 0), a rollback is a weight change that takes effect in seconds; with one, it is a
redeploy of the old artefact while users wait. Advisory: a brand-new service has no previous
version yet.
"""

from __future__ import annotations

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.aws_serving import (
    forwarded_target_groups,
    listeners_of,
    serving_load_balancers,
)


@rule(
    id="AIS-S6-01",
    checklist=["S6"],
    severity="advisory",
    info="A listener of each serving load balancer forwards to at least two target groups "
    "(the previous version kept).",
    why="Rolling back by weight takes seconds; rolling back by redeploying the previous "
    "artefact takes a deployment, during which the bad version keeps serving.",
    fix="Keep the previous version in aws.InferenceTier's versions with weight 0 (standby "
    "warm for an instant rollback), or forward to both target groups with weights.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for balancer in serving_load_balancers(graph):
        widest = max(
            (len(forwarded_target_groups(lst)) for lst in listeners_of(graph, balancer)),
            default=0,
        )
        if widest >= 2:
            yield ok(balancer, f"forwards to {widest} target groups: rollback is a weight change.")
        else:
            yield fail(
                balancer, "forwards to one target group: no previous version to roll back to."
            )

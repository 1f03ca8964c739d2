"""The Google Cloud vocabulary aistack writes and reads: the tier mark where labels cannot
go (gcp.Network writes it; the S1/C2 queries, the rules and `aistack scan` read it), and
what the budget guard's code calls (gcp.BudgetGuard grants it; rule AIS-C3-06 judges the
grants by it). No pulumi_gcp here.
"""

from __future__ import annotations

import functools
from pathlib import Path

from aistack.contracts.kill_switch import source_constants

__all__ = ["BUDGET_GUARD_SOURCE", "MAX_NODES_VARIABLE", "TIER_MARK", "budget_guard_permissions"]

#: Where a subnet's or firewall rule's tier is written (compute networking takes no labels):
#: gcp.Network starts their descriptions with it.
TIER_MARK = "aistack-network-tier="
#: The shell variable that carries a training pool's `maxNodes` in its run command:
#: gcp.TrainingPool's submit_command sets and checks it, rule AIS-C5-11 reads it.
MAX_NODES_VARIABLE = "AISTACK_MAX_NODES"


#: The budget guard function's source directory (main.py + requirements.txt).
BUDGET_GUARD_SOURCE = Path(__file__).parents[1] / "gcp" / "functions" / "budget_guard"


@functools.cache
def budget_guard_permissions() -> dict[str, tuple[str, ...]]:
    """The budget guard's `PERMISSIONS`, by where each set is granted. Read from the
    function's own source, the one place they are written: parsed, not imported (the
    function is deployed alone and needs the google-cloud clients, which aistack does
    not)."""
    found = source_constants(BUDGET_GUARD_SOURCE / "main.py", ("PERMISSIONS",))["PERMISSIONS"]
    return {scope: tuple(perms) for scope, perms in found.items()}

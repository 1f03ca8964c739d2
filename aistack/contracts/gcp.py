"""The Google Cloud vocabulary aistack writes and reads: the tier mark where labels cannot
go (gcp.Network writes it; the S1/C2 queries, the rules and `aistack scan` read it), and
what the budget guard's code calls (gcp.BudgetGuard grants it; rule AIS-C3-06 judges the
grants by it). No pulumi_gcp here.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

__all__ = ["BUDGET_GUARD_SOURCE", "TIER_MARK", "budget_guard_permissions"]

#: Where a subnet's or firewall rule's tier is written (compute networking takes no labels):
#: gcp.Network starts their descriptions with it.
TIER_MARK = "aistack-network-tier="


#: The budget guard function's source directory (main.py + requirements.txt).
BUDGET_GUARD_SOURCE = Path(__file__).parents[1] / "gcp" / "functions" / "budget_guard"


@functools.cache
def budget_guard_permissions() -> dict[str, tuple[str, ...]]:
    """The budget guard's `PERMISSIONS`, by where each set is granted. Read from the
    function's own source, the one place they are written: parsed, not imported (the
    function is deployed alone and needs the google-cloud clients, which aistack does
    not)."""
    source = (BUDGET_GUARD_SOURCE / "main.py").read_text()
    for node in ast.parse(source).body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and target.id == "PERMISSIONS" and value is not None:
            found = ast.literal_eval(value)
            return {scope: tuple(perms) for scope, perms in found.items()}
    raise RuntimeError(f"{BUDGET_GUARD_SOURCE / 'main.py'} no longer defines PERMISSIONS")

"""Code that runs on Google Cloud, not in the Pulumi program: shipped as package data and
uploaded as a function's source. Each directory is deployed alone, with its own
requirements.txt, so nothing here is imported by the components: what they need from the
code (the IAM permissions it calls) is read from its source."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

__all__ = ["BUDGET_GUARD_SOURCE", "budget_guard_permissions"]

#: The budget guard function's source directory (main.py + requirements.txt).
BUDGET_GUARD_SOURCE = Path(__file__).parent / "budget_guard"


@functools.cache
def budget_guard_permissions() -> dict[str, tuple[str, ...]]:
    """The budget guard's `PERMISSIONS`, by where each set is granted. Parsed, not
    imported: the function needs the google-cloud clients, which aistack does not."""
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

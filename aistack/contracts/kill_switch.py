"""What each cloud's budget kill switch selects, read from the code that does the selecting.

The kill switches are deployed alone (the GCP function's `main.py`, the AWS Lambda's
`budget_guard.py`) and need cloud clients aistack does not, so their selectors are parsed
from their sources, not imported: rules AIS-C3-12 (GCP) and AIS-C3-13 (AWS) apply them to a
stack's graph, and a change to a selector in the code is what the rules judge.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Any

__all__ = ["AWS_KILL_SWITCH_SOURCE", "GCP_KILL_SWITCH_SOURCE", "selector", "source_constants"]

#: The GCP budget guard function and the AWS kill switch Lambda.
GCP_KILL_SWITCH_SOURCE = (
    Path(__file__).parents[1] / "gcp" / "functions" / "budget_guard" / "main.py"
)
AWS_KILL_SWITCH_SOURCE = Path(__file__).parents[1] / "aws" / "lambdas" / "budget_guard.py"

_NAMES = {
    "gcp": (
        "STACK_LABEL",
        "WORKLOAD_LABEL",
        "TRAINING_WORKLOAD",
        "PROTECTED_WORKLOADS",
        "SERVING_LABELS",
        "POOL_NODE_LABEL",
        "SYSTEM_POOL",
        "GKE_NODE_LABEL",
    ),
    "aws": (
        "STACK_TAG",
        "WORKLOAD_TAG",
        "TRAINING_WORKLOAD",
        "_KARPENTER_INSTANCE_TAG",
        "_ASG_INSTANCE_TAG",
        "_BATCH_GROUP_PREFIX",
        "_BATCH_SERVICE_TAG",
    ),
}


def source_constants(path: Path, names: tuple[str, ...]) -> dict[str, Any]:
    """The module-level constants `names` of the Python file `path`, by literal value; a
    RuntimeError naming the ones the file no longer defines."""
    found: dict[str, Any] = {}
    for node in ast.parse(path.read_text()).body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and target.id in names and value is not None:
            found[target.id] = ast.literal_eval(value)
    missing = sorted(set(names) - found.keys())
    if missing:
        raise RuntimeError(f"{path} no longer defines {missing}")
    return found


@functools.cache
def selector(cloud: str) -> dict[str, Any]:
    """The kill switch's selector constants on `cloud` ('gcp' or 'aws')."""
    path = GCP_KILL_SWITCH_SOURCE if cloud == "gcp" else AWS_KILL_SWITCH_SOURCE
    return source_constants(path, _NAMES[cloud])

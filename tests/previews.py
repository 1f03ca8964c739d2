"""The example stacks' previews, run once per test process and handed out as copies.

Previewing the reference stack takes over a second; a dozen tests in each xdist worker
preview it (its CLI output, its scan, its digest, its composition), and some of the other
example stacks likewise. A preview of a stack is a value: the same files give the same
graph (tests/engine/test_digest.py holds each one's digest), so a test given the copy of
an earlier run of the real engine is given what its own run would record, and no test's
changes to its copy reach another's. `run_project` stands in for
`aistack.engine.run_project` where a test previews an example stack through the CLI.
"""

from __future__ import annotations

import copy
from pathlib import Path

from aistack import engine
from aistack.engine.graph import StackGraph

ROOT = Path(__file__).resolve().parents[1]
#: The example stacks: the reference stack at the root and every directory of stacks/.
EXAMPLES = frozenset([ROOT, *(p.parent for p in (ROOT / "stacks").glob("*/Pulumi.yaml"))])

_real_run_project = engine.run_project
_previews: dict[tuple[Path, str], StackGraph] = {}


def run_project(path: str | Path, stack: str = "dev") -> StackGraph:
    """`engine.run_project`, run once per example stack and stack name in this process;
    any other project runs each time."""
    directory = Path(path).resolve()
    if directory not in EXAMPLES:
        return _real_run_project(path, stack)
    key = (directory, stack)
    if key not in _previews:
        _previews[key] = _real_run_project(path, stack)
    return copy.deepcopy(_previews[key])

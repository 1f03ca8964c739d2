"""The example stacks' previews, run once per test session and handed out as copies.

Previewing the reference stack takes over a second; a dozen tests in each xdist worker
preview it (its CLI output, its scan, its digest, its composition), and some of the other
example stacks likewise. A preview of a stack is a value: the same files give the same
graph (tests/engine/test_digest.py holds each one's digest), so a test given the copy of
an earlier run of the real engine is given what its own run would record, and no test's
changes to its copy reach another's. `run_project` stands in for
`aistack.engine.run_project` where a test previews an example stack through the CLI.

The session's checkov job (tests/scan/conftest.py `compute_scans`) previews every example
stack's `dev` stack before it scans them, and publishes the graphs: a worker takes those
rather than running each stack again. Without the job (a test run on its own) a process
runs each stack once itself.
"""

from __future__ import annotations

import pickle
from pathlib import Path

from aistack import engine
from aistack.engine.graph import StackGraph
from tests._harness import session_jobs

ROOT = Path(__file__).resolve().parents[2]
#: The example stacks: the reference stack at the root and every directory of stacks/.
EXAMPLES = frozenset([ROOT, *(p.parent for p in (ROOT / "stacks").glob("*/Pulumi.yaml"))])

#: What the session's checkov job publishes: {stack directory: pickled graph} of the `dev`
#: stacks.
PUBLISHED = "example-previews.pickle"

_real_run_project = engine.run_project
#: Each preview pickled: a copy is unpickled from it (5 ms for the reference stack, where
#: `copy.deepcopy` of the graph took 35 ms).
_previews: dict[tuple[Path, str], bytes] = {}
_asked_the_job = False


def run_project(path: str | Path, stack: str = "dev") -> StackGraph:
    """`engine.run_project`, run once per example stack and stack name in this process;
    any other project runs each time."""
    directory = Path(path).resolve()
    if directory not in EXAMPLES:
        return _real_run_project(path, stack)
    global _asked_the_job
    key = (directory, stack)
    if key not in _previews and stack == "dev" and not _asked_the_job:
        _asked_the_job = True
        published = session_jobs.published(PUBLISHED, "scans")
        if published is not None:
            _previews.update(((d, "dev"), graph) for d, graph in pickle.loads(published).items())
    if key not in _previews:
        _previews[key] = pickle.dumps(_real_run_project(path, stack))
    return pickle.loads(_previews[key])


def publish(graphs: dict[Path, StackGraph]) -> None:
    """For the session's job: the example stacks' `dev` previews, for every worker, each
    graph pickled as `run_project` keeps it."""
    session_jobs.publish(
        PUBLISHED, pickle.dumps({directory: pickle.dumps(g) for directory, g in graphs.items()})
    )

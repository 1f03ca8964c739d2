"""A recorded graph that several tests of a module read, built once for the module.

Building a component on the simulated cloud costs 0.1-1 s; a module whose tests each read
one aspect of the same build (the launch template, the job definition, the alarms) used to
build it once per test. Sharing one build is only sound while no test changes it, so
`shared` fingerprints the graph when it is built and fails the module's last test, at
teardown, if any test changed it: copy a graph (`copy.deepcopy`) before changing it.

    @pytest.fixture(scope="module")
    def pool_graph():
        with shared(engine.run(program, config=CONFIG)) as graph:
            yield graph
"""

from __future__ import annotations

import contextlib
import pickle
from collections.abc import Iterator

from aistack.engine.graph import StackGraph


def fingerprint(graph: StackGraph) -> bytes:
    """Everything a test can read from the graph, as bytes: the pickle of its plain data
    (3 ms for the reference stack; through JSON, 75 ms). A change anywhere in it, a value,
    a key or an order, changes the bytes."""
    return pickle.dumps(graph, protocol=pickle.HIGHEST_PROTOCOL)


@contextlib.contextmanager
def shared(graph: StackGraph) -> Iterator[StackGraph]:
    before = fingerprint(graph)
    yield graph
    assert fingerprint(graph) == before, (
        "a test changed a graph its module shares with other tests; "
        "change a copy (copy.deepcopy(graph)) instead"
    )

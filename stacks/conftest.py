"""The example stacks' tests in this repository's suite: each previews its stack as a team's
own test would (`engine.run_project`), and is handed the session's preview of it.

The session's scans job previews every example stack's `dev` stack and publishes the graphs
(tests/_harness/previews.py); running them again here cost about 2 s of CPU (these modules' engine
CPU over the whole suite: 3.3 s in 25 runs before, 1.4 s in 13 after). A preview is a value
(tests/engine/test_digest.py holds each stack's digest), so the copy is what the test's own
run would record. A stack copied to a temporary directory runs as before; another stack
name of an example runs once per process and is copied after. Per module, so no test
outside stacks/ sees the stand-in.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from aistack import engine
from tests._harness import previews


@pytest.fixture(scope="module", autouse=True)
def example_stack_previews() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "run_project", previews.run_project)
        yield

"""The example stacks' tests in this repository's suite: each previews its stack as a team's
own test would (`engine.run_project`), and is handed the session's preview of it.

The session's scans job previews every example stack's `dev` stack and publishes the graphs
(tests/previews.py); running them again here cost about 4 s of CPU. A preview is a value
(tests/engine/test_digest.py holds each stack's digest), so the copy is what the test's own
run would record. Anything else, another stack name or a stack copied to a temporary
directory, runs as before. Per module, so no test outside stacks/ sees the stand-in.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from aistack import engine
from tests import previews


@pytest.fixture(scope="module", autouse=True)
def session_previews() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "run_project", previews.run_project)
        yield

"""Every Python block in the README and the component pages runs as written, on the engine.

A reader copies these into a program; a snippet with undefined names or `{...}` fails them
on their first try. Each block is run on its own, as `__main__`, with `aws:region` set.
"""

import re
from pathlib import Path

import pytest

from aistack import engine
from aistack.testing import StackRunner

ROOT = Path(__file__).resolve().parents[1]
#: The README, the reference and every page under docs/components/, each platform's folder.
PAGES = [
    ROOT / "README.md",
    ROOT / "docs" / "reference.md",
    *sorted((ROOT / "docs" / "components").rglob("*.md")),
]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks():
    for page in PAGES:
        for index, match in enumerate(BLOCK.finditer(page.read_text())):
            yield pytest.param(match.group(1), id=f"{page.relative_to(ROOT)}#{index + 1}")


BLOCKS = list(_blocks())


def test_the_pages_have_python_blocks():
    assert len(BLOCKS) >= len(PAGES)


@pytest.mark.parametrize("code", BLOCKS)
def test_the_block_runs_as_written(code, request):
    name = request.node.callspec.id
    namespace = {"__name__": "__main__"}

    def program():
        exec(compile(code, name, "exec"), namespace)  # noqa: S102

    graph = engine.run(program, config={"aws:region": "us-east-1"})
    # A block that shows a team's test is run as pytest would, with aistack's fixture.
    tests = [value for key, value in namespace.items() if key.startswith("test_")]
    for test in tests:
        test(StackRunner())
    assert graph.components() or tests, "the block declares no aistack component and no test"

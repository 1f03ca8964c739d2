"""Make `xdist_group` group again under pytest 9.2, for the moto tests here.

With `--dist loadgroup`, pytest-xdist (3.8) tells its scheduler an item's group by appending
`@<group>` to the item's node id, written to `item._nodeid`. pytest 9.2 keeps the id in a
structured `item._id` instead, so that write changes nothing and every grouped test is sent to
any worker, as if unmarked (pytest-dev/pytest-xdist issue #1386, fix proposed in #1388). The
moto tests are grouped so that only one worker imports moto; this hook appends the suffix the
way xdist means to, and does nothing where xdist's own write took effect.
"""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)  # after xdist's own pytest_collection_modifyitems
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # set on xdist workers with loadgroup
        return
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # an older pytest: xdist's own write works there
        return
    for item in items:
        names = sorted(
            {
                str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                for mark in item.iter_markers("xdist_group")
            }
        )
        nodeid = item.nodeid
        # xdist reads the group after the last "@" past the last "]" (its _split_scope).
        if not names or nodeid.rfind("@") > nodeid.rfind("]"):
            continue
        item._id = NodeId.parse(f"{nodeid}@{'_'.join(names)}")  # type: ignore[attr-defined]

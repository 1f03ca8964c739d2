"""`xdist_group` marks that group again under pytest 9.2 with pytest-xdist 3.8.

With `--dist loadgroup` (pyproject's addopts) xdist sends the tests of one group to one
worker: the moto tests, so that only one worker imports moto, and each example stack's
tests, so that its module-scoped preview is computed once. xdist tells its scheduler a
test's group by appending `@<group>` to the item's node id, written to `item._nodeid`;
pytest 9.2 keeps the id in a structured `item._id` instead, so that write changes nothing
and grouped tests go to any worker as if unmarked (pytest-dev/pytest-xdist issue #1386,
fix proposed in #1388; 3.8.0 is the newest release). `apply` appends the suffix as xdist
means to. It does nothing where xdist's own write took effect (an older pytest, or a
fixed xdist), and if pytest's internals move again grouping is lost, nothing else.
"""

from __future__ import annotations

import pytest


def apply(config: pytest.Config, items: list[pytest.Item]) -> None:
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
        try:
            item._id = NodeId.parse(f"{nodeid}@{'_'.join(names)}")  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - internals changed: lose the grouping, not the run
            return

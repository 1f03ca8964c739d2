"""tests/_harness/collector.py: at a new test module the previous module's garbage is freed and what
lives is frozen, and the collector's own full passes are off; within a module nothing
changes; the suite's conftest applies it."""

from __future__ import annotations

import gc
import weakref
from types import SimpleNamespace

from tests._harness.collector import ModuleFreezer


class _Node:
    pass


def _item(nodeid: str) -> SimpleNamespace:
    return SimpleNamespace(nodeid=nodeid)


def _tracked(thing: object) -> bool:
    # gc.get_objects() lists the three generations, not the permanent one.
    return any(candidate is thing for candidate in gc.get_objects())


def test_a_new_module_frees_the_last_modules_cycles_and_freezes_what_lives():
    freezer = ModuleFreezer()
    freezer.starting(_item("tests/a.py::test_one"))
    gc.set_threshold(700, 10, 10)  # Python's defaults, as in a process without the freezer
    gc.disable()  # the cycle must still be there when the next module starts
    try:
        garbage = _Node()
        garbage.itself = garbage
        gone = weakref.ref(garbage)
        del garbage
        alive = _Node()
        assert gone() is not None and _tracked(alive)
        assert freezer.starting(_item("tests/b.py::test_two"))
    finally:
        gc.enable()
    assert gone() is None
    assert not _tracked(alive)
    # Its pass per module is the worker's full pass: the collector makes none of its own.
    assert gc.get_threshold()[2] >= 10**9


def test_the_same_module_changes_nothing():
    freezer = ModuleFreezer()
    freezer.starting(_item("tests/a.py::test_one"))
    count = gc.get_freeze_count()
    later = _Node()
    assert not freezer.starting(_item("tests/a.py::test_two[param]"))
    # Nothing more was frozen (frozen objects freed meanwhile lower the count).
    assert gc.get_freeze_count() <= count and _tracked(later)


def test_the_suites_conftest_froze_as_this_module_began(request):
    freezers = [
        plugin._FREEZER
        for plugin in request.config.pluginmanager.get_plugins()
        if isinstance(getattr(plugin, "_FREEZER", None), ModuleFreezer)
    ]
    assert [freezer.module for freezer in freezers] == [request.node.nodeid.split("::")[0]]
    assert gc.get_freeze_count() > 0

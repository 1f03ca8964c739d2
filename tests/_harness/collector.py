"""The garbage collector's full passes kept to what the current test module made.

A worker's heap grows as the suite runs: the SDK modules the tests load (pulumi_gcp's
compute alone is 288 modules of typed classes), the session's previews, the caches. After
a few hundred tests it holds about a million objects that live until the process exits,
and every full pass walks them all: a second each on this 2-core machine, 30 or so passes
a worker, a fifth of a worker's CPU. Each engine run ends with such a pass due, because
the engine postpones them while a program runs (aistack.engine.runner._lean_runtime).

So, when a worker starts a test module, the objects still alive are moved to the
collector's permanent generation (`gc.freeze`), which later passes skip; a full collection
first frees the cyclic garbage the previous module left, so none of it is frozen. By then
the previous module's fixtures are torn down: pytest tears down a module's fixtures in the
teardown of its last test. What is frozen is what the process keeps anyway (modules,
session fixtures, caches).

That pass per module is then the worker's only full pass: the collector's own (every ten
young-generation passes that promote objects) are turned off. Within a module they walked
the module's objects over and over, most of them still alive: 70-80 passes and about 4 s
of the two workers' CPU, with the workers' peak memory the same without them (530 and
680 MB). Young collections go on as usual, freeing most cycles as a test makes them.
"""

from __future__ import annotations

import gc

import pytest

#: A full-collection threshold no worker reaches (it counts young-generation passes).
_NEVER = 10**9


class ModuleFreezer:
    def __init__(self) -> None:
        self.module: str | None = None

    def starting(self, item: pytest.Item) -> bool:
        """Called as each test's setup begins; freezes on a new module. True if it did."""
        module = item.nodeid.split("::")[0]
        if module == self.module:
            return False
        self.module = module
        gc.collect()
        gc.freeze()
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, _NEVER)
        return True

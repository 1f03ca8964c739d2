"""Lazy exports for a package: names resolve to their module on first use.

`aistack.aws`, `aistack.gcp`, `aistack.k8s` and `aistack.scan` use it, so importing one costs
nothing until a name is used, and a stack never loads another cloud's SDK (nor checkov's
environment).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from aistack._extras import missing_extra


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose `exports` map a name to the module
    defining it; a resolved name is cached in the package's `namespace`."""
    names = sorted(exports)

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module protocol's name
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        try:
            imported = importlib.import_module(module)
        except ModuleNotFoundError as error:
            friendly = missing_extra(error, f"{package}.{name}")
            if friendly is None:
                raise
            raise friendly from None
        value = getattr(imported, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return names

    return __getattr__, __dir__

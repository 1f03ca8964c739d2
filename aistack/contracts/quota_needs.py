"""Gathering pools' quota needs, on every cloud: from configuration and from components.

`aws.GpuQuota` and `gcp.GpuQuota` both size requests from needs listed in their Args and
from pool components passed as `pools=` that implement `quota_needs()`. The collecting,
the checks that each pool is listed once, and the "nothing to size" problem are the same
on both clouds; only the need model and what identifies a pool differ.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar, cast

from aistack.config import AistackModel
from aistack.errors import ConfigError, Problems

__all__ = ["as_dicts", "gather_needs"]

N = TypeVar("N", bound=AistackModel)


def as_dicts(needs: Any) -> Any:
    """A list of needs with dataclass instances (what pools return) turned into dicts, for a
    pydantic `mode="before"` validator; anything else unchanged."""
    if isinstance(needs, list | tuple):
        return [
            dataclasses.asdict(n) if dataclasses.is_dataclass(n) and not isinstance(n, type) else n
            for n in needs
        ]
    return needs


def gather_needs(
    name: str,
    configured: Sequence[N],
    pools: Sequence[Any],
    problems: Problems,
    *,
    model: type[N],
    protocol: type,
    types_field: tuple[str, str],
    identity: Callable[[N], Hashable],
    describe: Callable[[N], str],
    pools_fix: str,
    needs_fix: str,
    configured_paths: Sequence[str] | None = None,
) -> list[tuple[str, N, str]]:
    """(field path, need, name of its types field) for every configured need and every need
    the `pools` report, with problems for pools that cannot report needs, reported needs
    that do not validate, a pool listed twice (`identity`) and no needs at all.

    `types_field` is the types field's (config, python) name: config paths are camelCase
    like the config file, a component's needs are Python objects, so snake_case.
    `configured_paths` are the configured needs' field paths when some were set aside
    (default: `<name>.needs.<i>`)."""
    paths = configured_paths or [f"{name}.needs.{i}" for i in range(len(configured))]
    needs: list[tuple[str, N, str]] = [
        (path, need, types_field[0]) for path, need in zip(paths, configured, strict=True)
    ]
    for i, pool in enumerate(pools):
        where = f"{name}.pools.{i}"
        if not isinstance(pool, protocol):
            problems.add(
                where, f"{type(pool).__name__} does not implement quota_needs().", pools_fix
            )
            continue
        for j, reported in enumerate(cast(Any, pool).quota_needs()):
            try:
                parsed = model.parse(as_dicts([reported])[0], where=f"{where}.{j}")
                needs.append((f"{where}.{j}", parsed, types_field[1]))
            except ConfigError as error:
                problems.extend(error)
    if not needs and not problems:
        problems.add(
            f"{name}.needs",
            "no pool needs GPU quota, so there is nothing to size a request from.",
            needs_fix,
        )
    seen: dict[Hashable, str] = {}
    for where, need, _ in needs:
        key = identity(need)
        if key in seen:
            problems.add(
                f"{where}.pool",
                f"pool {describe(need)} is listed twice (also at {seen[key]}); its quota "
                "would be counted twice.",
                "list each pool once per market, in needs or in pools=, not both.",
            )
        seen.setdefault(key, where)
    return needs

"""Looking offers up: by name, by GPU and filters, and the catalog's sources."""

from __future__ import annotations

import difflib
import re

from aistack.catalog._data import _all_types, _clouds, _load
from aistack.catalog.offers import CLOUDS, CatalogInfo, Cloud, InstanceType, PriceSource
from aistack.errors import ConfigError, Problem


def get(name: str, cloud: Cloud | None = None) -> InstanceType:
    """The catalog entry for `name` (e.g. 'g5.xlarge', 'a3-highgpu-8g').

    Raises ConfigError for an unknown name, suggesting the nearest known names.
    """
    clouds = _clouds(cloud)
    key = name.strip().lower() if isinstance(name, str) else name
    for c in clouds:
        found = _load(c).types.get(key)
        if found is not None:
            return found
    if cloud is not None:
        for other in CLOUDS:
            if other != cloud and key in _load(other).types:
                raise ConfigError(
                    f"{name!r} is a {other} instance type, not a {cloud} one.",
                    field="instance_type",
                    fix=f"set cloud to {other!r}, or pick a {cloud} instance type.",
                )
    known = [t.name for t in _all_types(cloud)]
    close = difflib.get_close_matches(str(key), known, n=3, cutoff=0.6)
    models = {m.lower(): m for m in gpu_models(cloud)}
    if str(key) in models:
        examples = [t.name for t in instance_types(cloud, gpu=models[str(key)])][:3]
        fix = (
            f"{name!r} is a GPU model, not an instance type; use one that carries it, "
            f"e.g. {examples}, or instance_types(gpu={models[str(key)]!r}) to list them."
        )
    elif close:
        fix = "did you mean " + " or ".join(repr(c) for c in close) + "?"
    else:
        families = sorted({t.family for t in _all_types(cloud)})
        fix = f"use a GPU instance type from one of the catalog families {families}."
    where = f"{cloud} " if cloud else ""
    raise ConfigError(
        f"unknown {where}instance type {name!r}; the aistack catalog has no such GPU type.",
        field="instance_type",
        fix=fix,
    )


_GPU_SPEC = re.compile(r"^\s*([a-z0-9]+)(?:[-_ ](\d+)\s*gb)?\s*$", re.IGNORECASE)


def _parse_gpu(gpu: str, cloud: Cloud | None, field_name: str = "gpu") -> tuple[str, int | None]:
    """('A100', 80) from 'A100-80GB'; ('H100', None) from 'h100'. Unknown model: error."""
    match = _GPU_SPEC.match(gpu) if isinstance(gpu, str) else None
    models = {m.lower(): m for m in gpu_models(cloud)}
    all_models = {m.lower(): m for m in gpu_models()}
    if match and match.group(1).lower() in all_models:
        memory = int(match.group(2)) if match.group(2) else None
        return all_models[match.group(1).lower()], memory
    known = sorted(models.values())
    close = difflib.get_close_matches(str(gpu).upper(), known, n=3, cutoff=0.5)
    fix = f"use one of {known}; add a memory suffix to pin the size, e.g. 'A100-80GB'."
    if close:
        fix = "did you mean " + " or ".join(repr(c) for c in close) + "? Otherwise " + fix
    raise ConfigError(f"unknown GPU {gpu!r}.", field=field_name, fix=fix)


def _gpu_matches(t: InstanceType, model: str, memory: int | None) -> bool:
    return t.gpu_model.lower() == model.lower() and (memory is None or t.gpu_memory_gb == memory)


def find(cloud: Cloud, name: str) -> InstanceType | None:
    """The entry for `name` on `cloud`, or None: for callers that answer 'not offered'
    rather than raise (the simulated cloud's offerings look-up)."""
    return _load(cloud).types.get(name.strip().lower())


def region_zones(cloud: Cloud, region: str) -> tuple[str, ...]:
    """Every zone of `region` that offers at least one catalogued GPU type, sorted."""
    zones = {
        zone
        for t in _load(cloud).types.values()
        if t.offered_in(region)
        for zone in t.zones(region)
    }
    return tuple(sorted(zones))


def instance_types(
    cloud: Cloud | None = None,
    *,
    gpu: str | None = None,
    gpu_count: int | None = None,
    min_gpu_memory_gb: int | None = None,
    family: str | None = None,
    region: str | None = None,
) -> list[InstanceType]:
    """Catalog entries matching every given filter, ordered by cloud, family and size.

    `gpu` is a model name matched case-insensitively ('l4', 'H100'), optionally with a
    memory suffix ('A100-80GB'); `gpu_count` is exact; `min_gpu_memory_gb` is per GPU;
    `region` keeps types offered there. An unknown GPU model or family is a ConfigError.
    """
    problems: list[Problem] = []
    model: str | None = None
    memory: int | None = None
    if gpu is not None:
        try:
            model, memory = _parse_gpu(gpu, None)
        except ConfigError as exc:
            problems.extend(exc.problems)
    if gpu_count is not None and gpu_count < 1:
        problems.append(Problem("gpu_count", f"gpu_count must be at least 1, not {gpu_count}."))
    types = _all_types(cloud)
    if family is not None and family.lower() not in {t.family for t in types}:
        families = sorted({t.family for t in types})
        close = difflib.get_close_matches(family.lower(), families, n=3, cutoff=0.6)
        fix = f"did you mean {close[0]!r}?" if close else f"use one of {families}."
        problems.append(Problem("family", f"unknown instance family {family!r}.", fix))
    if problems:
        raise ConfigError(problems)
    selected = [
        t
        for t in types
        if (model is None or _gpu_matches(t, model, memory))
        and (gpu_count is None or t.gpu_count == gpu_count)
        and (min_gpu_memory_gb is None or t.gpu_memory_gb >= min_gpu_memory_gb)
        and (family is None or t.family == family.lower())
        and (region is None or t.offered_in(region))
    ]
    return sorted(selected, key=lambda t: (t.cloud, t.family, t.gpu_count, t.vcpus, t.name))


def regions_offering(name: str) -> tuple[str, ...]:
    """Regions where instance type `name` is offered (ConfigError if `name` is unknown)."""
    return get(name).regions


def gpu_models(cloud: Cloud | None = None) -> tuple[str, ...]:
    """GPU model names in the catalog, sorted (e.g. ('A100', 'A10G', 'H100', ...))."""
    return tuple(sorted({t.gpu_model for t in _all_types(cloud)}))


def spot_fraction(instance_type: str) -> float:
    """Typical spot (AWS) or Spot VM (GCP) price as a fraction of on-demand."""
    return get(instance_type).spot_fraction


def catalog_info(cloud: Cloud | None = None) -> tuple[CatalogInfo, ...]:
    """As-of date, notes and sources of each cloud's catalog data."""
    return tuple(_load(c).info for c in _clouds(cloud))


def price_sources(cloud: Cloud | None = None) -> tuple[PriceSource, ...]:
    """Every source the catalog cites (prices, estimates, spot, specs, quotas)."""
    return tuple(s for info in catalog_info(cloud) for s in info.sources)

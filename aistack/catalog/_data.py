"""Loading the catalog's package data (`data/aws.json`, `data/gcp.json`), once per cloud."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any

from aistack.catalog.offers import CLOUDS, CatalogInfo, Cloud, InstanceType, Price, PriceSource
from aistack.errors import AistackError, ConfigError


@dataclass(frozen=True)
class _CloudData:
    info: CatalogInfo
    types: Mapping[str, InstanceType]
    families: Mapping[str, Mapping[str, Any]]
    quotas: Mapping[str, Any]


@cache
def _load(cloud: Cloud) -> _CloudData:
    text = resources.files("aistack.catalog").joinpath("data", f"{cloud}.json").read_text("utf-8")
    raw = json.loads(text)
    sources = {
        key: PriceSource(
            key=key,
            cloud=cloud,
            description=src["description"],
            url=src["url"],
            as_of=src["as_of"],
            details=MappingProxyType(
                {k: v for k, v in src.items() if k not in ("description", "url", "as_of")}
            ),
        )
        for key, src in raw["sources"].items()
    }
    families = raw["families"]
    types: dict[str, InstanceType] = {}
    for name, t in raw["instance_types"].items():
        family = families[t["family"]]
        regions = tuple(t["regions"])
        if not (set(regions) == set(t["prices"]) == set(t["zones"])):
            raise AistackError(
                f"catalog data error in {cloud}.json: {name} regions, prices and zones "
                "name different regions"
            )
        prices = {
            region: Price(
                usd_per_hour=float(p["usd_per_hour"]),
                source=p["source"],
                as_of=sources[p["source"]].as_of,
                estimated=sources[p["source"]].estimated,
            )
            for region, p in t["prices"].items()
        }
        types[name] = InstanceType(
            name=name,
            cloud=cloud,
            family=t["family"],
            gpu_model=t["gpu_model"],
            gpu_count=int(t["gpu_count"]),
            gpu_memory_gb=int(t["gpu_memory_gb"]),
            vcpus=int(t["vcpus"]),
            memory_gib=t["memory_gib"],
            nvme_disks=int(t["nvme_disks"]),
            nvme_disk_gb=int(t["nvme_disk_gb"]),
            network_gbps=t["network_gbps"],
            spot_fraction=float(family["spot_fraction"]),
            quota_group=family.get("quota_group"),
            notes=family.get("notes", ""),
            regions=regions,
            prices=MappingProxyType(prices),
            zone_suffixes=MappingProxyType({r: tuple(z) for r, z in t["zones"].items()}),
        )
    info = CatalogInfo(
        cloud=cloud,
        as_of=raw["as_of"],
        currency=raw["currency"],
        notes=tuple(raw["notes"]),
        sources=tuple(sources.values()),
    )
    return _CloudData(
        info=info,
        types=MappingProxyType(types),
        families=MappingProxyType(families),
        quotas=MappingProxyType(raw["quotas"]),
    )


def _clouds(cloud: str | None, field_name: str = "cloud") -> tuple[Cloud, ...]:
    if cloud is None:
        return CLOUDS
    if cloud not in CLOUDS:
        raise ConfigError(
            f"unknown cloud {cloud!r}.",
            field=field_name,
            fix=f"use one of {list(CLOUDS)}.",
        )
    return (cloud,)  # type: ignore[return-value]


def _all_types(cloud: str | None = None) -> list[InstanceType]:
    return [t for c in _clouds(cloud) for t in _load(c).types.values()]

"""GPU offer catalog: instance types, list prices, regions, zones, spot and quota data.

The catalog is package data (`aistack/catalog/data/aws.json` and `gcp.json`), loaded lazily
on first use and cached. It covers the GPU instance types aistack provisions on AWS (g4dn,
g5, g6, g6e, p4d, p4de, p5, p5e, p5en) and GCP (G2, A2 Standard/Ultra, A3 High/Mega), with
hardware specs, on-demand USD/hour per region, the regions and zones that offer each type,
a typical spot fraction per family and the quota each one counts against.

Prices are list prices for planning and cost estimates, not quotes: every `Price` names its
source and as-of date, and estimated prices say so (`Price.estimated`). Zones are for
offline planning; real deploys look offerings up through the cloud's API.

Example::

    from aistack import catalog

    catalog.get("p5.48xlarge").price("us-east-1")            # USD per instance-hour
    catalog.instance_types("aws", gpu="L4", gpu_count=1)      # every 1x L4 type
    choice = catalog.choose_region("H100", allowed_regions=["us-east-1", "eu-west-2"])
    choice.region, choice.instance_type.name, choice.candidates[0].reason
    catalog.vcpu_quota("g5.xlarge", "spot").quota_code       # 'L-3819A6DF'
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any, Literal, get_args

from aistack.errors import AistackError, ConfigError, Problem

__all__ = [
    "CLOUDS",
    "CatalogInfo",
    "Cloud",
    "GcpGpuQuotaId",
    "InstanceType",
    "Market",
    "Price",
    "PriceSource",
    "QuotaCode",
    "RegionCandidate",
    "RegionChoice",
    "RejectedRegion",
    "catalog_info",
    "choose_region",
    "find",
    "get",
    "gpu_models",
    "gpu_quota",
    "gpu_quota_ids",
    "instance_types",
    "price_sources",
    "region_zones",
    "regions_offering",
    "spot_fraction",
    "vcpu_quota",
]

Cloud = Literal["aws", "gcp"]
Market = Literal["on-demand", "spot"]

#: The clouds the catalog covers.
CLOUDS: tuple[Cloud, ...] = get_args(Cloud)
_MARKETS: tuple[Market, ...] = get_args(Market)


# ---------------------------------------------------------------------------------------
# Public types
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PriceSource:
    """Where a class of numbers in the catalog comes from, and how old it is."""

    key: str
    cloud: Cloud
    description: str
    url: str
    as_of: str
    #: Extra detail recorded with the source, e.g. the regional ratios behind estimates.
    details: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def estimated(self) -> bool:
        """True when numbers from this source are derived, not published list prices."""
        return "estimate" in self.key


@dataclass(frozen=True)
class Price:
    """An on-demand price in one region, with its source and as-of date."""

    usd_per_hour: float
    source: str
    as_of: str
    estimated: bool


@dataclass(frozen=True)
class InstanceType:
    """One GPU instance type (AWS) or machine type (GCP) and where it is offered."""

    name: str
    cloud: Cloud
    family: str
    gpu_model: str
    gpu_count: int
    #: Memory per GPU, in GB.
    gpu_memory_gb: int
    vcpus: int
    memory_gib: float
    #: Local NVMe instance-store (AWS) or bundled local-SSD (GCP) disks.
    nvme_disks: int
    #: Size of each local disk, in GB.
    nvme_disk_gb: int
    #: Peak network bandwidth ('up to' figures recorded as the burst value).
    network_gbps: float
    #: Typical spot price as a fraction of on-demand (0.35 = spot costs 35%).
    spot_fraction: float
    #: AWS vCPU quota group ("P" or "G and VT"); None on GCP.
    quota_group: str | None
    notes: str
    #: Regions offering this type, in catalog order.
    regions: tuple[str, ...]
    prices: Mapping[str, Price] = field(hash=False, repr=False)
    #: Zone suffixes per region ("a", "b", ...); `zones()` gives full zone names.
    zone_suffixes: Mapping[str, tuple[str, ...]] = field(hash=False, repr=False)

    @property
    def total_gpu_memory_gb(self) -> int:
        return self.gpu_count * self.gpu_memory_gb

    @property
    def total_nvme_gb(self) -> int:
        return self.nvme_disks * self.nvme_disk_gb

    @property
    def gpu_label(self) -> str:
        """E.g. '8 x A100 40GB'."""
        return f"{self.gpu_count} x {self.gpu_model} {self.gpu_memory_gb}GB"

    def offered_in(self, region: str) -> bool:
        return region in self.prices

    def price_info(self, region: str) -> Price:
        """The on-demand `Price` in `region`; ConfigError if not offered there."""
        self._require_region(region)
        return self.prices[region]

    def price(self, region: str) -> float:
        """On-demand USD per instance-hour in `region`; ConfigError if not offered there."""
        return self.price_info(region).usd_per_hour

    def price_per_gpu_hour(self, region: str) -> float:
        return self.price(region) / self.gpu_count

    def spot_price(self, region: str) -> float:
        """Typical spot USD/hour in `region`: on-demand times the family's spot fraction."""
        return self.price(region) * self.spot_fraction

    def zones(self, region: str) -> tuple[str, ...]:
        """Full zone names offering this type in `region` (e.g. 'us-east-1a',
        'us-central1-a'); ConfigError if the region does not offer it."""
        self._require_region(region)
        sep = "" if self.cloud == "aws" else "-"
        return tuple(f"{region}{sep}{suffix}" for suffix in self.zone_suffixes[region])

    def _require_region(self, region: str) -> None:
        if region not in self.prices:
            raise ConfigError(
                f"{self.name} is not offered in region {region!r} according to the "
                f"aistack catalog; it is offered in {list(self.regions)}.",
                field="region",
                fix=f"use one of {list(self.regions)}, or pick another instance type.",
            )


@dataclass(frozen=True)
class QuotaCode:
    """The quota an instance type counts against, for one market."""

    cloud: Cloud
    service_code: str
    quota_code: str
    quota_name: str
    #: AWS: "P" or "G and VT"; GCP: the machine family (e.g. "a3-highgpu").
    family_group: str
    market: Market
    #: What the quota counts: "vCPU" (AWS) or "GPU" (GCP).
    unit: str


@dataclass(frozen=True)
class RegionCandidate:
    """A region that offers the requested GPU, with the instance type it would use."""

    region: str
    instance_type: str
    price_per_hour: float
    price_per_gpu_hour: float
    zones: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class RejectedRegion:
    region: str
    reason: str


@dataclass(frozen=True)
class RegionChoice:
    """The result of `choose_region`: the winner, the ranking and what was rejected."""

    gpu: str
    cloud: Cloud
    gpu_count: int
    region: str
    instance_type: InstanceType
    price_per_hour: float
    price_per_gpu_hour: float
    #: Every qualifying region, best first; `candidates[0]` is the choice.
    candidates: tuple[RegionCandidate, ...]
    rejected: tuple[RejectedRegion, ...]

    @property
    def reason(self) -> str:
        return self.candidates[0].reason


@dataclass(frozen=True)
class CatalogInfo:
    """Catalog metadata for one cloud: as-of date, honest notes and sources, for docs."""

    cloud: Cloud
    as_of: str
    currency: str
    notes: tuple[str, ...]
    sources: tuple[PriceSource, ...]


# ---------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _CloudData:
    info: CatalogInfo
    types: Mapping[str, InstanceType]
    families: Mapping[str, Mapping[str, Any]]
    quotas: Mapping[str, Any]


@cache
def _load(cloud: Cloud) -> _CloudData:
    text = resources.files(__name__).joinpath("data", f"{cloud}.json").read_text("utf-8")
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


# ---------------------------------------------------------------------------------------
# Queries
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# Quotas
# ---------------------------------------------------------------------------------------


def _check_market(market: str) -> None:
    if market not in _MARKETS:
        raise ConfigError(
            f"unknown market {market!r}.", field="market", fix=f"use one of {list(_MARKETS)}."
        )


def vcpu_quota(instance_type: str, market: Market) -> QuotaCode:
    """The AWS Service Quotas vCPU quota `instance_type` counts against in `market`.

    All P families (p4d, p5, p5e, p5en, ...) share the P quotas; all G families share the
    "G and VT" quotas. A GCP machine type or a type outside the catalog is a ConfigError.
    """
    _check_market(market)
    t = get(instance_type)
    if t.cloud != "aws" or t.quota_group is None:
        raise ConfigError(
            f"{t.name} is a {t.cloud} machine type; GCP limits GPUs per model and region, "
            "not vCPUs per instance family.",
            field="instance_type",
            fix="use gpu_quota() for GCP machine types.",
        )
    quotas = _load("aws").quotas
    entry = quotas["groups"][t.quota_group][market]
    return QuotaCode(
        cloud="aws",
        service_code=quotas["service_code"],
        quota_code=entry["quota_code"],
        quota_name=entry["quota_name"],
        family_group=t.quota_group,
        market=market,
        unit=quotas["unit"],
    )


def gpu_quota(instance_type: str, market: Market) -> QuotaCode:
    """The GCP Compute Engine regional GPU quota metric a machine type counts against.

    Spot VMs count against the PREEMPTIBLE_ variant. An AWS type is a ConfigError (AWS
    limits vCPUs: see `vcpu_quota`).
    """
    _check_market(market)
    t = get(instance_type)
    if t.cloud != "gcp":
        raise ConfigError(
            f"{t.name} is an AWS instance type; AWS limits vCPUs per instance family.",
            field="instance_type",
            fix="use vcpu_quota() for AWS instance types.",
        )
    quotas = _load("gcp").quotas
    family = _load("gcp").families[t.family]
    metric, name = family["gpu_quota_metric"], family["gpu_quota_name"]
    if market == "spot":
        metric, name = quotas["spot_prefix"] + metric, quotas["spot_name_prefix"] + name
    return QuotaCode(
        cloud="gcp",
        service_code=quotas["service_code"],
        quota_code=metric,
        quota_name=name,
        family_group=t.family,
        market=market,
        unit=quotas["unit"],
    )


@dataclass(frozen=True)
class GcpGpuQuotaId:
    """One Cloud Quotas quota a GCP machine type's GPUs count against.

    `quota_id` is the Cloud Quotas id a QuotaPreference names (`NVIDIA-L4-GPUS-per-project-
    region`), not the Compute metric name (`NVIDIA_L4_GPUS`): the API answers 404 to a
    metric name. `dimensions` are the dimensions besides `region` (the family quota's
    `gpu_family`); `regional` says whether the quota also has the `region` dimension.
    """

    quota_id: str
    dimensions: Mapping[str, str]
    regional: bool
    #: "per-model", "family" or "global": what the quota limits.
    scope: Literal["per-model", "family", "global"]
    #: The market whose GPUs count, or None when both do (the family and global quotas).
    market: Market | None
    description: str

    def key(self, region: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        """The quota's identity in `region`: (quota id, sorted dimensions). One
        QuotaPreference exists per key and project."""
        dims = dict(self.dimensions)
        if self.regional:
            dims["region"] = region
        return self.quota_id, tuple(sorted(dims.items()))


def gpu_quota_ids(instance_type: str, market: Market) -> tuple[GcpGpuQuotaId, ...]:
    """Every Cloud Quotas quota one GPU of GCP machine type `instance_type` counts against
    in `market`: its model's regional quota (the PREEMPTIBLE- one for Spot), the GPU family
    quota for H100 and newer, and the project-wide GPUS-ALL-REGIONS ceiling (0 in new
    projects). Source: the catalog's `gcp-quota-ids` entry."""
    _check_market(market)
    t = get(instance_type)
    if t.cloud != "gcp":
        raise ConfigError(
            f"{t.name} is an AWS instance type; AWS limits vCPUs per instance family.",
            field="instance_type",
            fix="use vcpu_quota() for AWS instance types.",
        )
    data = _load("gcp")
    family = data.families[t.family]
    spot = market == "spot"
    model_name = ("Preemptible " if spot else "") + family["gpu_quota_name"]
    found = [
        GcpGpuQuotaId(
            quota_id=family["preemptible_gpu_quota_id" if spot else "gpu_quota_id"],
            dimensions=MappingProxyType({}),
            regional=True,
            scope="per-model",
            market=market,
            description=model_name,
        )
    ]
    if family.get("gpu_family"):
        found.append(
            GcpGpuQuotaId(
                quota_id=data.quotas["family_gpu_quota_id"],
                dimensions=MappingProxyType({"gpu_family": family["gpu_family"]}),
                regional=True,
                scope="family",
                market=None,
                description=f"GPUs of family {family['gpu_family']}",
            )
        )
    found.append(
        GcpGpuQuotaId(
            quota_id=data.quotas["global_gpu_quota_id"],
            dimensions=MappingProxyType({}),
            regional=False,
            scope="global",
            market=None,
            description="GPUs (all regions)",
        )
    )
    return tuple(found)


# ---------------------------------------------------------------------------------------
# Region choice (checklist C2)
# ---------------------------------------------------------------------------------------


def _usd(amount: float) -> str:
    return f"${amount:,.2f}" if amount >= 1 else f"${amount:.3f}"


def _as_list(value: Sequence[str] | str | None) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    return list(dict.fromkeys(value))


def choose_region(
    gpu: str,
    *,
    allowed_regions: Sequence[str] | None = None,
    cloud: Cloud = "aws",
    gpu_count: int = 1,
    preferred: Sequence[str] = (),
) -> RegionChoice:
    """Pick the region to run `gpu_count` x `gpu` in (checklist C2).

    A region qualifies when it offers an instance type with that GPU and at least
    `gpu_count` GPUs, and (when `allowed_regions` is given) it is allowed. In each region
    the instance type with the lowest price per GPU-hour is used (ties: fewer GPUs). Regions
    rank by `preferred` order first (e.g. where the data already lives), then by price per
    GPU-hour, then by how many zones offer the type. Every qualifying region is returned in
    `candidates` with a reason, every excluded one in `rejected` with why.

    Raises ConfigError when nothing qualifies, naming the regions that do offer the GPU.
    """
    (cloud_checked,) = _clouds(cloud)
    problems: list[Problem] = []
    model, memory = None, None
    try:
        model, memory = _parse_gpu(gpu, cloud_checked)
    except ConfigError as exc:
        problems.extend(exc.problems)
    if not isinstance(gpu_count, int) or gpu_count < 1:
        problems.append(Problem("gpu_count", f"gpu_count must be at least 1, not {gpu_count}."))
    allowed = _as_list(allowed_regions)
    if allowed is not None and not allowed:
        problems.append(
            Problem(
                "allowed_regions",
                "allowed_regions is empty, so no region can qualify.",
                "list at least one region, or pass None for no restriction.",
            )
        )
    if problems:
        raise ConfigError(problems)
    assert model is not None
    wanted = f"{model} {memory}GB" if memory else model
    plural = "GPU" if gpu_count == 1 else "GPUs"
    with_model = [t for t in _all_types(cloud_checked) if _gpu_matches(t, model, memory)]
    if not with_model:
        others = [c for c in CLOUDS if c != cloud_checked and instance_types(c, gpu=gpu)]
        raise ConfigError(
            f"{cloud_checked} offers no {wanted} instance type in the aistack catalog.",
            field="gpu",
            fix=(f"use cloud {others[0]!r}, or " if others else "")
            + f"choose one of the {cloud_checked} GPUs {list(gpu_models(cloud_checked))}.",
        )
    fitting = [t for t in with_model if t.gpu_count >= gpu_count]
    if not fitting:
        largest = max(t.gpu_count for t in with_model)
        raise ConfigError(
            f"no {cloud_checked} instance type has {gpu_count} x {wanted}; the largest has "
            f"{largest}.",
            field="gpu_count",
            fix=f"use at most {largest} GPUs per instance and run several instances.",
        )

    # Best instance type per offering region: lowest price per GPU-hour, then fewer GPUs.
    best: dict[str, tuple[InstanceType, float]] = {}
    for t in fitting:
        for region in t.regions:
            per_gpu = t.price_per_gpu_hour(region)
            current = best.get(region)
            if current is None or (per_gpu, t.gpu_count, t.name) < (
                current[1],
                current[0].gpu_count,
                current[0].name,
            ):
                best[region] = (t, per_gpu)
    offering = sorted(best)
    preferred_list = _as_list(preferred) or []
    what = f"{wanted} with at least {gpu_count} {plural}"

    rejected: dict[str, str] = {}
    qualifying: list[str] = []
    for region in offering:
        t, _ = best[region]
        if allowed is not None and region not in allowed:
            rejected[region] = (
                f"offers {t.name} at {_usd(t.price(region))}/h but is not in allowed_regions"
            )
        else:
            qualifying.append(region)
    for region in [*(allowed or []), *preferred_list]:
        if region not in best and region not in rejected:
            source = "allowed" if allowed and region in allowed else "preferred"
            rejected[region] = f"{source} region does not offer {what} (in the aistack catalog)"

    if not qualifying:
        raise ConfigError(
            f"none of the allowed regions {allowed} offers {what}; {cloud_checked} regions "
            f"that do: {offering}.",
            field="allowed_regions",
            fix=f"allow one of {offering} if data residency permits, or choose a GPU "
            "offered in an allowed region.",
        )

    def rank(region: str) -> tuple[int, float, int, str]:
        t, per_gpu = best[region]
        pref = preferred_list.index(region) if region in preferred_list else len(preferred_list)
        return (pref, per_gpu, -len(t.zone_suffixes[region]), region)

    candidates = []
    for region in sorted(qualifying, key=rank):
        t, per_gpu = best[region]
        zones = t.zones(region)
        estimate = " (estimated price)" if t.prices[region].estimated else ""
        reason = (
            f"offers {t.name} ({t.gpu_label}) at {_usd(t.price(region))}/h{estimate}, "
            f"{_usd(per_gpu)} per GPU-hour, in {len(zones)} zone(s); "
            + ("within allowed regions" if allowed is not None else "no region restriction")
            + ("; preferred" if region in preferred_list else "")
        )
        candidates.append(
            RegionCandidate(
                region=region,
                instance_type=t.name,
                price_per_hour=t.price(region),
                price_per_gpu_hour=per_gpu,
                zones=zones,
                reason=reason,
            )
        )
    winner, per_gpu = best[candidates[0].region]
    return RegionChoice(
        gpu=wanted,
        cloud=cloud_checked,
        gpu_count=gpu_count,
        region=candidates[0].region,
        instance_type=winner,
        price_per_hour=candidates[0].price_per_hour,
        price_per_gpu_hour=per_gpu,
        candidates=tuple(candidates),
        rejected=tuple(RejectedRegion(r, why) for r, why in rejected.items()),
    )

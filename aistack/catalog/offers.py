"""The catalog's public types: clouds and markets, offers, prices, quotas and sources."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from aistack.errors import ConfigError

Cloud = Literal["aws", "gcp"]
Market = Literal["on-demand", "spot"]

#: The clouds the catalog covers.
CLOUDS: tuple[Cloud, ...] = get_args(Cloud)
_MARKETS: tuple[Market, ...] = get_args(Market)


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
class CatalogInfo:
    """Catalog metadata for one cloud: as-of date, honest notes and sources, for docs."""

    cloud: Cloud
    as_of: str
    currency: str
    notes: tuple[str, ...]
    sources: tuple[PriceSource, ...]

"""The quotas an instance type counts against: AWS vCPU quotas, GCP GPU quotas."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from aistack.catalog._data import _load
from aistack.catalog.lookup import get
from aistack.catalog.offers import _MARKETS, Market, QuotaCode
from aistack.errors import ConfigError


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

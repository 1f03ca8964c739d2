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

from aistack.catalog.lookup import (
    catalog_info,
    find,
    get,
    gpu_models,
    instance_types,
    price_sources,
    region_zones,
    regions_offering,
    spot_fraction,
)
from aistack.catalog.offers import (
    CLOUDS,
    CatalogInfo,
    Cloud,
    InstanceType,
    Market,
    Price,
    PriceSource,
    QuotaCode,
)
from aistack.catalog.quotas import GcpGpuQuotaId, gpu_quota, gpu_quota_ids, vcpu_quota
from aistack.catalog.regions import RegionCandidate, RegionChoice, RejectedRegion, choose_region

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

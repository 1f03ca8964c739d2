"""The cloud-neutral half of the cost model: the assumptions every platform's estimators
price both columns on, and the naive baseline's serving model (docs/cost.md).

Each platform's estimators (`aistack.cost.estimators.aws`, `.gcp`, `.k8s`) read these, so
one assumption is stated once and the clouds' figures compare the same work.
"""

from __future__ import annotations

from dataclasses import dataclass

from aistack.cost import WorkloadProfile

# Storage: buckets of each kind, and the old versions a bucket without lifecycle rules keeps.

#: Months of overwritten versions a bucket without lifecycle rules holds on average, a year
#: in (every version kept).
NAIVE_MONTHS_OF_VERSIONS = 6


def current_gb(kind: str, profile: WorkloadProfile) -> float:
    """The profile's current bytes for a bucket of `kind` (any cloud)."""
    return {
        "dataset": profile.dataset_storage_gb,
        "checkpoints": profile.checkpoint_storage_gb,
        "models": profile.model_storage_gb,
        "logs": profile.log_storage_gb,
    }.get(kind, 0.0)


# Network: what a NAT would carry.

#: Times a month the training data set is read in full from object storage (epochs spread
#: over runs, re-syncs to fresh nodes); drives what a NAT would bill for it. An assumption:
#: say more with a bigger `dataset_storage_gb`, or change it here.
DATASET_READS_PER_MONTH = 4
#: Internet traffic through aistack's NAT (packages, public model weights). Object storage
#: does not count: it bypasses the NAT (an S3 gateway endpoint, Private Google Access).
NAT_INTERNET_GB_PER_MONTH = 50.0

# Container registries: what a repository holds.

#: Steady-state storage of one repository under keep-last-N / expire-untagged policies:
#: ~20 release images of a CUDA + framework image (5-10 GB compressed) share their base
#: layers, so each release adds its application layers, not the whole image.
REPOSITORY_GB = 20.0
#: Storage after a year without such policies, as a multiple of REPOSITORY_GB: every CI
#: build and every superseded base-image rebuild is kept forever.
NO_LIFECYCLE_GROWTH = 5.0

# Notebooks.

#: Hours of work per notebook session: one session per working day.
SESSION_HOURS = 8.0

# Serving: one model version's nodes, VMs or replicas over the month.

#: The cache can never answer everything; keeps the naive division finite.
MAX_HIT_RATIO = 0.95


@dataclass(frozen=True)
class ServingUnits:
    """One model version's serving units (nodes, VMs or replicas) on average over a month."""

    #: Under aistack: the version's share of the load, within its bounds.
    ours: float
    #: The naive baseline's: no gateway cache and no scaling in, at least the minimum.
    naive: float
    #: The cache hit ratio both are computed with (the profile's, at most MAX_HIT_RATIO).
    hit: float


def serving_units(
    profile: WorkloadProfile, weight: int, cached: bool, minimum: int, maximum: int
) -> ServingUnits:
    """The serving model every platform shares, per version with traffic weight `weight`
    (per cent):
      aistack: clamp(average replicas x w/100, min, max); the profile's
               `inference_average_replicas` already counts the gateway cache; with the
               cache off, the units are divided by (1 - cache hit ratio).
      naive:   no cache and no scaling in: max(average replicas x w/100 / (1 - hit), min),
               always on.
    A version at weight 0 costs its standby (one warm unit, or none) in both."""
    hit = min(profile.inference_cache_hit_ratio, MAX_HIT_RATIO)
    share = profile.inference_average_replicas * weight / 100
    units = share if cached else share / (1 - hit)
    return ServingUnits(
        ours=min(max(units, minimum), maximum),
        naive=max(share / (1 - hit), minimum),
        hit=hit,
    )

"""What a pool tells a quota component, on every cloud: the most capacity it can run in one
market (checklist C1). aws.GpuQuota and gcp.GpuQuota size their requests from these, listed
in their Args or reported by pool components passed as `pools=`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = ["CapacityNeed", "HasCapacityNeeds", "Market"]

Market = Literal["on-demand", "spot"]


@dataclass(frozen=True)
class CapacityNeed:
    """The most GPU capacity one pool can run in one market: what its quota must cover.

    `machine_types` are every instance or machine type the pool may launch; the pool is
    sized by the largest (most vCPUs on AWS, most GPUs on GCP), since at its maximum it may
    be all of that type. `region` is where the quota counts, on clouds whose GPU quotas are
    regional and whose pools say so (GCP); AWS pools leave it to the quota component.
    """

    pool: str
    machine_types: tuple[str, ...]
    max_nodes: int
    market: Market
    #: Nodes the pool may run above `max_nodes` for a while: an instance refresh or a MIG
    #: rolling update that launches replacements first, GKE's surge upgrade (maxSurge).
    surge_nodes: int = 0
    region: str | None = None

    @property
    def instance_types(self) -> tuple[str, ...]:
        """Deprecated: `machine_types` (aws.QuotaNeed's name for them); goes next minor."""
        warnings.warn(
            "CapacityNeed.instance_types is now machine_types", DeprecationWarning, stacklevel=2
        )
        return self.machine_types


@runtime_checkable
class HasCapacityNeeds(Protocol):
    """A component whose capacity needs GPU quota (training pools, serving tiers, notebooks).

    `quota_needs()` returns one need per (pool, market): a pool that can run both Spot and
    on-demand nodes returns one for each, each sized at its own maximum.
    """

    def quota_needs(self) -> list[CapacityNeed]: ...

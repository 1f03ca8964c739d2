"""Monthly cost over a recorded StackGraph, beside a naive baseline doing the same work.

Estimators are registered per resource type token. Each returns a `LineItem` with the
monthly USD under aistack's settings (Spot, scale-to-zero, lifecycle rules) and the naive
baseline's monthly USD for the same work (On-Demand, always on, no lifecycle rules), plus
the basis of the number in words. Prices come from the GPU catalog and each cloud's list
prices in `aistack.cost.prices.<cloud>`, each with its source. The estimators live in one
package per platform, `aistack.cost.estimators.<platform>`; what the platforms share is
`aistack.cost.baseline`. See docs/cost.md.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import Field

from aistack.config import WORKLOAD_TAG as WORKLOAD_KEY
from aistack.config import AistackModel
from aistack.engine.graph import Resource, StackGraph

__all__ = [
    "CostReport",
    "LineItem",
    "WorkloadProfile",
    "estimate",
    "estimator",
    "profile_from_config",
    "workload_from_config",
    "WORKLOAD_KEY",
]

HOURS_PER_MONTH = 730


class WorkloadProfile(AistackModel):
    """The work a month holds; costs scale with it, so state it (config key `workload`)."""

    training_gpu_hours_per_month: float = Field(
        400, ge=0, description="GPU-hours of training a month, across all jobs."
    )
    notebook_hours_per_month: float = Field(
        160, ge=0, description="Hours notebooks are open and running."
    )
    inference_requests_per_month: float = Field(
        5_000_000, ge=0, description="Requests reaching the inference tier."
    )
    inference_cache_hit_ratio: float = Field(
        0.2, ge=0, le=1, description="Share of requests answered by the gateway cache."
    )
    inference_average_replicas: float = Field(
        1.5, ge=0, description="Average serving nodes of the active version over the month."
    )
    dataset_storage_gb: float = Field(500, ge=0, description="Current dataset bytes.")
    checkpoint_storage_gb: float = Field(300, ge=0, description="Checkpoint bytes written.")
    model_storage_gb: float = Field(50, ge=0, description="Model artefact bytes.")
    log_storage_gb: float = Field(20, ge=0, description="Log bytes kept.")
    noncurrent_churn: float = Field(
        1.0,
        ge=0,
        description="Bytes overwritten a month as a share of current bytes; without "
        "lifecycle rules these old versions pile up for a year.",
    )


@dataclass(frozen=True)
class LineItem:
    component: str
    resource: str
    resource_type: str
    monthly_usd: float
    naive_monthly_usd: float
    basis: str


@dataclass
class CostReport:
    profile: WorkloadProfile
    items: list[LineItem]
    #: Where the workload came from: the config key, or "assumed" (the model's defaults).
    workload_source: str = "given"

    @property
    def workload_assumed(self) -> bool:
        return self.workload_source == WORKLOAD_ASSUMED

    @property
    def total(self) -> float:
        return round(sum(item.monthly_usd for item in self.items), 2)

    @property
    def naive_total(self) -> float:
        return round(sum(item.naive_monthly_usd for item in self.items), 2)

    @property
    def ratio(self) -> float:
        """Naive baseline over aistack: how many times more the naive setup costs."""
        return round(self.naive_total / self.total, 2) if self.total else 0.0

    def by_component(self) -> dict[str, tuple[float, float]]:
        totals: dict[str, tuple[float, float]] = {}
        for item in self.items:
            ours, naive = totals.get(item.component, (0.0, 0.0))
            totals[item.component] = (ours + item.monthly_usd, naive + item.naive_monthly_usd)
        return {k: (round(a, 2), round(b, 2)) for k, (a, b) in totals.items()}

    def as_dict(self) -> dict[str, object]:
        return {
            "profile": self.profile.model_dump(by_alias=True),
            "workload_source": self.workload_source,
            "total_usd": self.total,
            "naive_total_usd": self.naive_total,
            "ratio": self.ratio,
            "by_component": {
                k: {"monthly_usd": a, "naive_monthly_usd": b}
                for k, (a, b) in self.by_component().items()
            },
            # In a stable order: estimates follow the resources' registration order.
            "items": sorted(
                (item.__dict__ for item in self.items),
                key=lambda item: (
                    str(item["component"]),
                    str(item["resource"]),
                    str(item["basis"]),
                ),
            ),
        }


Estimator = Callable[[Resource, StackGraph, WorkloadProfile], tuple[float, float, str] | None]
_ESTIMATORS: dict[str, Estimator] = {}


def estimator(*tokens: str) -> Callable[[Estimator], Estimator]:
    """Register a function returning (monthly, naive monthly, basis) for these types."""

    def register(function: Estimator) -> Estimator:
        for token in tokens:
            _ESTIMATORS[token] = function
        return function

    return register


#: The config key holding the workload, whatever the project is called (docs/cost.md).
WORKLOAD_ASSUMED = "assumed"


def workload_from_config(graph: StackGraph) -> tuple[WorkloadProfile, str]:
    """The stated workload and the key it came from; the defaults, labelled "assumed",
    when the stack states none. `<project>:workload` is read too, for projects whose
    namespace is their own."""
    for key in dict.fromkeys((WORKLOAD_KEY, f"{graph.project}:workload")):
        raw = graph.config.get(key)
        if raw:
            try:
                data = json.loads(raw)
            except json.JSONDecodeError:
                data = raw
            return WorkloadProfile.parse(data, where=key), key
    return WorkloadProfile(), WORKLOAD_ASSUMED


def profile_from_config(graph: StackGraph) -> WorkloadProfile:
    return workload_from_config(graph)[0]


def estimate(graph: StackGraph, profile: WorkloadProfile | None = None) -> CostReport:
    from aistack.cost import estimators

    # Every module of every platform's package registers its estimators on import.
    for module in pkgutil.walk_packages(estimators.__path__, f"{estimators.__name__}."):
        importlib.import_module(module.name)
    source = "given"
    if profile is None:
        profile, source = workload_from_config(graph)
    items = []
    for resource in graph.resources:
        function = _ESTIMATORS.get(resource.type)
        if function is None:
            continue
        result = function(resource, graph, profile)
        if result is None:
            continue
        monthly, naive, basis = result
        component = graph.component_of(resource)
        items.append(
            LineItem(
                component=component.name if component else "(stack)",
                resource=resource.name,
                resource_type=resource.type,
                monthly_usd=round(monthly, 2),
                naive_monthly_usd=round(naive, 2),
                basis=basis,
            )
        )
    return CostReport(profile, items, source)

"""Region choice (checklist C2): ranking the regions that offer a GPU."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aistack.catalog._data import _all_types, _clouds
from aistack.catalog.lookup import _gpu_matches, _parse_gpu, gpu_models, instance_types
from aistack.catalog.offers import CLOUDS, Cloud, InstanceType
from aistack.errors import ConfigError, Problem


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

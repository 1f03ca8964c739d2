"""`aws.GpuQuota`: file the EC2 vCPU quota increases a stack's GPU pools need (checklist C1).

AWS limits GPU capacity per account and region by vCPUs, per family group (all P families
share the P quotas, all G families the "G and VT" quotas) and per market (On-Demand and
Spot are separate quotas). A new account's GPU quotas are often too small for even one
large instance, and a P increase can take days, so the request has to go in before the
first `pulumi up` that needs the capacity, not after the first launch fails.

Each pool is sized at its maximum: max nodes x the vCPUs of its largest instance type.
Pools in the same quota are summed, and headroom for what AWS launches above a pool's
maximum is added: by default one largest instance per pool (AWS Batch may exceed
`maxvCpus` by one instance; Auto Scaling exceeds its maximum by one instance while it
rebalances) plus each pool's surge (an inference tier's instance refresh runs up to twice
its nodes), then an optional percentage (rounded up to whole instances) and an optional
floor; one `aws.servicequotas.ServiceQuota` per quota code then asks AWS for that value.
What AWS does with the request, and why the value can only ever go up:
docs/components/aws/gpu-quota.md.

Pools come from configuration (`needs`) or from components that implement `HasQuotaNeeds`
(TrainingPool, InferenceTier), passed as `pools=`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

import pulumi
import pulumi_aws as aws
from pydantic import Field, field_validator, model_validator

from aistack import catalog
from aistack.aws._base import child_opts
from aistack.config import AistackModel, Governance
from aistack.contracts.capacity import CapacityNeed, HasCapacityNeeds, Market
from aistack.contracts.quota_needs import as_dicts, gather_needs
from aistack.errors import ConfigError, Problems

__all__ = [
    "GpuQuota",
    "GpuQuotaArgs",
    "HasQuotaNeeds",
    "PoolSizing",
    "QuotaNeed",
    "QuotaNeedArgs",
    "QuotaRequest",
    "DEFAULT_HEADROOM_INSTANCES_PER_POOL",
    "known_quota_codes",
    "plan_requests",
]


def QuotaNeed(  # noqa: N802 - the old class's name, kept one release
    pool: str,
    instance_types: tuple[str, ...],
    max_nodes: int,
    market: Market,
    surge_nodes: int = 0,
) -> CapacityNeed:
    """Deprecated: `aistack.contracts.capacity.CapacityNeed`, one need on every cloud
    (`instance_types` is its `machine_types`); goes next minor."""
    warnings.warn(
        "aws QuotaNeed is now aistack.contracts.capacity.CapacityNeed (machine_types=...)",
        DeprecationWarning,
        stacklevel=2,
    )
    return CapacityNeed(pool, tuple(instance_types), max_nodes, market, surge_nodes)


if TYPE_CHECKING:
    #: Deprecated: `aistack.contracts.capacity.HasCapacityNeeds`; goes next minor.
    HasQuotaNeeds = HasCapacityNeeds
else:

    def __getattr__(name: str) -> object:
        # The deprecated alias warns when it is used, as the other old names do.
        if name == "HasQuotaNeeds":
            warnings.warn(
                "aws HasQuotaNeeds is now aistack.contracts.capacity.HasCapacityNeeds",
                DeprecationWarning,
                stacklevel=2,
            )
            return HasCapacityNeeds
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Default `headroom_instances_per_pool`: what Batch and Auto Scaling may exceed a maximum by.
DEFAULT_HEADROOM_INSTANCES_PER_POOL = 1


class QuotaNeedArgs(AistackModel):
    """A pool's quota need as configuration: `{pool, instanceTypes, maxNodes, market}`."""

    @model_validator(mode="before")
    @classmethod
    def _from_a_capacity_need(cls, data: Any) -> Any:
        # A pool reports a CapacityNeed: its machine types are EC2 instance types here, and
        # its region (None on AWS) is the quota component's.
        if isinstance(data, dict) and "machine_types" in data:
            data = {k: v for k, v in data.items() if k != "region" or v is not None}
            data["instance_types"] = data.pop("machine_types")
        return data

    pool: str = Field(
        min_length=1,
        description="The pool's name; it appears in the request's summary. Required.",
    )
    instance_types: tuple[str, ...] = Field(
        min_length=1,
        description="Every GPU instance type the pool may launch, e.g. ['g5.12xlarge']. "
        "Required; the largest (by vCPUs) sizes the request.",
    )
    max_nodes: int = Field(
        ge=1, description="The pool's maximum node count (its autoscaling maximum). Required."
    )
    market: Market = Field(
        description="'spot' or 'on-demand'. Required, no default: the market selects a "
        "different quota, and guessing it would file the wrong request."
    )
    surge_nodes: int = Field(
        0,
        ge=0,
        description="Nodes the pool may run above maxNodes for a while (an instance refresh "
        "that launches replacements first). Default 0; aws.InferenceTier reports its "
        "refresh surge itself.",
    )

    @field_validator("instance_types")
    @classmethod
    def _normalised(cls, types: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.strip().lower() for t in types))


VcpuCount = Annotated[int, Field(ge=1)]


class GpuQuotaArgs(AistackModel):
    """Where to request quota and which pools to size it from."""

    region: str = Field(
        description="Region to request quota in. Quotas are per account and region, so "
        "this must be the pools' region; it must be in governance.allowed_regions (C4). "
        "Explicit: never the provider's default."
    )
    governance: Governance
    needs: tuple[QuotaNeedArgs, ...] = Field(
        (),
        description="Pools sized from configuration, each {pool, instanceTypes, maxNodes, "
        "market}. Default: none, for stacks that pass pool components as `pools=`; at "
        "least one need is required across both.",
    )
    headroom_instances_per_pool: int = Field(
        DEFAULT_HEADROOM_INSTANCES_PER_POOL,
        ge=0,
        description="Instances of its largest type added per pool, on top of its maximum "
        "and its surge. Default 1: AWS Batch (BEST_FIT_PROGRESSIVE and the SPOT_*_OPTIMIZED "
        "strategies) may exceed maxvCpus by one instance, and Auto Scaling exceeds its "
        "maximum by one instance (or 10 %) while it rebalances zones; at the exact maximum "
        "that launch fails on the quota. 0 requests the maxima exactly.",
    )
    headroom_percent: float = Field(
        0,
        ge=0,
        le=100,
        description="Extra quota on top of the pools' maximum, in percent (20 means 20%), "
        "rounded up to whole instances of the smallest type in that quota. Default 0: the "
        "per-pool headroom and the pools' surge already cover what AWS launches above the "
        "maxima; add a percentage for capacity outside the pools (ad-hoc runs).",
    )
    floors: dict[str, VcpuCount] = Field(
        default_factory=dict,
        description="Minimum vCPUs to request per quota code, e.g. {'L-7212CCBC': 384}. "
        "Default: none. Set a floor to the account's current value when it is already "
        "above what the pools need (a request can never lower a quota, and the provider "
        "refuses to create one below the current value), or to keep a quota when pools "
        "shrink. A floor for a quota no pool uses is requested on its own.",
    )

    @field_validator("needs", mode="before")
    @classmethod
    def _needs_may_be_dataclasses(cls, needs: Any) -> Any:
        return as_dicts(needs)


@dataclass(frozen=True)
class PoolSizing:
    """One pool's share of one quota: `max_nodes` x `instance_type` = `vcpus`."""

    pool: str
    instance_type: str
    max_nodes: int
    vcpus: int
    #: vCPUs of one `instance_type` node: the unit of the pool's headroom.
    node_vcpus: int = 0
    #: Nodes the pool may run above max_nodes for a while (CapacityNeed.surge_nodes).
    surge_nodes: int = 0


@dataclass(frozen=True)
class QuotaRequest:
    """What GpuQuota asks AWS for in one quota, and the arithmetic behind the number."""

    quota_code: str
    quota_name: str
    service_code: str
    family_group: str
    market: Market
    pools: tuple[PoolSizing, ...]
    #: The pools' maximum, summed.
    pool_vcpus: int
    #: Everything above the maxima: per-pool instances, surges and the percentage.
    headroom_vcpus: int
    floor: int | None
    #: The value requested: max(pool_vcpus + headroom_vcpus, floor).
    vcpus: int
    summary: str


@cache
def known_quota_codes() -> Mapping[str, catalog.QuotaCode]:
    """Every EC2 vCPU quota the catalog's GPU types count against, by quota code."""
    codes: dict[str, catalog.QuotaCode] = {}
    for t in catalog.instance_types("aws"):
        for market in ("on-demand", "spot"):
            quota = catalog.vcpu_quota(t.name, market)  # type: ignore[arg-type]
            codes.setdefault(quota.quota_code, quota)
    return codes


def _label(quota: catalog.QuotaCode) -> str:
    market = "Spot" if quota.market == "spot" else "On-Demand"
    return f"{market} {quota.family_group} instances"


def _summary(
    quota: catalog.QuotaCode,
    pools: Sequence[PoolSizing],
    headroom: int,
    headroom_percent: float,
    unit_type: str | None,
    floor: int | None,
    vcpus: int,
    instances_per_pool: int = 0,
) -> str:
    text = f"{_label(quota)}: {vcpus} vCPUs"
    pool_headroom = sum((instances_per_pool + p.surge_nodes) * p.node_vcpus for p in pools)
    sized = sum(p.vcpus for p in pools) + pool_headroom + headroom
    if floor is not None and floor > sized:
        text += (
            f" (explicit floor; the pools need {sized})"
            if pools
            else " (explicit floor; no pool in this stack uses this quota)"
        )
    if len(pools) == 1:
        p = pools[0]
        text += f" for pool {p.pool} ({p.max_nodes} x {p.instance_type})"
    elif pools:
        text += " for pools " + ", ".join(
            f"{p.pool} ({p.max_nodes} x {p.instance_type}, {p.vcpus} vCPUs)" for p in pools
        )
    if pool_headroom:
        parts = []
        for p in pools:
            extra = []
            if instances_per_pool:
                extra.append(f"{instances_per_pool} x {p.instance_type} above the maximum")
            if p.surge_nodes:
                extra.append(f"{p.surge_nodes} x {p.instance_type} refresh surge")
            if extra:
                parts.append(f"{p.pool}: " + " and ".join(extra))
        text += f" plus {pool_headroom} vCPUs pool headroom (" + "; ".join(parts) + ")"
    if headroom:
        text += (
            f" plus {headroom} vCPUs headroom ({headroom_percent:g}%, rounded up to whole "
            f"{unit_type})"
        )
    return text


def plan_requests(
    sizings: Mapping[str, Sequence[tuple[PoolSizing, str]]],
    *,
    headroom_percent: float = 0,
    headroom_instances_per_pool: int = DEFAULT_HEADROOM_INSTANCES_PER_POOL,
    floors: Mapping[str, int] | None = None,
) -> list[QuotaRequest]:
    """The request per quota code from validated pool sizings.

    `sizings` maps a quota code to (pool sizing, smallest type that pool may launch in
    this quota) pairs. Each pool adds `headroom_instances_per_pool` plus its surge nodes of
    its largest type. The smallest type is the percentage headroom's rounding unit:
    headroom smaller than one instance can never be used, since a launch needs the
    instance's full vCPUs.
    """
    floors = dict(floors or {})
    codes = known_quota_codes()
    requests = []
    for code in sorted(set(sizings) | set(floors)):
        quota = codes[code]
        entries = list(sizings.get(code, ()))
        pools = tuple(p for p, _ in entries)
        pool_vcpus = sum(p.vcpus for p in pools)
        headroom, unit_type = 0, None
        if entries and headroom_percent > 0:
            unit = min((catalog.get(smallest) for _, smallest in entries), key=_size_key)
            wanted = math.ceil(pool_vcpus * headroom_percent / 100)
            headroom = math.ceil(wanted / unit.vcpus) * unit.vcpus
            unit_type = unit.name
        pool_headroom = sum(
            (headroom_instances_per_pool + p.surge_nodes) * p.node_vcpus for p in pools
        )
        floor = floors.get(code)
        vcpus = max(pool_vcpus + pool_headroom + headroom, floor or 0)
        requests.append(
            QuotaRequest(
                quota_code=code,
                quota_name=quota.quota_name,
                service_code=quota.service_code,
                family_group=quota.family_group,
                market=quota.market,
                pools=pools,
                pool_vcpus=pool_vcpus,
                headroom_vcpus=pool_headroom + headroom,
                floor=floor,
                vcpus=vcpus,
                summary=_summary(
                    quota,
                    pools,
                    headroom,
                    headroom_percent,
                    unit_type,
                    floor,
                    vcpus,
                    headroom_instances_per_pool,
                ),
            )
        )
    return requests


def _size_key(t: catalog.InstanceType) -> tuple[int, str]:
    return (t.vcpus, t.name)


class GpuQuota(pulumi.ComponentResource):
    """EC2 vCPU quota increase requests sized from the stack's GPU pools (checklist C1)."""

    requests: dict[str, QuotaRequest]
    quotas: dict[str, aws.servicequotas.ServiceQuota]
    requested_vcpus: dict[str, int]
    quota_names: dict[str, str]
    summaries: dict[str, str]
    request_status: dict[str, pulumi.Output[str]]

    def __init__(
        self,
        name: str,
        args: GpuQuotaArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        pools: Sequence[HasCapacityNeeds] = (),
    ) -> None:
        def checks(args: GpuQuotaArgs) -> Any:
            problems = Problems()
            region_problem = args.governance.region_problem(args.region, f"{name}.region")
            if region_problem:
                problems.items.append(region_problem)

            needs = gather_needs(
                name,
                args.needs,
                pools,
                problems,
                model=QuotaNeedArgs,
                protocol=HasCapacityNeeds,
                types_field=("instanceTypes", "instance_types"),
                identity=lambda need: (need.pool, need.market),
                describe=lambda need: f"{need.pool!r} ({need.market})",
                pools_fix="pass pool components (TrainingPool, InferenceTier), or describe "
                "the pool in needs.",
                needs_fix="list the pools in needs ({pool, instanceTypes, maxNodes, market}) "
                "or pass pool components as pools=.",
            )

            codes = known_quota_codes()
            for code in args.floors:
                if code not in codes:
                    known = ", ".join(f"{c} ({q.quota_name})" for c, q in sorted(codes.items()))
                    problems.add(
                        f"{name}.floors.{code}",
                        f"{code!r} is not an EC2 GPU vCPU quota code.",
                        f"use one of {known}.",
                    )

            sizings = self._size(needs, args.region, problems)
            problems.raise_if_any()
            return sizings

        args, sizings = GpuQuotaArgs.validate_with(args, checks, where=name)

        super().__init__("aistack:index:AwsGpuQuota", name, {"region": args.region}, opts)
        self.args = args
        self.region = args.region
        plan = plan_requests(
            sizings,
            headroom_percent=args.headroom_percent,
            headroom_instances_per_pool=args.headroom_instances_per_pool,
            floors=args.floors,
        )
        self.requests = {r.quota_code: r for r in plan}
        self.requested_vcpus = {r.quota_code: r.vcpus for r in plan}
        self.quota_names = {r.quota_code: r.quota_name for r in plan}
        self.summaries = {r.quota_code: r.summary for r in plan}
        self.quotas = {}
        self.request_status = {}
        for request in plan:
            # Service Quotas resources take no tags. A quota only ever goes up: AWS refuses
            # an increase request at or below the current value, the provider refuses to
            # create this resource below it, and its delete does nothing, so `pulumi
            # destroy` leaves the quota where it is.
            # Ask for max(current, needed): a request below the account's current quota
            # would fail the create, and shrinking pools must not try to lower it.
            current = aws.servicequotas.get_service_quota_output(
                service_code=request.service_code,
                quota_code=request.quota_code,
                region=args.region,
                opts=pulumi.InvokeOutputOptions(parent=self),
            ).value
            quota = aws.servicequotas.ServiceQuota(
                f"{name}-{request.quota_code}",
                service_code=request.service_code,
                quota_code=request.quota_code,
                value=current.apply(functools.partial(_at_least, request.vcpus)),
                region=args.region,
                opts=child_opts(self),
            )
            self.quotas[request.quota_code] = quota
            self.request_status[request.quota_code] = quota.request_status

        self.register_outputs(
            {
                "region": args.region,
                "requests": {
                    r.quota_code: {
                        "quota_name": r.quota_name,
                        "market": r.market,
                        "family_group": r.family_group,
                        "requested_vcpus": r.vcpus,
                        "summary": r.summary,
                        "request_status": self.request_status[r.quota_code],
                    }
                    for r in plan
                },
            }
        )

    @staticmethod
    def _size(
        needs: Sequence[tuple[str, QuotaNeedArgs, str]], region: str, problems: Problems
    ) -> dict[str, list[tuple[PoolSizing, str]]]:
        """Per quota code, each pool's sizing and its smallest type; every unknown,
        unoffered or non-AWS type is added to `problems`."""
        sizings: dict[str, list[tuple[PoolSizing, str]]] = {}
        for where, need, types_field in needs:
            by_code: dict[str, list[catalog.InstanceType]] = {}
            for j, type_name in enumerate(need.instance_types):
                field = f"{where}.{types_field}.{j}"
                if catalog.find("gcp", type_name) is not None:
                    problems.add(
                        field,
                        f"{type_name!r} is a GCP machine type; GpuQuota requests AWS EC2 "
                        "vCPU quota.",
                        "use an AWS GPU instance type; GCP limits GPUs per model and region "
                        "and is requested separately.",
                    )
                    continue
                try:
                    t = catalog.get(type_name, cloud="aws")
                    quota = catalog.vcpu_quota(t.name, need.market)
                except ConfigError as error:
                    problems.extend(
                        ConfigError(dataclasses.replace(p, field=field) for p in error.problems)
                    )
                    continue
                if not t.offered_in(region):
                    problems.add(
                        field,
                        f"{t.name} is not offered in {region} (aistack catalog); it is "
                        f"offered in {list(t.regions)}.",
                        f"pick a type offered in {region}, e.g. "
                        f"{_offered_alternatives(t, region)}, or use another region.",
                    )
                    continue
                by_code.setdefault(quota.quota_code, []).append(t)
            # A pool mixing G and P types could run entirely in either quota at its
            # maximum, so each quota it touches is sized for all of its nodes.
            for code, types in by_code.items():
                largest = max(types, key=_size_key)
                sizing = PoolSizing(
                    pool=need.pool,
                    instance_type=largest.name,
                    max_nodes=need.max_nodes,
                    vcpus=need.max_nodes * largest.vcpus,
                    node_vcpus=largest.vcpus,
                    surge_nodes=need.surge_nodes,
                )
                sizings.setdefault(code, []).append((sizing, min(types, key=_size_key).name))
        return sizings


def _offered_alternatives(t: catalog.InstanceType, region: str) -> list[str]:
    same_gpu = [
        other.name
        for other in catalog.instance_types("aws", gpu=t.gpu_model, region=region)
        if other.gpu_count == t.gpu_count
    ]
    return same_gpu[:3] or [
        other.name for other in catalog.instance_types("aws", region=region)[:3]
    ]


def _at_least(needed: int, current: float) -> float:
    """The value to request: never below the account's current quota."""
    return max(float(current), float(needed))

"""`gcp.GpuQuota`: file the Cloud Quotas GPU quota preferences a stack's pools need (C1).

Google Cloud limits GPUs, not vCPUs: per GPU model and region, with Spot VMs counted in a
separate PREEMPTIBLE- quota, all under the project-wide `GPUS-ALL-REGIONS-per-project`
ceiling, which is 0 in a new project (the first GPU VM fails with *"Quota
'GPUS_ALL_REGIONS' exceeded. Limit: 0.0 globally"*); H100 and newer also count against
the GPU family quota `GPUS-PER-GPU-FAMILY-per-project-region` (dimension `gpu_family`).
An increase is decided by Google on its own clock, so it has to be filed before the first
`pulumi up` that needs the GPUs.

Each pool is sized at its maximum in GPUs: (max nodes + surge nodes) x the GPUs of its
largest machine type. Pools sharing a quota (same quota id and dimensions) are summed;
the family quota and the global ceiling count both markets, the ceiling every region. An
optional percentage is added, rounded up to whole GPUs. One `cloudquota.SQuotaPreference`
per quota then asks for max(current value, needed): the current value is read first with
`getSQuotaInfo`, so a grant above what the pools need is never lowered, and
`ignore_safety_checks` is never set. Quota ids come from the catalog
(`catalog.gpu_quota_ids`), so pools and this component agree on them. How approval works
and how to follow it: docs/components/gcp/gpu-quota.md.

Pools come from configuration (`needs`) or from components implementing `HasCapacityNeeds`
(`quota_needs()` returning `GpuNeed`s), passed as `pools=`.
"""

from __future__ import annotations

import functools
import math
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import pulumi
import pulumi_gcp as gcp
from pydantic import Field, field_validator

from aistack import catalog
from aistack._adopt import adopting
from aistack.config import AistackModel, Governance
from aistack.contracts.capacity import CapacityNeed, HasCapacityNeeds, Market
from aistack.contracts.quota_needs import as_dicts, gather_needs
from aistack.errors import ConfigError, Problem, Problems
from aistack.gcp._base import child_opts
from aistack.gcp.project_services import ProjectServices

__all__ = [
    "GpuNeed",
    "GpuNeedArgs",
    "GpuQuota",
    "GpuQuotaArgs",
    "GpuQuotaRequest",
    "HasCapacityNeeds",
    "PoolGpus",
    "current_value",
    "plan_requests",
    "preference_id",
]


QUOTAS_API = "cloudquotas.googleapis.com"
COMPUTE_API = "compute.googleapis.com"
#: Cloud Quotas service name of Compute Engine's quotas.
SERVICE = "compute.googleapis.com"
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


def GpuNeed(  # noqa: N802 - the old class's name, kept one release
    pool: str,
    region: str,
    machine_types: tuple[str, ...],
    max_nodes: int,
    market: Market,
    surge_nodes: int = 0,
) -> CapacityNeed:
    """Deprecated: `aistack.contracts.capacity.CapacityNeed`, one need on every cloud (with
    `region=`); goes next minor."""
    warnings.warn(
        "gcp.GpuNeed is now aistack.contracts.capacity.CapacityNeed (region=...)",
        DeprecationWarning,
        stacklevel=2,
    )
    return CapacityNeed(pool, tuple(machine_types), max_nodes, market, surge_nodes, region)


if TYPE_CHECKING:
    #: Deprecated: `aistack.contracts.capacity.HasCapacityNeeds`; goes next minor.
    HasGpuNeeds = HasCapacityNeeds
else:

    def __getattr__(name: str) -> object:
        # The deprecated alias warns when it is used, as the other old names do.
        if name == "HasGpuNeeds":
            warnings.warn(
                "gcp HasGpuNeeds is now aistack.contracts.capacity.HasCapacityNeeds",
                DeprecationWarning,
                stacklevel=2,
            )
            return HasCapacityNeeds
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class GpuNeedArgs(AistackModel):
    """A pool's GPU need as configuration: `{pool, region, machineTypes, maxNodes, market}`."""

    pool: str = Field(
        min_length=1, description="The pool's name; it appears in the request's summary."
    )
    region: str = Field(
        description="Region the pool runs in, e.g. 'europe-west4': GPU quotas are per "
        "region. Must be in governance.allowed_regions (C4). Required."
    )
    machine_types: tuple[str, ...] = Field(
        min_length=1,
        description="Every GCP GPU machine type the pool may launch, e.g. "
        "['a3-highgpu-8g']. Required; the one with the most GPUs sizes the request.",
    )
    max_nodes: int = Field(
        ge=1, description="The pool's maximum node count (its autoscaling maximum). Required."
    )
    market: Market = Field(
        description="'spot' or 'on-demand'. Required, no default: Spot VMs count against "
        "the PREEMPTIBLE- quota, a different quota from on-demand."
    )
    surge_nodes: int = Field(
        0,
        ge=0,
        description="Nodes above maxNodes the pool may run for a while: GKE surge upgrades "
        "add maxSurge nodes (1 by default), a MIG rolling update its maxSurge. Default 0.",
    )

    @field_validator("machine_types")
    @classmethod
    def _normalised(cls, types: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.strip().lower() for t in types))


class GpuQuotaArgs(AistackModel):
    """Which pools to size GPU quota from, and whom Google may ask about the request."""

    governance: Governance
    contact_email: str = Field(
        description="E-mail address Google may contact about the request. Required: the "
        "Cloud Quotas API requires it for an increase, and the account must hold quota "
        "update permission on the project."
    )
    needs: tuple[GpuNeedArgs, ...] = Field(
        (),
        description="Pools sized from configuration, each {pool, region, machineTypes, "
        "maxNodes, market}. Default: none, for stacks that pass pool components as "
        "`pools=`; at least one need is required across both.",
    )
    headroom_percent: float = Field(
        0,
        ge=0,
        le=100,
        description="Extra GPUs on top of the pools' maximum, in percent, rounded up to "
        "whole machines of the smallest type the pools in that quota launch (a VM takes "
        "all its GPUs or none). Default 0: pools report their surge themselves; add a "
        "percentage for capacity outside the pools (ad-hoc VMs, notebooks).",
    )
    include_global_ceiling: bool = Field(
        True,
        description="Also request GPUS-ALL-REGIONS-per-project, the project-wide ceiling "
        "(0 in new projects). Default on: without it no GPU VM starts, whatever the "
        "regional grants. Off only where an organisation files it centrally.",
    )
    justification: str | None = Field(
        None,
        max_length=500,
        description="Why the GPUs are needed, sent with every request; default: the "
        "sizing summary (pools, machine types, node counts).",
    )
    mode: Literal["file", "check"] = Field(
        "file",
        description="'file': file a preference per quota (the stack that owns the project's "
        "quotas). 'check': file nothing and read each quota in force, warning where it "
        "falls short: for the other stacks of a project whose quotas one stack files "
        "(there is one preference per quota and dimensions in a project, sized by whoever "
        "files it; a second stack filing the same one fails with 409). AIS-C1-02 takes a "
        "checked need as delegated to the project's quota stack.",
    )
    adopt_filed: bool | tuple[str, ...] = Field(
        False,
        description="Take over the preferences an earlier deployment filed (Pulumi's import, "
        "by their project-level ids) instead of creating them: `true` for all, or the "
        "preference ids that were filed (when a new pool adds a quota, its preference is "
        "new: an import of it would fail). A preference can never be deleted and there is "
        "one per quota and dimensions in a project, so `destroy` only forgets it and the "
        "next create of it fails with 409: set this for the stack's deployments after its "
        "first. Default off: the project's first.",
    )

    def adopts(self, preference_id: str) -> bool:
        """Whether the preference `preference_id` is taken over rather than created."""
        if isinstance(self.adopt_filed, bool):
            return self.adopt_filed
        return preference_id in self.adopt_filed

    @field_validator("needs", mode="before")
    @classmethod
    def _needs_may_be_dataclasses(cls, needs: Any) -> Any:
        return as_dicts(needs)


@dataclass(frozen=True)
class PoolGpus:
    """One pool's share of one quota: (max_nodes + surge_nodes) x `machine_type`."""

    pool: str
    region: str
    machine_type: str
    max_nodes: int
    surge_nodes: int
    gpus: int
    #: GPUs of the smallest machine type the pool may launch in this quota: the unit of
    #: the percentage headroom.
    smallest_gpus: int = 1


@dataclass(frozen=True)
class GpuQuotaRequest:
    """What GpuQuota asks Google for in one quota, and the arithmetic behind the number."""

    quota_id: str
    #: The preference's dimensions: `region` for regional quotas, plus `gpu_family` for
    #: the family quota; empty for GPUS-ALL-REGIONS.
    dimensions: Mapping[str, str]
    scope: str
    description: str
    pools: tuple[PoolGpus, ...]
    pool_gpus: int
    headroom_gpus: int
    #: The GPUs needed: pool_gpus + headroom_gpus. The preference asks for
    #: max(current value, gpus).
    gpus: int
    preference_id: str
    summary: str


def preference_id(quota_id: str, dimensions: Mapping[str, str]) -> str:
    """The stable quota preference id of a quota and its dimensions. One preference exists
    per quota and dimensions in a project (QuotaPreference reference), so the id names
    exactly those, never the stack: a second stack filing the same quota meets the first
    one's preference (import it) instead of a duplicate."""
    base = quota_id.removesuffix("-per-project-region").removesuffix("-per-project")
    parts = [base, dimensions.get("gpu_family", ""), dimensions.get("region", "")]
    text = "aistack-" + "-".join(p for p in parts if p)
    return re.sub(r"[^a-z0-9-]+", "-", text.lower())[:63].rstrip("-")


def plan_requests(
    sizings: Sequence[tuple[catalog.GcpGpuQuotaId, PoolGpus]],
    *,
    headroom_percent: float = 0,
    include_global_ceiling: bool = True,
) -> list[GpuQuotaRequest]:
    """One request per (quota id, dimensions) from every pool's share of it."""
    grouped: dict[tuple[str, tuple[tuple[str, str], ...]], list[PoolGpus]] = {}
    quotas: dict[tuple[str, tuple[tuple[str, str], ...]], catalog.GcpGpuQuotaId] = {}
    for quota, share in sizings:
        if quota.scope == "global" and not include_global_ceiling:
            continue
        key = quota.key(share.region)
        grouped.setdefault(key, []).append(share)
        quotas.setdefault(key, quota)
    requests = []
    for key in sorted(grouped, key=lambda k: (_SCOPE_ORDER[quotas[k].scope], k)):
        quota, pools = quotas[key], tuple(grouped[key])
        dimensions = dict(key[1])
        pool_gpus = sum(p.gpus for p in pools)
        headroom = 0
        if headroom_percent:
            unit = min(p.smallest_gpus for p in pools)
            headroom = math.ceil(pool_gpus * headroom_percent / 100 / unit) * unit
        gpus = pool_gpus + headroom
        where = f" in {dimensions['region']}" if "region" in dimensions else " (all regions)"
        text = f"{quota.quota_id}{where}: {gpus} GPUs for " + ", ".join(
            f"{p.pool} ({p.max_nodes}{f'+{p.surge_nodes}' if p.surge_nodes else ''} x "
            f"{p.machine_type}{'' if 'region' in dimensions else ' in ' + p.region}, "
            f"{p.gpus} GPUs)"
            for p in pools
        )
        if headroom:
            text += f" plus {headroom} GPUs headroom ({headroom_percent:g}%)"
        requests.append(
            GpuQuotaRequest(
                quota_id=quota.quota_id,
                dimensions=dimensions,
                scope=quota.scope,
                description=quota.description,
                pools=pools,
                pool_gpus=pool_gpus,
                headroom_gpus=headroom,
                gpus=gpus,
                preference_id=preference_id(quota.quota_id, dimensions),
                summary=text,
            )
        )
    return requests


_SCOPE_ORDER = {"per-model": 0, "family": 1, "global": 2}


class GpuQuota(pulumi.ComponentResource):
    """Cloud Quotas GPU quota preferences sized from the stack's GPU pools (checklist C1)."""

    args: GpuQuotaArgs
    project: str
    requests: dict[str, GpuQuotaRequest]
    preferences: dict[str, gcp.cloudquota.SQuotaPreference]
    requested_gpus: dict[str, int]
    summaries: dict[str, str]
    granted_values: dict[str, pulumi.Output[str]]
    reconciling: dict[str, pulumi.Output[bool]]

    def __init__(
        self,
        name: str,
        args: GpuQuotaArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
        *,
        services: ProjectServices | None = None,
        pools: Sequence[HasCapacityNeeds] = (),
    ) -> None:
        """`services`: the stack's ProjectServices (its project is the quotas' project; it
        must enable cloudquotas and compute). `pools`: components whose `quota_needs()`
        size the requests, on top of `needs`."""

        # Each configured need is validated on its own first: pydantic would reject the
        # whole `needs` field for one bad count and skip every check of the other needs
        # (their regions, machine types), and the promise is every problem at once.
        args, bad_needs, need_paths = _split_needs(args, name)

        def checks(args: GpuQuotaArgs) -> list[tuple[catalog.GcpGpuQuotaId, PoolGpus]]:
            problems = Problems(list(bad_needs))
            assert services is not None
            problems.items.extend(services.missing(QUOTAS_API, COMPUTE_API, where=name))
            # Checked here, not by a field validator, so a typo in the address does not
            # hide the needs' problems (a bad required field skips every check).
            if not _EMAIL.fullmatch(args.contact_email):
                problems.add(
                    f"{name}.contactEmail",
                    f"{args.contact_email!r} is not an e-mail address.",
                    "give the address Google may contact about the quota request.",
                )
            needs = gather_needs(
                name,
                args.needs,
                pools,
                problems,
                configured_paths=need_paths,
                model=GpuNeedArgs,
                protocol=HasCapacityNeeds,
                types_field=("machineTypes", "machine_types"),
                identity=lambda need: (need.pool, need.region, need.market),
                describe=lambda need: f"{need.pool!r} ({need.market}, {need.region})",
                pools_fix="pass GCP pool components, or describe the pool in needs.",
                needs_fix="list the pools in needs ({pool, region, machineTypes, maxNodes, "
                "market}) or pass pool components as pools=.",
            )
            sizings = _size(needs, args.governance, problems)
            if not isinstance(args.adopt_filed, bool) and not problems.items:
                planned = {
                    r.preference_id
                    for r in plan_requests(
                        sizings,
                        headroom_percent=args.headroom_percent,
                        include_global_ceiling=args.include_global_ceiling,
                    )
                }
                unknown = sorted(set(args.adopt_filed) - planned)
                if unknown:
                    problems.add(
                        f"{name}.adoptFiled",
                        f"{unknown} are not preferences this GpuQuota files.",
                        f"list only ids it files: {sorted(planned)}.",
                    )
            problems.raise_if_any()
            return sizings

        args, sizings = GpuQuotaArgs.validate_with(
            args, checks, where=name, wiring={"services": services}
        )
        assert services is not None
        super().__init__("aistack:index:GcpGpuQuota", name, {"project": services.project}, opts)
        self.args = args
        self.project = services.project
        plan = plan_requests(
            sizings,
            headroom_percent=args.headroom_percent,
            include_global_ceiling=args.include_global_ceiling,
        )
        parent = f"projects/{self.project}"
        apis = services.enabling(QUOTAS_API, COMPUTE_API)
        self.requests = {r.preference_id: r for r in plan}
        if args.mode == "check":
            self._check(name, plan, parent, apis)
            return
        self.requested_gpus = {r.preference_id: r.gpus for r in plan}
        self.summaries = {r.preference_id: r.summary for r in plan}
        self.preferences = {}
        self.granted_values = {}
        self.reconciling = {}
        for request in plan:
            # Never lower a granted quota: read what is in force now and ask for at least
            # that. A preference below it would be a decrease, which the API applies
            # (subject to its safety checks, which aistack never ignores).
            info = gcp.cloudquota.get_s_quota_info_output(
                parent=parent,
                service=SERVICE,
                quota_id=request.quota_id,
                opts=pulumi.InvokeOutputOptions(parent=self, depends_on=apis),
            )
            preferred = info.dimensions_infos.apply(
                functools.partial(_preferred_value, request.gpus, dict(request.dimensions))
            )
            justification = (
                f"{args.justification} ({request.summary})"
                if args.justification
                else f"aistack GpuQuota {name}: {request.summary}"
            )
            preference = gcp.cloudquota.SQuotaPreference(
                f"{name}-{request.preference_id.removeprefix('aistack-')}",
                parent=parent,
                service=SERVICE,
                quota_id=request.quota_id,
                # The stable quota preference id (the API's quotaPreferenceId).
                name=request.preference_id,
                dimensions=dict(request.dimensions) or None,
                quota_config=gcp.cloudquota.SQuotaPreferenceQuotaConfigArgs(
                    preferred_value=preferred
                ),
                contact_email=args.contact_email,
                justification=justification,
                # Cloud Quotas v1 has no delete for quota preferences (create, get, list
                # and patch: CloudQuotasClient service description), and a granted quota
                # must outlive the stack: `pulumi destroy` only forgets them. No invoke
                # reads a preference, so whether one was filed is the stack's to say
                # (adoptFiled); the id is the provider's import id.
                opts=adopting(
                    child_opts(self, depends_on=apis, retain_on_delete=True),
                    f"{parent}/locations/global/quotaPreferences/{request.preference_id}"
                    if args.adopts(request.preference_id)
                    else None,
                ),
            )
            self.preferences[request.preference_id] = preference
            self.granted_values[request.preference_id] = preference.quota_config.granted_value
            self.reconciling[request.preference_id] = preference.reconciling

        self.register_outputs(
            {
                "project": self.project,
                "requests": {
                    r.preference_id: {
                        **_described(r),
                        "granted_value": self.granted_values[r.preference_id],
                        "reconciling": self.reconciling[r.preference_id],
                    }
                    for r in plan
                },
            }
        )

    def _check(
        self,
        name: str,
        plan: Sequence[GpuQuotaRequest],
        parent: str,
        apis: Sequence[pulumi.Resource],
    ) -> None:
        """Mode 'check': read each quota in force and warn where it falls short; file
        nothing (another stack of the project files its quotas)."""
        self.requested_gpus = {r.preference_id: r.gpus for r in plan}
        self.summaries = {r.preference_id: r.summary for r in plan}
        self.preferences = {}
        self.granted_values = {}
        self.reconciling = {}
        self.current_values: dict[str, pulumi.Output[float]] = {}
        for request in plan:
            info = gcp.cloudquota.get_s_quota_info_output(
                parent=parent,
                service=SERVICE,
                quota_id=request.quota_id,
                opts=pulumi.InvokeOutputOptions(parent=self, depends_on=list(apis)),
            )
            self.current_values[request.preference_id] = info.dimensions_infos.apply(
                functools.partial(_warn_if_short, name, request)
            )
        self.register_outputs(
            {
                "project": self.project,
                "mode": "check",
                "requests": {
                    r.preference_id: {
                        **_described(r),
                        "current_value": self.current_values[r.preference_id],
                    }
                    for r in plan
                },
            }
        )


def _described(request: GpuQuotaRequest) -> dict[str, Any]:
    """What a request's registered outputs say of it, in either mode."""
    return {
        "quota_id": request.quota_id,
        "dimensions": dict(request.dimensions),
        "requested_gpus": request.gpus,
        "summary": request.summary,
    }


def _warn_if_short(name: str, request: GpuQuotaRequest, infos: Sequence[Any]) -> float:
    current = current_value(infos, dict(request.dimensions))
    if 0 <= current < request.gpus:
        pulumi.log.warn(
            f"{name}: {request.quota_id} {dict(request.dimensions) or ''} is {current:g} in "
            f"force, and {request.summary} needs {request.gpus}: the project's quota stack "
            "must file it (gcp.GpuQuota mode 'file', sized for every stack's pools) before "
            "these pools can launch."
        )
    return current


def _split_needs(args: Any, name: str) -> tuple[Any, list[Problem], list[str]]:
    """`args` with only the configured needs that validate, the problems of the others,
    and the field path of each need kept (its index in the configuration)."""
    raw = args.model_dump() if isinstance(args, GpuQuotaArgs) else args
    if not isinstance(raw, Mapping) or not isinstance(raw.get("needs"), list | tuple):
        return args, [], []
    kept: list[Any] = []
    problems: list[Problem] = []
    paths: list[str] = []
    for i, need in enumerate(as_dicts(list(raw["needs"]))):
        try:
            GpuNeedArgs.parse(need, where=f"{name}.needs.{i}")
        except ConfigError as error:
            problems.extend(error.problems)
            continue
        kept.append(need)
        paths.append(f"{name}.needs.{i}")
    return {**raw, "needs": kept}, problems, paths


def _size(
    needs: Sequence[tuple[str, GpuNeedArgs, str]], governance: Governance, problems: Problems
) -> list[tuple[catalog.GcpGpuQuotaId, PoolGpus]]:
    """Each pool's share of every quota it counts against; every region outside the
    allowed ones, unknown, AWS or unoffered machine type is added to `problems`."""
    shares: list[tuple[catalog.GcpGpuQuotaId, PoolGpus]] = []
    for where, need, types_field in needs:
        region_problem = governance.region_problem(need.region, f"{where}.region", cloud="gcp")
        if region_problem:
            problems.items.append(region_problem)
            continue
        by_quota: dict[tuple[str, tuple[tuple[str, str], ...]], list[catalog.InstanceType]] = {}
        quota_of: dict[tuple[str, tuple[tuple[str, str], ...]], catalog.GcpGpuQuotaId] = {}
        for j, type_name in enumerate(need.machine_types):
            field = f"{where}.{types_field}.{j}"
            if catalog.find("aws", type_name) is not None:
                problems.add(
                    field,
                    f"{type_name!r} is an AWS instance type; gcp.GpuQuota requests Google "
                    "Cloud GPU quota.",
                    "use a GCP GPU machine type (e.g. 'g2-standard-8', 'a3-highgpu-8g'); "
                    "aws.GpuQuota files EC2 vCPU quota.",
                )
                continue
            t = catalog.find("gcp", type_name)
            if t is None:
                known = ", ".join(x.name for x in catalog.instance_types("gcp")[:6])
                problems.add(
                    field,
                    f"{type_name!r} is not a GPU machine type in the aistack catalog.",
                    f"use a catalogued GCP GPU machine type, e.g. {known}.",
                )
                continue
            if not t.offered_in(need.region):
                problems.add(
                    field,
                    f"{t.name} ({t.gpu_label}) is not offered in any zone of {need.region} "
                    f"(aistack catalog); it is offered in {list(t.regions)}.",
                    f"pick a type offered in {need.region}, e.g. "
                    f"{_offered_alternatives(t, need.region)}, or another region.",
                )
                continue
            for quota in catalog.gpu_quota_ids(t.name, need.market):
                key = quota.key(need.region)
                by_quota.setdefault(key, []).append(t)
                quota_of.setdefault(key, quota)
        # A pool mixing types could run entirely on its largest at its maximum, so each
        # quota it touches is sized for all of its nodes on the type with the most GPUs.
        for key, types in by_quota.items():
            largest = max(types, key=lambda t: (t.gpu_count, t.name))
            shares.append(
                (
                    quota_of[key],
                    PoolGpus(
                        pool=need.pool,
                        region=need.region,
                        machine_type=largest.name,
                        max_nodes=need.max_nodes,
                        surge_nodes=need.surge_nodes,
                        gpus=(need.max_nodes + need.surge_nodes) * largest.gpu_count,
                        smallest_gpus=min(t.gpu_count for t in types),
                    ),
                )
            )
    return shares


def _offered_alternatives(t: catalog.InstanceType, region: str) -> list[str]:
    same_gpu = [
        other.name
        for other in catalog.instance_types("gcp", gpu=t.gpu_model, region=region)
        if other.gpu_count == t.gpu_count
    ]
    anything = [other.name for other in catalog.instance_types("gcp", region=region)]
    return same_gpu[:3] or anything[:3]


def _field(entry: Any, *names: str) -> Any:
    for key in names:
        if isinstance(entry, Mapping) and key in entry:
            return entry[key]
        if hasattr(entry, key):
            return getattr(entry, key)
    return None


def current_value(infos: Sequence[Any], dimensions: Mapping[str, str]) -> float:
    """The value in force at `dimensions` from a QuotaInfo's `dimensions_infos`, by Cloud
    Quotas' precedence (docs/quotas/configure-dimensions, "Dimension precedence"): the
    entry naming the most of the wanted dimensions, among those that apply to the region
    (`applicable_locations`); an entry with no dimensions is the default. -1 is
    unlimited."""
    region = dimensions.get("region")
    best: tuple[int, float] | None = None
    for entry in infos or ():
        dims = dict(_field(entry, "dimensions") or {})
        if any(dimensions.get(k) != v for k, v in dims.items()):
            continue
        locations = list(_field(entry, "applicable_locations", "applicableLocations") or ())
        if region and locations and region not in locations:
            continue
        details = _field(entry, "details") or []
        if isinstance(details, Mapping):  # the REST shape: one QuotaDetails object
            details = [details]
        if not details:
            continue
        value = float(_field(details[0], "value") or 0)
        if best is None or len(dims) > best[0]:
            best = (len(dims), value)
    return best[1] if best is not None else 0.0


def _preferred_value(needed: int, dimensions: dict[str, str], infos: Sequence[Any]) -> str:
    """The value to request, as the string pulumi-gcp's `preferred_value` takes: never
    below the quota in force (an unlimited -1 stays -1)."""
    current = current_value(infos, dimensions)
    if current < 0:
        return "-1"
    return str(max(math.ceil(current), needed))

"""AIS-C1-02: every GCP GPU capacity is covered by Cloud Quotas preferences big enough.

Capacity is what can launch GPU machines: GCE instances, Workbench instances, GKE node
pools and managed instance groups (machine type from their instance template), each at its
maximum node count (`aistack.queries.gcp.gpu_capacities`). Its GPUs count against every quota the
catalog names for its machine type and market (`catalog.gpu_quota_ids`): the model's
regional quota (PREEMPTIBLE- for Spot), the GPU family quota for H100 and newer, and the
project-wide GPUS-ALL-REGIONS ceiling, 0 in a new project. Capacities sharing a quota are
summed. The stack must hold a `cloudquota.SQuotaPreference` for each whose preferred
value covers the sum, or a `gcp.GpuQuota` in mode 'check' sized for it (the project's
quota stack files one preference per quota and dimensions for every stack, and this one
reads what is in force); a preference applies to the dimensions it names and, where it omits
one, to every value of it (Cloud Quotas "Configure dimensions", precedence: the most
specific preference wins).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from aistack import catalog
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import checked_quota_needs, gpu_capacities, quota_preferences

Key = tuple[str, tuple[tuple[str, str], ...]]


def _covering(
    preferences: Sequence[tuple[Resource, str, dict[str, str], float]], key: Key
) -> float | None:
    """The preferred value in force for `key`: the most specific preference whose
    dimensions all match; None when no preference applies."""
    quota_id, wanted = key[0], dict(key[1])
    best: tuple[int, float] | None = None
    for _, pref_quota, dims, value in preferences:
        if pref_quota != quota_id or any(wanted.get(k) != v for k, v in dims.items()):
            continue
        if best is None or len(dims) > best[0]:
            best = (len(dims), value)
    return None if best is None else best[1]


def _where(key: Key) -> str:
    dims = dict(key[1])
    shown = ", ".join(f"{k}={v}" for k, v in sorted(dims.items()))
    return f"{key[0]}" + (f" ({shown})" if shown else "")


@rule(
    id="AIS-C1-02",
    checklist=["C1"],
    info="Every GCP GPU capacity has Cloud Quotas preferences covering its maximum, "
    "including the GPUS-ALL-REGIONS ceiling.",
    why="A new project's GPU quotas and its GPUS-ALL-REGIONS ceiling are 0: the first GPU "
    "VM fails with \"Quota 'GPUS_ALL_REGIONS' exceeded. Limit: 0.0 globally\", and Google "
    "decides increases on its own clock, so the request must be filed before it is needed.",
    fix="Add gcp.GpuQuota sized from the pools (needs or pools=), or a "
    "gcp.cloudquota.SQuotaPreference (service compute.googleapis.com) for each quota id "
    "and dimensions named, with a preferred value at least the stated total.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    found = gpu_capacities(graph)
    # Each capacity's GPUs per quota key, and who shares each key.
    needs: list[dict[Key, tuple[int, str]]] = []
    totals: dict[Key, int] = {}
    sharing: dict[Key, list[str]] = {}
    for capacity in found:
        t = catalog.get(capacity.machine_type, cloud="gcp")
        gpus = capacity.max_nodes * t.gpu_count
        own: dict[Key, tuple[int, str]] = {}
        for quota in catalog.gpu_quota_ids(t.name, capacity.market):  # type: ignore[arg-type]
            key = quota.key(capacity.region)
            own[key] = (gpus, f"{capacity.basis} x {t.name}, {t.gpu_label}")
            totals[key] = totals.get(key, 0) + gpus
            sharing.setdefault(key, []).append(capacity.resource.name)
        needs.append(own)
    preferences = quota_preferences(graph)
    delegated = checked_quota_needs(graph)
    for capacity, own in zip(found, needs, strict=True):
        problems, fine = [], []
        for key, (gpus, basis) in own.items():
            total = totals[key]
            others = [n for n in sharing[key] if n != capacity.resource.name]
            detail = basis + (f"; {total} together with {', '.join(others)}" if others else "")
            need = f"{gpus} GPUs of {_where(key)} ({detail})"
            have = _covering(preferences, key)
            if have is None and delegated.get(key, 0) >= total:
                fine.append(
                    f"{_where(key)}: {total} needed, filed by the project's quota stack "
                    "(gcp.GpuQuota mode 'check' reads it at each deployment)."
                )
                continue
            if have is None:
                problems.append(
                    f"needs {need}, but no QuotaPreference requests it: shortfall {total}."
                )
            elif have != -1 and have < total:
                problems.append(
                    f"needs {need}, but the QuotaPreference asks for {have:g}: shortfall "
                    f"{math.ceil(total - have)}."
                )
            else:
                fine.append(f"{_where(key)}: {have:g} requested, {total} needed.")
        if problems:
            yield fail(capacity.resource, " ".join(problems))
        else:
            yield ok(capacity.resource, " ".join(fine))

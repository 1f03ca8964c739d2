"""The plan of `gcp.Network`: the zones each tier's machine types are offered in, and the
checks of what the network is wired to, made before any resource exists.

Subnets in GCP are regional, so zones are not a property of the network: the plan names,
per tier, the zones that offer ALL its machine types (from the catalog, the same data
GpuQuota and the pools use) and the component hands them to the pools (`zones(tier)`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pulumi

from aistack import catalog
from aistack.errors import ConfigError, Problems
from aistack.gcp.network.args import NetworkArgs

if TYPE_CHECKING:
    from aistack.gcp.dataset_bucket import DatasetBucket
    from aistack.gcp.project_services import ProjectServices
    from aistack.gcp.workload_identity import WorkloadIdentity

__all__ = ["COMPUTE_API", "DNS_API", "plan_network", "plan_zones"]

COMPUTE_API = "compute.googleapis.com"
DNS_API = "dns.googleapis.com"


def plan_network(
    args: NetworkArgs,
    name: str,
    *,
    services: ProjectServices | None,
    identity: WorkloadIdentity | None,
    service_accounts: Mapping[str, pulumi.Input[str]] | None,
    dataset: DatasetBucket | None,
) -> dict[str, tuple[str, ...]]:
    """The zones of every tier (`plan_zones`), once the region, the project's APIs, the
    dataset's region (D2) and the firewall's service accounts (S1) are checked: one
    ConfigError naming every problem."""
    problems = Problems()
    found = args.governance.region_problem(args.region, f"{name}.region", cloud="gcp")
    if found:
        problems.items.append(found)
    assert services is not None
    problems.items.extend(services.missing(COMPUTE_API, DNS_API, where=name))
    if dataset is not None and str(dataset.region).lower() != args.region.lower():
        problems.add(
            f"{name}.region",
            f"the dataset bucket is in {dataset.region}, the network in "
            f"{args.region}: training would read its data across regions (D2).",
            f"use region {dataset.region!r}, or a dataset bucket in {args.region}.",
        )
    if identity is None and service_accounts is None:
        problems.add(
            f"{name}.serviceAccounts",
            "the firewall admits traffic by service account, and none were given.",
            "pass identity=<gcp.WorkloadIdentity> or service_accounts={tier: email}.",
        )
    elif identity is not None:
        for tier in args.tiers():
            if tier not in identity.accounts:
                problems.add(
                    f"{name}.identity",
                    f"the WorkloadIdentity has no {tier!r} workload for the "
                    f"{tier} tier's firewall rules.",
                    f"add the workload {tier!r}, or pass service_accounts.",
                )
    else:
        assert service_accounts is not None
        for tier in args.tiers():
            if tier not in service_accounts:
                problems.add(
                    f"{name}.serviceAccounts.{tier}",
                    f"no service account for the {tier} tier.",
                    f"add {tier}: <its service account email>.",
                )
        plain = {t: v for t, v in service_accounts.items() if isinstance(v, str)}
        if plain.get("training") and plain.get("training") == plain.get("inference"):
            problems.add(
                f"{name}.serviceAccounts.inference",
                "training and inference run as the same service account: the "
                "firewall could not tell them apart (S1).",
                "give each tier its own account (gcp.WorkloadIdentity does).",
            )
    zones = plan_zones(args, name, problems)
    problems.raise_if_any()
    return zones


def plan_zones(args: NetworkArgs, where: str, problems: Problems) -> dict[str, tuple[str, ...]]:
    """Per tier, the zones of `args.region` offering every one of its machine types
    (catalog), sorted. Problems name the region, the machine type and its accelerator."""
    planned: dict[str, tuple[str, ...]] = {}
    for tier in args.tiers():
        types = args.machine_types(tier)
        field = {"training": "trainingMachineTypes", "inference": "inferenceMachineTypes"}.get(
            tier, "notebookMachineTypes"
        )
        if not types:  # A notebook tier without GPUs: every zone the catalog knows.
            planned[tier] = catalog.region_zones("gcp", args.region)
            continue
        zones: set[str] | None = None
        for index, machine in enumerate(types):
            try:
                entry = catalog.get(machine, cloud="gcp")
            except ConfigError as exc:
                for problem in exc.problems:
                    problems.add(f"{where}.{field}.{index}", problem.message, problem.fix)
                continue
            if not entry.offered_in(args.region) or not entry.zones(args.region):
                problems.add(
                    f"{where}.{field}.{index}",
                    f"no zone of {args.region} offers {machine} ({entry.gpu_label}) according "
                    "to the aistack catalog (checklist C2).",
                    f"use a region offering it: {list(entry.regions)}, or another machine type.",
                )
                continue
            offered = set(entry.zones(args.region))
            zones = offered if zones is None else zones & offered
        if zones is None:
            continue
        if not zones:
            problems.add(
                f"{where}.{field}",
                f"no zone of {args.region} offers all of {list(types)} together: a pool "
                "spread over the planned zones could not launch every type everywhere (C2).",
                "split the tier's types across pools, or pick types one zone offers together.",
            )
            continue
        planned[tier] = tuple(sorted(zones))
    return planned

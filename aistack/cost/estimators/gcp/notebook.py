"""Vertex AI Workbench instances: VM hours with idle shutdown, against the same VM always on.

A Workbench instance bills its VM (and GPUs) per hour while it runs, and its boot and data
disks per GB-month whether it runs or not (Workbench docs, "Idle shutdown" -> Billing:
"Disk storage charges still apply while your instance is shut down"). With idle shutdown a
user pays for the hours they work plus one idle timeout after each session, as on AWS
Studio; the naive baseline is the same instance left on 24x7. GPU machine types take the
catalog's on-demand price in the instance's region, CPU types Compute Engine's us-central1
list price (aistack.cost.prices.gcp). Workbench's own management fee is not included.
"""

from __future__ import annotations

from aistack import catalog
from aistack.cost import HOURS_PER_MONTH, WorkloadProfile, estimator
from aistack.cost.baseline import SESSION_HOURS
from aistack.cost.prices import gcp as prices
from aistack.engine.graph import Resource, StackGraph
from aistack.queries.gcp import (
    WORKBENCH_INSTANCE,
    workbench_metadata,
    workbench_region,
    workbench_setup,
)

#: Workbench's machine type and disk sizes when the instance names none (gcloud workbench
#: instances create: --machine-type default n1-standard-4; boot 150 GB, data 100 GB).
DEFAULT_MACHINE = "n1-standard-4"
DEFAULT_BOOT_GB, DEFAULT_DATA_GB = 150, 100


def _hourly(machine: str, region: str | None) -> tuple[float | None, str]:
    offer = catalog.find("gcp", machine)
    if offer is not None:
        if region and offer.offered_in(region):
            return offer.price(region), f"catalog on-demand in {region}"
        return None, f"{machine} is not offered in {region}"
    price = prices.CPU_MACHINE_HOUR.get(machine)
    if price is None:
        return None, f"no list price for {machine} in aistack.cost.prices.gcp"
    return price, "Compute Engine list price, us-central1"


def _disk_gb(setup: dict) -> float:
    boot = (setup.get("bootDisk") or {}).get("diskSizeGb") or DEFAULT_BOOT_GB
    data = (setup.get("dataDisks") or {}).get("diskSizeGb") or DEFAULT_DATA_GB
    return float(boot) + float(data)


@estimator(WORKBENCH_INSTANCE)
def _notebook(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    setup = workbench_setup(resource)
    machine = str(setup.get("machineType") or DEFAULT_MACHINE).rsplit("/", 1)[-1]
    disks = _disk_gb(setup) * prices.PD_BALANCED_GB_MONTH
    hourly, source = _hourly(machine, workbench_region(resource))
    if hourly is None:
        return disks, disks, f"{source}: VM hours not estimated; disks ${disks:.2f}/month"
    raw = workbench_metadata(resource).get("idle-timeout-seconds")
    # Unset, Workbench stops an idle instance after 180 minutes (Workbench docs, "Manage
    # features through metadata").
    idle_minutes = int(raw) / 60 if raw and raw.isdigit() else 180.0
    work = profile.notebook_hours_per_month
    sessions = work / SESSION_HOURS
    billed = min(float(HOURS_PER_MONTH), work + sessions * idle_minutes / 60)
    monthly = billed * hourly + disks
    naive = HOURS_PER_MONTH * hourly + disks
    return (
        monthly,
        naive,
        f"{machine} at ${hourly:.4f}/h ({source}): {work:g} h of work + {idle_minutes:g} idle "
        f"min after each of {sessions:g} sessions = {billed:g} h; disks {_disk_gb(setup):g} GB "
        f"${disks:.2f}/month; naive: the same instance on 24x7 ({HOURS_PER_MONTH} h)",
    )

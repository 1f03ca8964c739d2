"""What every GCP component shares: the stack label, labelling, child options."""

from __future__ import annotations

import hashlib
import re
import warnings

import pulumi

with warnings.catch_warnings():
    # pulumi-gcp warns, when its modules are imported, about deprecated functions with
    # misspelt names (getTransferProjectServieAccount, MangedSslCertificate) that aistack
    # never uses; silenced here, once, so a team's test run shows only its own warnings.
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"pulumi_gcp(\.|$)")
    import pulumi_gcp

    # pulumi-gcp loads its modules lazily: touching a class runs the module's import here.
    _ = pulumi_gcp.storage.Bucket, pulumi_gcp.kms.KeyRing, pulumi_gcp.projects.Service

from aistack._options import child_opts, stateful_opts
from aistack.config import WORKLOAD_TAG, Governance, gcp_label
from aistack.contracts.naming import stack_scoped
from aistack.errors import ConfigError

__all__ = [
    "catalogued_gpu_machine",
    "child_opts",
    "grant_key",
    "labels_for",
    "resource_id_from",
    "scoped_id",
    "stack_id",
    "stateful_opts",
]

#: A local SSD disk is 375 GB (pulumi-gcp RegionInstanceTemplateDisk `disk_size_gb`: "for
#: SCRATCH disks, the size must be exactly 375GB"; Compute Engine docs, "About Local SSD").
LOCAL_SSD_GB = 375


def scoped_id(base: str, *, limit: int, separator: str = "-") -> str:
    """`base` ending in this stack's digest (aistack.contracts.naming): a fixed cloud id
    that the project's other stacks, and this program's other stacks, never pick."""
    return stack_scoped(
        base, pulumi.get_project(), pulumi.get_stack(), limit=limit, separator=separator
    )


def stack_id() -> str:
    """This stack's identity in labels (`aistack-stack`): budgets filter on it, the kill
    switch acts on it. Lowercased here, because a GCP label value cannot hold capitals."""
    return gcp_label(f"{pulumi.get_project()}-{pulumi.get_stack()}")


def labels_for(governance: Governance, workload: str | None = None, **extra: str) -> dict[str, str]:
    if workload:
        extra[WORKLOAD_TAG] = workload
    return governance.gcp_labels(stack_id(), **extra)


def resource_id_from(name: str) -> str:
    """A logical name as the start of a GCP resource id (account, repository, pool ids take
    lowercase letters, digits and hyphens): lowercased, every other character a hyphen,
    runs of hyphens collapsed. The caller still checks the id's own length and first
    character, which differ per resource."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", name.lower())).strip("-")


def catalogued_gpu_machine(machine: str) -> str:
    """A machine type as pools take it (lowercase), if aistack's catalog knows it as a GPU
    machine: the catalog holds its GPUs, local SSD count, zones and prices. A ValueError
    naming the known ones otherwise (for a field validator)."""
    from aistack import catalog

    machine = machine.strip().lower()
    if catalog.find("gcp", machine) is None:
        known = [t.name for t in catalog.instance_types("gcp")]
        raise ValueError(
            f"{machine!r} is not a GPU machine type in aistack's catalog. Fix: use one of {known}."
        )
    return machine


def grant_key(member: pulumi.Input[str], where: str) -> str:
    """The key a grant to `member` is named by when the caller names none: the member's
    local part and a short hash of it, stable across runs. A member known only at deploy
    time (an Output) cannot key a name: ConfigError at `where`, asking for name=."""
    if not isinstance(member, str):
        raise ConfigError(
            "the member is not known until deploy time, so it cannot key the grant.",
            field=where,
            fix="pass name=, e.g. name='trainer'.",
        )
    local = member.split(":", 1)[-1].split("@", 1)[0]
    slug = resource_id_from(local)[:30].strip("-") or "member"
    return f"{slug}-{hashlib.sha256(member.encode()).hexdigest()[:6]}"

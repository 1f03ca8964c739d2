"""Cloud Storage buckets and their Cloud KMS keys (D1), priced as the S3 model prices S3.

Model: a bucket of kind K holds the profile's current bytes for K; each month a share
(`noncurrent_churn`) of them is overwritten. With aistack's lifecycle rules an overwritten
version lives `daysSinceNoncurrentTime` days (in a colder class after a SetStorageClass
rule), then is deleted and stays soft-deleted, billed, for the bucket's soft delete days.
The naive baseline keeps every version (six months of churn on average, a year in) and
the 7-day soft delete every new bucket gets.
"""

from __future__ import annotations

from typing import Any

from aistack.config import WORKLOAD_TAG, gcp_label
from aistack.cost import WorkloadProfile, estimator
from aistack.cost.baseline import NAIVE_MONTHS_OF_VERSIONS, current_gb
from aistack.cost.prices import gcp as prices
from aistack.engine.graph import Resource, StackGraph
from aistack.queries.gcp import GCS_BUCKET, labels

_WORKLOAD_LABEL = gcp_label(WORKLOAD_TAG, is_key=True)
STANDARD = prices.GCS_GB_MONTH["STANDARD"]


def _noncurrent_rules(resource: Resource) -> tuple[int | None, tuple[int, float] | None]:
    """Days an overwritten version is kept (None: forever) and the (day, price) of its move
    to a colder class, from the bucket's lifecycle rules."""
    keep_days: int | None = None
    colder: tuple[int, float] | None = None
    for rule in resource.inputs.get("lifecycleRules") or []:
        action: dict[str, Any] = rule.get("action") or {}
        condition: dict[str, Any] = rule.get("condition") or {}
        days = condition.get("daysSinceNoncurrentTime")
        if days is None or condition.get("withState") not in ("ARCHIVED", None):
            continue
        if action.get("type") == "Delete":
            keep_days = int(days) if keep_days is None else min(keep_days, int(days))
        elif action.get("type") == "SetStorageClass":
            price = prices.GCS_GB_MONTH.get(str(action.get("storageClass")), STANDARD)
            colder = (int(days), price)
    return keep_days, colder


def _soft_delete_days(resource: Resource) -> float:
    policy = resource.inputs.get("softDeletePolicy")
    if not policy or policy.get("retentionDurationSeconds") is None:
        return prices.GCS_DEFAULT_SOFT_DELETE_DAYS
    return float(policy["retentionDurationSeconds"]) / 86400


@estimator(GCS_BUCKET)
def _bucket(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    kind = labels(resource).get(_WORKLOAD_LABEL, "").removeprefix("data-")
    current = current_gb(kind, profile)
    if not current:
        return None
    churn = current * profile.noncurrent_churn
    naive = current * STANDARD + churn * (
        NAIVE_MONTHS_OF_VERSIONS * STANDARD + prices.GCS_DEFAULT_SOFT_DELETE_DAYS / 30 * STANDARD
    )
    keep_days, colder = _noncurrent_rules(resource)
    if keep_days is None:
        return naive, naive, f"{current:g} GB {kind}; no expiry of old versions: they accumulate"
    if colder is not None and colder[0] < keep_days:
        versions = churn * (colder[0] / 30 * STANDARD + (keep_days - colder[0]) / 30 * colder[1])
    else:
        versions = churn * keep_days / 30 * STANDARD
    soft = _soft_delete_days(resource)
    # A deleted version is billed for its soft delete days more, in the class it was in.
    soft_price = colder[1] if colder is not None and colder[0] < keep_days else STANDARD
    ours = current * STANDARD + versions + churn * soft / 30 * soft_price
    return (
        ours,
        naive,
        f"{current:g} GB {kind}, {profile.noncurrent_churn:g}x churn/month; old versions kept "
        f"{keep_days} d (+{soft:g} d soft-deleted) vs {NAIVE_MONTHS_OF_VERSIONS} months on "
        "average without lifecycle rules",
    )


def _rotation_days(resource: Resource) -> float | None:
    period = str(resource.inputs.get("rotationPeriod") or "")
    if not period.endswith("s"):
        return None
    return float(period[:-1]) / 86400


@estimator("gcp:kms/cryptoKey:CryptoKey")
def _crypto_key(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    # Over a key's first year rotation adds a version every `rotation` days and the old
    # ones stay enabled: on average 1 + (versions added in a year) / 2 are billed. A naive
    # bucket uses Google-managed encryption, which is free.
    rotation = _rotation_days(resource)
    versions = 1 + (365 / rotation / 2 if rotation else 0)
    return (
        versions * prices.KMS_KEY_VERSION_MONTH,
        0.0,
        f"about {versions:.1f} enabled key versions in the first year (rotation every "
        f"{rotation:g} d)"
        if rotation
        else "one key version",
    )

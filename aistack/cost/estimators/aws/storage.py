"""S3 storage: current bytes plus the old versions lifecycle rules keep or retire (D1).

Model: a bucket of kind K holds the profile's current bytes for K. Each month a share
(`noncurrent_churn`) of them is overwritten. With aistack's lifecycle rules an overwritten
version lives `noncurrentDays` (in Standard-IA or Glacier IR after the transition); the
naive baseline keeps every version, which after a year averages six months of churn.
"""

from __future__ import annotations

from aistack.cost import WorkloadProfile, estimator
from aistack.cost.baseline import NAIVE_MONTHS_OF_VERSIONS, current_gb
from aistack.cost.prices import aws as prices
from aistack.engine.graph import Resource, StackGraph
from aistack.queries import bucket_config, tags

_CLASS_PRICE = {
    "STANDARD_IA": prices.S3_STANDARD_IA_GB_MONTH,
    "GLACIER_IR": prices.S3_GLACIER_IR_GB_MONTH,
}


@estimator("aws:s3/bucket:Bucket")
def _bucket(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    kind = tags(resource).get("aistack:workload", "").removeprefix("data-")
    current = current_gb(kind, profile)
    if not current:
        return None
    churn_per_month = current * profile.noncurrent_churn
    rules = [
        rule
        for lifecycle in bucket_config(
            graph, resource, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
        )
        for rule in lifecycle.inputs.get("rules") or []
        if rule.get("noncurrentVersionExpiration")
    ]
    naive_versions = churn_per_month * NAIVE_MONTHS_OF_VERSIONS * prices.S3_STANDARD_GB_MONTH
    naive = current * prices.S3_STANDARD_GB_MONTH + naive_versions
    if not rules:
        return naive, naive, f"{current:g} GB; no lifecycle rules: versions accumulate"
    days = rules[0]["noncurrentVersionExpiration"]["noncurrentDays"]
    transitions = rules[0].get("noncurrentVersionTransitions") or []
    if transitions:
        after = transitions[0]["noncurrentDays"]
        cold_price = _CLASS_PRICE.get(transitions[0]["storageClass"], prices.S3_STANDARD_GB_MONTH)
        versions = churn_per_month * (
            after / 30 * prices.S3_STANDARD_GB_MONTH + (days - after) / 30 * cold_price
        )
    else:
        versions = churn_per_month * days / 30 * prices.S3_STANDARD_GB_MONTH
    ours = current * prices.S3_STANDARD_GB_MONTH + versions
    return (
        ours,
        naive,
        f"{current:g} GB {kind}, {profile.noncurrent_churn:g}x churn/month; old versions kept "
        f"{days} d vs {NAIVE_MONTHS_OF_VERSIONS} months on average without lifecycle rules",
    )


@estimator("aws:cloudwatch/logGroup:LogGroup")
def _log_group(resource: Resource, graph: StackGraph, profile: WorkloadProfile):
    groups = len(graph.of_type("aws:cloudwatch/logGroup:LogGroup")) or 1
    ingest_gb = profile.log_storage_gb / 12 / groups  # a year of logs, ingested monthly
    retention = resource.inputs.get("retentionInDays") or 0
    kept_months = retention / 30 if retention else 12
    ours = ingest_gb * prices.CLOUDWATCH_LOGS_INGEST_GB + (
        ingest_gb * kept_months * prices.CLOUDWATCH_LOGS_STORE_GB_MONTH
    )
    naive = ingest_gb * prices.CLOUDWATCH_LOGS_INGEST_GB + (
        ingest_gb * 12 * prices.CLOUDWATCH_LOGS_STORE_GB_MONTH
    )
    return ours, naive, f"{ingest_gb:.1f} GB/month ingested, kept {retention or 'forever'} d"

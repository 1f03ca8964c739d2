"""Storage and logging: dataset buckets and their manifests, third parties (D5, D6, E3-E5,
T2, S2, S4, G5, G6), and log routes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aistack.config import gcp_label
from aistack.engine.graph import Resource, StackGraph
from aistack.queries.gcp.common import (
    labels,
)

BUCKET_OBJECT = "gcp:storage/bucketObject:BucketObject"
#: Where gcp.DatasetBucket writes what a label cannot hold (source URL, licence, legal basis).
DATASET_MANIFEST = ".aistack/manifest.json"
THIRD_PARTIES_LABEL = gcp_label("aistack:third-party-services", is_key=True)
#: gcp.DatasetBucket's `true` / `false`: whether the dataset holds personal data (D5).
PERSONAL_DATA_LABEL = gcp_label("aistack:personal-data", is_key=True)
LOG_BUCKET = "gcp:logging/projectBucketConfig:ProjectBucketConfig"
LOG_SINK = "gcp:logging/projectSink:ProjectSink"


@dataclass(frozen=True)
class LogRoute:
    """A log sink into one of the stack's log buckets: what it routes and where it keeps it."""

    sink: Resource
    filter: str
    location: str
    retention_days: int


def log_routes(graph: StackGraph) -> list[LogRoute]:
    """Every sink whose destination is a log bucket of the stack, with that bucket's location
    and retention (a bucket without retentionDays keeps 30 days, as Logging's default)."""
    buckets: dict[str, Resource] = {}
    for bucket in graph.of_type(LOG_BUCKET):
        location = str(bucket.inputs.get("location") or "global")
        buckets[f"locations/{location}/buckets/{bucket.inputs.get('bucketId')}"] = bucket
    routes = []
    for sink in graph.of_type(LOG_SINK):
        destination = str(sink.inputs.get("destination") or "")
        kept = next((b for key, b in buckets.items() if destination.endswith(key)), None)
        if kept is not None:
            routes.append(
                LogRoute(
                    sink,
                    str(sink.inputs.get("filter") or ""),
                    str(kept.inputs.get("location") or "global"),
                    int(kept.inputs.get("retentionDays") or 30),
                )
            )
    return routes


def is_dataset_bucket(bucket: Resource) -> bool:
    """A GCS bucket holding a dataset: gcp.DatasetBucket labels it `aistack-workload:
    data-dataset` and `aistack-dataset-name`."""
    own = labels(bucket)
    return own.get("aistack-workload") == "data-dataset" or "aistack-dataset-name" in own


def bucket_name(bucket: Resource) -> str:
    return str(bucket.outputs.get("name") or bucket.inputs.get("name") or "")


def dataset_manifest(graph: StackGraph, bucket: Resource) -> dict[str, Any] | None:
    """The dataset manifest object in `bucket` (`.aistack/manifest.json`), parsed; None
    without one or when it is not a JSON object. pulumi-gcp marks `content` secret."""
    import json

    from aistack.queries import revealed

    name = bucket_name(bucket)
    for obj in graph.of_type(BUCKET_OBJECT):
        if obj.inputs.get("bucket") != name or obj.inputs.get("name") != DATASET_MANIFEST:
            continue
        try:
            found = json.loads(str(revealed(obj.inputs.get("content")) or ""))
        except ValueError:
            return None
        return found if isinstance(found, dict) else None
    return None

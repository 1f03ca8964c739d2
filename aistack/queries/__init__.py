"""Graph queries that rules and cost estimators share: what configures a bucket, what a
resource's tags say, which region it is in. Neutral ground: neither `policy` nor `cost`
owns them; per-platform queries sit beside this module (`aws_training`)."""

from __future__ import annotations

from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.engine.pulumi_compat import SECRET_SIG as _SECRET_SIG
from aistack.engine.pulumi_compat import SECRET_SIG_KEY as _SIG_KEY

BUCKET = "aws:s3/bucket:Bucket"


def tags(resource: Resource) -> dict[str, str]:
    """A resource's effective tags: `tagsAll` (with the provider's default tags) when the
    provider reported it, else its own; auto scaling groups carry a list of {key, value}."""
    raw = resource.outputs.get("tagsAll") or resource.inputs.get("tags") or {}
    if isinstance(raw, list):
        return {str(tag.get("key")): str(tag.get("value")) for tag in raw if "key" in tag}
    return dict(raw)


def is_aistack_managed(graph: StackGraph, resource: Resource) -> bool:
    """True for resources inside an aistack component (team resources are advisory)."""
    return any(a.type.startswith("aistack:") for a in graph.ancestors(resource))


def bucket_config(graph: StackGraph, bucket: Resource, token: str) -> list[Resource]:
    """The `token` resources (versioning, lifecycle, ...) that configure `bucket`."""
    bucket_id = bucket.outputs.get("bucket") or bucket.id
    return [r for r in graph.of_type(token) if r.inputs.get("bucket") == bucket_id]


def region_of(resource: Resource) -> str | None:
    region = resource.outputs.get("region") or resource.inputs.get("region")
    return str(region) if region else None


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def revealed(value: Any) -> Any:
    """`value` with Pulumi's secret wrappers removed, as the provider receives it: a
    recorded input that was `pulumi.Output.secret(...)` (pulumi-kubernetes marks a
    Secret's `data` and `stringData` secret) arrives wrapped."""
    if isinstance(value, dict):
        if value.get(_SIG_KEY) == _SECRET_SIG and "value" in value:
            return revealed(value["value"])
        return {key: revealed(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [revealed(item) for item in value]
    return value

"""aistack's AWS components. Imported lazily: `from aistack import aws` costs nothing until a
component is used, and a GCP-only program never loads pulumi_aws.

    from aistack import aws
    data = aws.DatasetBucket("data", {...})
"""

from __future__ import annotations

from aistack._lazy import lazy_exports
from aistack._registry import exports

# Each component and its Args come from the registry (aistack/_registry.py); below, the
# package's other public names.
_EXPORTS = {
    **exports("aws"),
    "DatasetMetadata": "aistack.aws.dataset_bucket",
    "image_by_digest": "aistack.contracts.images",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("aistack.aws", _EXPORTS, globals())

"""aistack's Google Cloud components. Imported lazily, like `aistack.aws`: `from aistack
import gcp` costs nothing until a component is used, and an AWS-only program never loads
pulumi_gcp (nor a GCP-only one pulumi_aws).

    from aistack import gcp
    services = gcp.ProjectServices("apis", {...})
    data = gcp.DatasetBucket("data", {...}, services=services)
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ProjectServices": "aistack.gcp.project_services",
    "ProjectServicesArgs": "aistack.gcp.project_services",
    "DatasetBucket": "aistack.gcp.dataset_bucket",
    "DatasetBucketArgs": "aistack.gcp.dataset_bucket",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'aistack.gcp' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__

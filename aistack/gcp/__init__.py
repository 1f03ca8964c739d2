"""aistack's Google Cloud components. Imported lazily, like `aistack.aws`: `from aistack
import gcp` costs nothing until a component is used, and an AWS-only program never loads
pulumi_gcp (nor a GCP-only one pulumi_aws).

    from aistack import gcp
    services = gcp.ProjectServices("apis", {...})
    data = gcp.DatasetBucket("data", {...}, services=services)
"""

from __future__ import annotations

from aistack._lazy import lazy_exports
from aistack._registry import exports

# Each component and its Args come from the registry (aistack/_registry.py); below, the
# package's other public names.
_EXPORTS = {
    **exports("gcp"),
    "GpuNeed": "aistack.gcp.gpu_quota",
    "HasGpuNeeds": "aistack.gcp.gpu_quota",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("aistack.gcp", _EXPORTS, globals())

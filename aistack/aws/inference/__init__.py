"""`aws.InferenceTier`: explicit model versions on GPU nodes behind a WAF-guarded load balancer.

`args` holds the arguments, `planning` the per-version plan made before any resource
exists, `component` the tier, `front` its load balancer, listeners and WAF, `node` the
serving node's user data and `monitoring` its alarms and dashboard.
docs/components/aws/inference-tier.md says why.
"""

from aistack.aws.inference.args import (
    InferenceTierArgs,
    ModelQualityAlarm,
    ModelVersion,
    ServingMachineImage,
    version_slug,
)
from aistack.aws.inference.component import (
    APPROVED_BY_TAG,
    ASG_METRICS,
    FALLBACK_TAG,
    GATEWAY_CACHE_TAG,
    HEALTH_CHECK_GRACE_SECONDS,
    LOG_CLASSIFICATION_TAG,
    LOG_RETENTION_TAG,
    MODEL_NAME_TAG,
    MODEL_VERSION_TAG,
    REFRESH_MAX_HEALTHY_PERCENT,
    REQUEST_LOGGING_TAG,
    RUNTIME_TAG,
    SERVING_IMAGE_TAG,
    STANDBY_TAG,
    TIER_TAG,
    TOKEN,
    TRAFFIC_WEIGHT_TAG,
    InferenceTier,
)
from aistack.aws.inference.front import PLAINTEXT_HTTP_TAG, TLS_POLICY, WAF_MANAGED_RULE_GROUPS
from aistack.aws.inference.monitoring import ALARM_KIND_TAG
from aistack.aws.inference.planning import WORKLOAD

__all__ = [
    "ALARM_KIND_TAG",
    "APPROVED_BY_TAG",
    "ASG_METRICS",
    "FALLBACK_TAG",
    "GATEWAY_CACHE_TAG",
    "HEALTH_CHECK_GRACE_SECONDS",
    "LOG_CLASSIFICATION_TAG",
    "LOG_RETENTION_TAG",
    "MODEL_NAME_TAG",
    "MODEL_VERSION_TAG",
    "PLAINTEXT_HTTP_TAG",
    "REFRESH_MAX_HEALTHY_PERCENT",
    "REQUEST_LOGGING_TAG",
    "RUNTIME_TAG",
    "SERVING_IMAGE_TAG",
    "STANDBY_TAG",
    "TIER_TAG",
    "TLS_POLICY",
    "TOKEN",
    "TRAFFIC_WEIGHT_TAG",
    "WAF_MANAGED_RULE_GROUPS",
    "WORKLOAD",
    "InferenceTier",
    "InferenceTierArgs",
    "ModelQualityAlarm",
    "ModelVersion",
    "ServingMachineImage",
    "version_slug",
]

"""`k8s.InferenceService`: a model served from its own namespace behind the aistack gateway,
one Deployment per version, weighted by a Gateway API HTTPRoute.

`component` creates the objects; `specs` holds what each of them contains, as pure
functions of the Args (`aistack.k8s._inference_args`, which loads no SDK).
docs/components/k8s/inference-service.md says why.
"""

from aistack.contracts.k8s import GATEWAY_CONF_DIR, MODEL_NAME_LABEL, MODEL_VERSION_LABEL
from aistack.k8s._inference_args import InferenceServiceArgs
from aistack.k8s.inference_service.component import PINNED, TOKEN, InferenceService
from aistack.k8s.inference_service.specs import (
    alert_rules,
    deployment_spec,
    gateway_conf,
    ingress_policy,
    rollback_command,
    route_spec,
    rules_object,
    scrape,
    selector,
    version_selector,
)

__all__ = [
    "GATEWAY_CONF_DIR",
    "MODEL_NAME_LABEL",
    "MODEL_VERSION_LABEL",
    "PINNED",
    "TOKEN",
    "InferenceService",
    "InferenceServiceArgs",
    "alert_rules",
    "deployment_spec",
    "gateway_conf",
    "ingress_policy",
    "rollback_command",
    "route_spec",
    "rules_object",
    "scrape",
    "selector",
    "version_selector",
]

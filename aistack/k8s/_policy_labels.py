"""The labels k8s.ImagePolicy's admission policies and the rules that judge them share.
No pulumi_kubernetes here: policy rules import it (aistack.policy.rules.k8s)."""

from __future__ import annotations

__all__ = ["ENFORCES_LABEL", "MODEL_NAME_LABEL", "MODEL_VERSION_LABEL", "TIER_LABEL"]

#: The labels every serving pod carries (the contract with k8s.InferenceService, S7).
MODEL_NAME_LABEL = "aistack.dev/model-name"
MODEL_VERSION_LABEL = "aistack.dev/model-version"
#: k8s.TeamNamespace labels each namespace with its tier (`train` or `serve`).
TIER_LABEL = "aistack.dev/tier"
#: On each admission policy: the checklist IDs it enforces, joined by `_` (`E1_S7`).
ENFORCES_LABEL = "aistack.dev/enforces"

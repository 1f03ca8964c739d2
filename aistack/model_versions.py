"""Explicit model versions (checklist S7), for every cloud: `latest` names whatever is
newest, not a version, so two replicas started an hour apart can serve different models
under it and nobody can say which one answered.

Shared by aws.InferenceTier (`aistack.aws._inference_args` re-exports it), the serving
rules and k8s.ImagePolicy, whose admission policy refuses serving pods labelled with one.
"""

from __future__ import annotations

__all__ = ["MOVING_LABELS", "is_moving_label", "moving_label_regex"]

#: Labels that name whatever is newest, not a version (S7). Compared case-insensitively.
MOVING_LABELS = frozenset({"latest", "current", "stable", "head", "newest", "default"})


def is_moving_label(version: str) -> bool:
    """True when `version` is a moving label (`latest`, `Stable`, ...), not a version."""
    return version.strip().lower() in MOVING_LABELS


def moving_label_regex() -> str:
    """The moving labels as one anchored, case-insensitive regular expression that both
    RE2 (CEL's `matches` in the API server) and Python's `re` read the same way."""
    return "(?i)^(" + "|".join(sorted(MOVING_LABELS)) + ")$"

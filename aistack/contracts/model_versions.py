"""Explicit model versions (checklist S7), for every cloud: `latest` names whatever is
newest, not a version, so two replicas started an hour apart can serve different models
under it and nobody can say which one answered.

Shared by aws.InferenceTier (`aistack.aws.inference` re-exports it), the serving
rules and k8s.ImagePolicy, whose admission policy refuses serving pods labelled with one.
"""

from __future__ import annotations

import re
from typing import Any

from aistack.errors import Problems

__all__ = [
    "MOVING_LABELS",
    "check_full_logging",
    "explicit_version",
    "is_moving_label",
    "moving_label_regex",
    "version_slug",
]

#: Labels that name whatever is newest, not a version (S7). Compared case-insensitively.
MOVING_LABELS = frozenset({"latest", "current", "stable", "head", "newest", "default"})


def is_moving_label(version: str) -> bool:
    """True when `version` is a moving label (`latest`, `Stable`, ...), not a version."""
    return version.strip().lower() in MOVING_LABELS


def moving_label_regex() -> str:
    """The moving labels as one anchored, case-insensitive regular expression that both
    RE2 (CEL's `matches` in the API server) and Python's `re` read the same way."""
    return "(?i)^(" + "|".join(sorted(MOVING_LABELS)) + ")$"


def version_slug(version: str) -> str:
    """A version as it appears in resource and object names: '1.4.0' -> '1-4-0'."""
    return re.sub(r"[^a-z0-9]+", "-", version.lower()).strip("-")


def explicit_version(version: str) -> str:
    """`version`, or a ValueError (for a field validator) when it is a moving label."""
    if version.lower() in MOVING_LABELS:
        raise ValueError(
            f"{version!r} names whatever is newest, not a version (checklist S7). Fix: "
            "give the immutable version the artefact was stored under, e.g. '1.4.0'."
        )
    return version


def check_full_logging(at: str, args: Any, problems: Problems) -> None:
    """requestLogging 'full' writes prompts: the serving Args must then state what the logs
    hold and how long they are kept (G2). `at` is the field prefix, e.g. 'chat.'."""
    if args.request_logging != "full":
        return
    for field, camel in (
        ("log_data_classification", "logDataClassification"),
        ("log_retention_days", "logRetentionDays"),
    ):
        if getattr(args, field) is None:
            problems.add(
                f"{at}{camel}",
                "requestLogging 'full' writes prompts to the logs, so what they hold and "
                "how long they are kept must be stated (checklist G2).",
                f"set {camel}, or choose requestLogging 'metadata' or 'none'.",
            )

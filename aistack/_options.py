"""Resource options every component uses, on every cloud: children and stateful children."""

from __future__ import annotations

from typing import Any

import pulumi

from aistack.config import Governance

__all__ = ["child_opts", "stateful_opts"]


def child_opts(parent: pulumi.Resource, **options: Any) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions(parent=parent, **options)


def stateful_opts(
    parent: pulumi.Resource, governance: Governance, *, allow_destroy: bool, **options: Any
) -> pulumi.ResourceOptions:
    """Options for resources that hold data: kept on `pulumi destroy` (the data outlives the
    stack) and, in prod, protected so even a replacement needs a deliberate unprotect. On GCP
    the provider-side `deletion_policy="PREVENT"` is set on the resource itself, where
    pulumi-gcp offers it."""
    if allow_destroy:
        return child_opts(parent, **options)
    return child_opts(
        parent,
        retain_on_delete=True,
        protect=governance.environment == "prod",
        **options,
    )

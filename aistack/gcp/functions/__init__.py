"""Code that runs on Google Cloud, not in the Pulumi program: shipped as package data and
uploaded as a function's source. Each directory is deployed alone, with its own
requirements.txt, so nothing here is imported by the components: what they need from the
code (the IAM permissions it calls) is read from its source, in `aistack.contracts.gcp`."""

from __future__ import annotations

from aistack.contracts.gcp import BUDGET_GUARD_SOURCE, budget_guard_permissions

__all__ = ["BUDGET_GUARD_SOURCE", "budget_guard_permissions"]

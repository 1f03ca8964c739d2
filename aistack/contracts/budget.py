"""The budget vocabulary `aws.BudgetGuard` and `gcp.BudgetGuard` share: the limits' field
names, and the old names they still accept for one release.

The limits were `monthly_limit_usd` / `daily_limit_usd` (config `monthlyLimitUsd` /
`dailyLimitUsd`). On Google Cloud they are in the billing account's currency, which the
Budget API requires the budget to use (pulumi-gcp `BudgetAmountSpecifiedAmount`:
"currencyCode ... must match the currency of the billing account"), so a EUR account's
limit is in euros; the names are now `monthly_limit` / `daily_limit` on both clouds, so
one vocabulary serves both (`aws.BudgetGuard` writes its budgets with `limit_unit` USD,
and says so in its field descriptions).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from pydantic.alias_generators import to_camel

__all__ = ["RENAMED_LIMITS", "renamed_fields"]

#: Old field name -> new field name (snake_case; the camelCase config keys follow).
RENAMED_LIMITS: dict[str, str] = {
    "monthly_limit_usd": "monthly_limit",
    "daily_limit_usd": "daily_limit",
}


def renamed_fields(data: Any, renames: Mapping[str, str], *, component: str) -> Any:
    """`data` (a model's raw input) with each deprecated key moved to its new name, and a
    DeprecationWarning per old name used. Giving both the old and the new name is refused
    (a ValueError, which the model reports as a ConfigError): which one was meant?"""
    if not isinstance(data, Mapping):
        return data
    moved = dict(data)
    for old, new in renames.items():
        given_old = [key for key in (old, to_camel(old)) if key in moved]
        if not given_old:
            continue
        if any(key in moved for key in (new, to_camel(new))):
            raise ValueError(
                f"{to_camel(old)} and {to_camel(new)} are both given; {to_camel(old)} is the "
                f"old name of {to_camel(new)}. Fix: keep {to_camel(new)} only."
            )
        warnings.warn(
            f"{component}: {to_camel(old)} is deprecated, write {to_camel(new)} (same value; "
            "the limits are in the billing account's currency). The old name goes in the "
            "next minor release.",
            DeprecationWarning,
            stacklevel=2,
        )
        moved[new] = moved.pop(given_old[0])
    return moved

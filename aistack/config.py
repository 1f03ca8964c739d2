"""Shared configuration models: the strict pydantic base and the governance block.

Every component's arguments derive from `AistackModel`: frozen (a component's inputs do
not change under it), unknown keys refused (a typo is an error, not a silent default), and
snake_case or camelCase accepted, because Pulumi config files are written in camelCase and
Python callers write snake_case. `parse` turns pydantic's errors into one `ConfigError`.
"""

from __future__ import annotations

import re
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from aistack.errors import ConfigError, Problem

__all__ = [
    "ALLOWED_REGIONS_TAG",
    "AistackModel",
    "DataClassification",
    "Environment",
    "Governance",
    "ThirdPartyService",
    "parse",
    "STACK_TAG",
    "WORKLOAD_TAG",
]

Environment = Literal["dev", "staging", "prod"]
DataClassification = Literal["public", "internal", "confidential", "restricted"]

#: The tag every aistack resource carries; budgets filter on it and the kill switch acts on it.
STACK_TAG = "aistack:stack"
#: What a resource is for (`training`, `inference`, ...); the kill switch stops `training` only.
WORKLOAD_TAG = "aistack:workload"
#: Where data may live (C4), carried on every resource so a rule can check it in place.
ALLOWED_REGIONS_TAG = "aistack:allowed-regions"

M = TypeVar("M", bound="AistackModel")

_FIXES = {
    "missing": "set this field.",
    "extra_forbidden": "remove it, or check its spelling against the documented fields.",
    "literal_error": "use one of the allowed values.",
    "greater_than_equal": "raise the value.",
    "greater_than": "raise the value.",
    "less_than_equal": "lower the value.",
    "less_than": "lower the value.",
    "too_short": "add at least one entry.",
    "string_pattern_mismatch": "match the documented format.",
}


class AistackModel(BaseModel):
    """Frozen, extra-forbidding base for every aistack configuration model."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        arbitrary_types_allowed=True,
    )

    @classmethod
    def parse(cls: type[M], data: Any, *, where: str = "") -> M:
        return parse(cls, data, where=where)


def parse(model: type[M], data: Any, *, where: str = "") -> M:
    """Validate `data` into `model`, raising one ConfigError naming every bad field."""
    if isinstance(data, model):
        return data
    if isinstance(data, BaseModel):
        data = data.model_dump(by_alias=False)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _config_error(exc, where) from None


def _config_error(exc: ValidationError, where: str) -> ConfigError:
    problems = []
    for error in exc.errors():
        path = ".".join(str(part) for part in error["loc"] if part != "__root__")
        path = ".".join(p for p in (where, path) if p) or where or "config"
        message = error["msg"].rstrip(".") + "."
        fix = _FIXES.get(error["type"], "")
        if error["type"] == "value_error":
            # Our own validators put the fix after " Fix: " in the message.
            message = message.removeprefix("Value error, ")
            if " Fix: " in message:
                message, fix = message.split(" Fix: ", 1)
        problems.append(Problem(path, message, fix))
    return ConfigError(problems)


class ThirdPartyService(AistackModel):
    """A service outside the team's cloud account that sees the data (checklist G6)."""

    name: str = Field(min_length=1, description="The service, e.g. 'wandb' or 'openai'.")
    purpose: str = Field(min_length=1, description="What it is used for.")
    data_shared: str = Field(min_length=1, description="Which data it sees.")
    terms: str = Field("", description="Link to the terms or DPA under which it sees it.")


_AWS_TAG_VALUE = re.compile(r"[^\w .:/=+\-@]")
_GCP_LABEL = re.compile(r"[^a-z0-9_-]")


class Governance(AistackModel):
    """Who owns the stack, where its data may live and who sees it (C4, G6).

    Every component takes this block; it becomes AWS tags and GCP labels on each resource,
    and its `allowed_regions` is enforced on every stateful resource.
    """

    owner: str = Field(min_length=1, description="Owning team or person; tagged everywhere.")
    cost_center: str = Field(min_length=1, description="Billing owner; tagged everywhere.")
    environment: Environment = Field("dev", description="dev, staging or prod.")
    allowed_regions: tuple[str, ...] = Field(
        min_length=1,
        description="Regions where data may be stored and processed (C4). Required: "
        "deciding where data lives is the first residency step.",
    )
    data_classification: DataClassification = Field(
        "internal", description="Highest classification of data this stack handles."
    )
    third_party_services: tuple[ThirdPartyService, ...] = Field(
        (), description="Services outside the account that see the data (G6)."
    )

    @field_validator("allowed_regions")
    @classmethod
    def _regions_look_like_regions(cls, regions: tuple[str, ...]) -> tuple[str, ...]:
        for region in regions:
            if not re.fullmatch(r"[a-z]{2}(-[a-z]+)+-?\d+", region):
                raise ValueError(
                    f"{region!r} is not a region name. Fix: use names like 'us-east-1' "
                    "or 'europe-west4'."
                )
        return regions

    def region_problem(self, region: str, field: str) -> Problem | None:
        """A Problem when `region` is outside the allowed regions (C4), else None."""
        if region in self.allowed_regions:
            return None
        return Problem(
            field,
            f"region {region!r} is not in governance.allowed_regions "
            f"{list(self.allowed_regions)} (data residency, checklist C4).",
            f"use one of {list(self.allowed_regions)}, or add {region!r} to "
            "governance.allowedRegions if residency rules permit it.",
        )

    def aws_tags(self, stack: str, **extra: str) -> dict[str, str]:
        """Tags for AWS resources; values restricted to the characters AWS accepts."""
        tags = {
            STACK_TAG: stack,
            "aistack:owner": self.owner,
            "aistack:cost-center": self.cost_center,
            "aistack:environment": self.environment,
            "aistack:data-classification": self.data_classification,
            ALLOWED_REGIONS_TAG: " ".join(self.allowed_regions),
            "aistack:third-party-services": " ".join(s.name for s in self.third_party_services)
            or "none",
        }
        tags.update(extra)
        return {key: _AWS_TAG_VALUE.sub("_", value)[:256] for key, value in tags.items()}

    def gcp_labels(self, stack: str, **extra: str) -> dict[str, str]:
        """Labels for GCP resources, obeying GCP's rules: lowercase letters, digits, `_`
        and `-`, keys starting with a letter, at most 63 characters each."""
        return {
            gcp_label(key, is_key=True): gcp_label(value)
            for key, value in self.aws_tags(stack, **extra).items()
        }


def gcp_label(text: str, *, is_key: bool = False) -> str:
    """`text` made into a valid GCP label key or value."""
    label = _GCP_LABEL.sub("_", text.lower().replace(":", "-").replace(" ", "_"))[:63]
    if is_key and not (label and label[0].isalpha()):
        label = ("k" + label)[:63]
    return label

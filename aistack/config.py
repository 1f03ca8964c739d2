"""Shared configuration models: the strict pydantic base and the governance block.

Every component's arguments derive from `AistackModel`: frozen (a component's inputs do
not change under it), unknown keys refused (a typo is an error, not a silent default), and
snake_case or camelCase accepted, because Pulumi config files are written in camelCase and
Python callers write snake_case. `parse` turns pydantic's errors into one `ConfigError`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from functools import cache
from types import UnionType
from typing import Any, ClassVar, Literal, TypeVar, Union, cast, get_args, get_origin

import pulumi
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic._internal._model_construction import ModelMetaclass
from pydantic.alias_generators import to_camel, to_snake
from pydantic_core import PydanticCustomError

from aistack.errors import ConfigError, Problem

__all__ = [
    "ALLOWED_REGIONS_TAG",
    "AistackModel",
    "DataClassification",
    "Environment",
    "Governance",
    "ThirdPartyService",
    "parse",
    "parse_all",
    "validate_with",
    "DATA_CLASSIFICATION_TAG",
    "ENVIRONMENT_TAG",
    "STACK_TAG",
    "THIRD_PARTY_TAG",
    "WORKLOAD_TAG",
]

Environment = Literal["dev", "staging", "prod"]
DataClassification = Literal["public", "internal", "confidential", "restricted"]

#: The tag every aistack resource carries; budgets filter on it and the kill switch acts on it.
STACK_TAG = "aistack:stack"
#: What a resource is for (`training`, `inference`, ...); the kill switch stops `training` only.
WORKLOAD_TAG = "aistack:workload"
#: Governance tags the rules read (Governance.aws_tags writes them with owner and cost centre).
ENVIRONMENT_TAG = "aistack:environment"
DATA_CLASSIFICATION_TAG = "aistack:data-classification"
THIRD_PARTY_TAG = "aistack:third-party-services"
#: Where data may live (C4), carried on every resource so a rule can check it in place.
ALLOWED_REGIONS_TAG = "aistack:allowed-regions"

M = TypeVar("M", bound="AistackModel")
T = TypeVar("T")


class _RaisesConfigError(ModelMetaclass):
    """Direct construction (`TrainingPoolArgs(...)`) raises the ConfigError `parse` raises.
    On the metaclass, not `__init__`: a custom `__init__` would make pydantic call it for
    every nested model during validation too."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except ValidationError as exc:
            raise _config_error(exc, cls.__name__, cast("type[BaseModel]", cls)) from None


class AistackModel(BaseModel, metaclass=_RaisesConfigError):
    """Frozen, extra-forbidding base for every aistack configuration model.

    Booleans and whole numbers are strict: `maxNodes: true` or `public: "yes"` is an error,
    not 1 or True. A whole float (`4.0`, as other Pulumi languages send numbers) is an int.
    Constructing a model directly raises the same `ConfigError` as `parse`.
    """

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        arbitrary_types_allowed=True,
    )

    #: Fields a component also takes as a keyword argument that accepts an Output
    #: (`alarm_topic_arn=budget.alert_topic_arn`); an Output given in the args is pointed there.
    output_keywords: ClassVar[frozenset[str]] = frozenset()

    @field_validator("*", mode="before")
    @classmethod
    def _strict_scalars(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name is None:
            return value
        kinds = _scalar_kinds(cls.model_fields[info.field_name].annotation)
        # Only where the field admits nothing else: `int | Literal["auto"]` keeps its text.
        if kinds == {bool} or kinds == {bool, type(None)}:
            if not isinstance(value, bool) and value is not None:
                raise PydanticCustomError("strict_bool", "expected true or false")
        elif (kinds == {int} or kinds == {int, type(None)}) and isinstance(value, bool | str):
            raise PydanticCustomError("strict_int", "expected a whole number")
        return value

    def semantic_problems(self, where: str) -> list[Problem]:
        """Problems across fields that need no other component (a GPU type the region
        lacks, min above max). Run by `parse`, so a stack can validate every block of its
        config before it registers anything; checks that need wiring stay in components."""
        return []

    @classmethod
    def parse(cls: type[M], data: Any, *, where: str = "") -> M:
        return parse(cls, data, where=where)

    @classmethod
    def validate_with(
        cls: type[M],
        data: Any,
        checks: Callable[[M], T],
        *,
        where: str = "",
        wiring: Mapping[str, Any] | None = None,
    ) -> tuple[M, T]:
        return validate_with(cls, data, checks, where=where, wiring=wiring)


def _scalar_kinds(annotation: Any) -> set[Any]:
    """The types an annotation admits: `int | None` gives {int, NoneType}."""
    if get_origin(annotation) in (Union, UnionType):
        return set(get_args(annotation))
    return {annotation}


def parse(model: type[M], data: Any, *, where: str = "") -> M:
    """Validate `data` into `model`, raising one ConfigError naming every bad field."""
    return validate_with(model, data, _no_checks, where=where)[0]


def parse_all(
    blocks: Mapping[str, tuple[type[AistackModel] | Callable[[str, Any], Any], Any]],
) -> dict[str, Any]:
    """Every config block parsed, `{key: (Args class, data)}` to `{key: Args}`, with the
    problems of all blocks in one ConfigError: a stack validates its whole configuration
    before its first component registers anything. Instead of an Args class a block may
    name a component's `check_args(name, data)` (e.g. `k8s.TrainingQueue.check_args`),
    which also runs the component's own checks, still registering nothing."""
    problems: list[Problem] = []
    parsed: dict[str, Any] = {}
    for key, (model, data) in blocks.items():
        try:
            if isinstance(model, type) and issubclass(model, AistackModel):
                parsed[key] = model.parse(data, where=key)
            else:
                parsed[key] = cast(Callable[[str, Any], Any], model)(key, data)
        except ConfigError as error:
            problems.extend(error.problems)
    if problems:
        raise ConfigError(problems)
    return parsed


def _no_checks(args: Any) -> None:
    return None


def validate_with(
    model: type[M],
    data: Any,
    checks: Callable[[M], T],
    *,
    where: str = "",
    wiring: Mapping[str, Any] | None = None,
) -> tuple[M, T]:
    """`data` validated into `model`, then `checks(args)` (a component's semantic checks,
    raising ConfigError), every problem reported together in one ConfigError.

    One pass: when some fields are wrong, the checks still run on the rest (the bad fields
    left out, defaults in their place) and what they say about the bad fields is dropped,
    so a typo does not hide an unknown GPU type and a bad value does not cascade into
    false problems. `wiring` maps keyword arguments (other components) to their values; a
    missing one is a problem, and the checks, which use them, are skipped.
    """
    problems: list[Problem] = []
    bad_fields: set[str] = set()
    args: M | None
    if isinstance(data, model):
        args = data
    else:
        if isinstance(data, BaseModel):
            data = data.model_dump(by_alias=False)
        try:
            args = model.model_validate(data)
        except ValidationError as exc:
            problems.extend(_config_error(exc, where, model).problems)
            bad_fields = {to_snake(str(e["loc"][0])) for e in exc.errors() if e["loc"]}
            args = _without(model, data, bad_fields)
    missing = [keyword for keyword, value in (wiring or {}).items() if value is None]
    for keyword in missing:
        problems.append(
            Problem(
                ".".join(p for p in (where, keyword) if p),
                "is required: the component is wired to it.",
                f"pass `{keyword}=` the aistack component it names.",
            )
        )
    result: Any = None
    if args is not None:
        found = list(args.semantic_problems(where))
        if not missing:
            try:
                result = checks(args)
            except ConfigError as error:
                found.extend(error.problems)
        problems.extend(p for p in found if _top_level(p.field, where) not in bad_fields)
    if problems:
        raise ConfigError(problems)
    assert args is not None
    return args, result


def _top_level(path: str, where: str) -> str:
    """The python name of the first field in a problem's path under `where`."""
    rest = path[len(where) + 1 :] if where and path.startswith(where + ".") else path
    return to_snake(re.split(r"[.\[ ]", rest, maxsplit=1)[0])


def _without(model: type[M], data: Any, bad_fields: set[str]) -> M | None:
    """The model built from `data` minus its bad fields, or None when one is required."""
    if not isinstance(data, Mapping):
        return None
    kept = {k: v for k, v in data.items() if to_snake(str(k)) not in bad_fields}
    try:
        return model.model_validate(kept)
    except ValidationError:
        return None


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return f"the text {value!r}"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if value is None:
        return "nothing (null)"
    return repr(value)


def _owner(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model that owns the last segment of `loc` (for did-you-mean suggestions)."""
    current = model
    for part in loc[:-1]:
        if current is None:
            return None
        if isinstance(part, int):
            continue
        info = current.model_fields.get(to_snake(str(part)))
        if info is None:
            return None
        candidates = [info.annotation, *get_args(info.annotation)]
        for candidate in list(candidates):
            candidates.extend(get_args(candidate))
        current = next(
            (c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None
        )
    return current


_LIST_FIX = "write a list: `[a, b]`, or one `- item` per line (one item is still a list)."
_INT_FIX = "write a number without quotes, e.g. 4."
_BOOL_FIX = "write true or false (without quotes)."
_MAPPING_FIX = "write `field: value` lines (see the component's documented fields)."


def _problem(error: Any, path: str, model: type[BaseModel] | None) -> Problem:
    """One pydantic error in our words: what is wrong, what was given, and the fix."""
    kind, given, ctx = error["type"], error.get("input"), error.get("ctx") or {}
    loc = tuple(error["loc"])
    if isinstance(given, pulumi.Output):
        top = to_snake(str(loc[0])) if loc else ""
        keyword = (
            top
            if model is not None
            and top in model.__dict__.get("output_keywords", getattr(model, "output_keywords", ()))
            else ""
        )
        fix = (
            f"pass it as the component's keyword argument `{keyword}=` instead, which "
            "takes an Output."
            if keyword
            else "configuration takes plain values: give the literal value, or wire the "
            "component that produces it as a keyword argument."
        )
        return Problem(path, "is a pulumi Output, known only at deploy time.", fix)
    if kind == "extra_forbidden":
        owner = _owner(model, loc)
        names = [to_camel(name) for name in owner.model_fields] if owner else []
        close = difflib.get_close_matches(to_camel(str(loc[-1])), names, n=1, cutoff=0.6)
        if close:
            fix = f"did you mean {close[0]!r}?"
        elif names:
            fix = f"remove it; the fields are {', '.join(names)}."
        else:
            fix = "remove it, or check its spelling against the documented fields."
        return Problem(path, "is not a known field.", fix)
    shown = _describe(given)
    simple = {
        "missing": ("is required.", "set this field."),
        "strict_bool": (f"expected true or false, got {shown}.", _BOOL_FIX),
        "bool_type": (f"expected true or false, got {shown}.", _BOOL_FIX),
        "bool_parsing": (f"expected true or false, got {shown}.", _BOOL_FIX),
        "strict_int": (f"expected a whole number, got {shown}.", _INT_FIX),
        "int_type": (f"expected a whole number, got {shown}.", _INT_FIX),
        "int_parsing": (f"expected a whole number, got {shown}.", _INT_FIX),
        "int_from_float": (f"expected a whole number, got {given!r}.", "round it."),
        "float_type": (f"expected a number, got {shown}.", "write a number, e.g. 0.5."),
        "float_parsing": (f"expected a number, got {shown}.", "write a number, e.g. 0.5."),
        "string_type": (
            f"expected text, got {shown}.",
            "write the value as text (quote it if YAML reads it as something else).",
        ),
        "list_type": (f"expected a list, got {shown}.", _LIST_FIX),
        "tuple_type": (f"expected a list, got {shown}.", _LIST_FIX),
        "set_type": (f"expected a list, got {shown}.", _LIST_FIX),
        "dict_type": (f"expected a mapping of keys to values, got {shown}.", _MAPPING_FIX),
        "model_type": (f"expected a mapping of fields, got {shown}.", _MAPPING_FIX),
        "model_attributes_type": (f"expected a mapping of fields, got {shown}.", _MAPPING_FIX),
        "literal_error": (
            f"must be one of {ctx.get('expected', 'the allowed values')}, got {given!r}.",
            "use one of the allowed values.",
        ),
        "enum": (
            f"must be one of {ctx.get('expected', 'the allowed values')}, got {given!r}.",
            "use one of the allowed values.",
        ),
        "greater_than_equal": (f"must be at least {ctx.get('ge')}, got {given!r}.", "raise it."),
        "greater_than": (f"must be more than {ctx.get('gt')}, got {given!r}.", "raise it."),
        "less_than_equal": (f"must be at most {ctx.get('le')}, got {given!r}.", "lower it."),
        "less_than": (f"must be less than {ctx.get('lt')}, got {given!r}.", "lower it."),
        "too_short": (f"needs at least {ctx.get('min_length')} item(s).", "add entries."),
        "too_long": (f"takes at most {ctx.get('max_length')} item(s).", "remove entries."),
        "string_too_short": ("must not be empty.", "give a value."),
        "string_too_long": (f"is longer than {ctx.get('max_length')} characters.", "shorten it."),
        "string_pattern_mismatch": (
            f"{given!r} does not have the expected form ({ctx.get('pattern')}).",
            "match the documented format.",
        ),
    }
    if kind in simple:
        message, fix = simple[kind]
        return Problem(path, message, fix)
    message = str(error["msg"]).rstrip(".") + "."
    fix = ""
    if kind in ("value_error", "assertion_error"):
        # Our own validators put the fix after " Fix: " in the message.
        message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
        if " Fix: " in message:
            message, fix = message.split(" Fix: ", 1)
    return Problem(path, message, fix)


def _config_error(
    exc: ValidationError, where: str, model: type[BaseModel] | None = None
) -> ConfigError:
    problems = []
    errors = exc.errors()
    for error in errors:
        loc = tuple(error["loc"])
        if error["type"] == "too_short" and any(
            len(other["loc"]) > len(loc) and tuple(other["loc"][: len(loc)]) == loc
            for other in errors
        ):
            # Pydantic counts a list's length after dropping its invalid items: "at least 1
            # item" beside a bad item is a cascade, not a second problem.
            continue
        path = ".".join(str(part) for part in error["loc"] if part != "__root__")
        path = ".".join(p for p in (where, path) if p) or where or "config"
        problems.append(_problem(error, path, model))
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
            if not re.fullmatch(r"[a-z]{2,}(-[a-z]+)+-?\d+", region):
                raise ValueError(
                    f"{region!r} is not a region name. Fix: use names like 'us-east-1' "
                    "or 'europe-west4'."
                )
        return regions

    def region_problem(
        self, region: str, field: str, *, cloud: Literal["aws", "gcp"] = "aws"
    ) -> Problem | None:
        """A Problem when `region` is not a region of `cloud`, or is outside the allowed
        regions (C4); else None."""
        known = known_regions(cloud)
        if cloud == "gcp" and region not in known and GCP_REGION.fullmatch(region):
            known = known | {region}  # A GCP region the GPU catalog does not list.
        if known and region not in known:
            close = difflib.get_close_matches(region, sorted(known), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            return Problem(
                field,
                f"{region!r} is not {'an AWS' if cloud == 'aws' else 'a Google Cloud'} region.",
                f"{hint}{cloud.upper()} regions look like "
                f"{'us-east-1' if cloud == 'aws' else 'us-east1'}.",
            )
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
            ENVIRONMENT_TAG: self.environment,
            DATA_CLASSIFICATION_TAG: self.data_classification,
            ALLOWED_REGIONS_TAG: " ".join(self.allowed_regions),
            THIRD_PARTY_TAG: " ".join(s.name for s in self.third_party_services) or "none",
        }
        tags.update(extra)
        return {key: _AWS_TAG_VALUE.sub("_", value)[:256] for key, value in tags.items()}

    def gcp_labels(self, stack: str, **extra: str) -> dict[str, str]:
        """Labels for GCP resources, obeying GCP's rules: lowercase letters, digits, `_`
        and `-`, keys starting with a letter, at most 63 characters each. The allowed
        regions, joined by `_`, continue in `aistack-allowed-regions-2`, `-3`, ... when
        they do not fit one value: a truncated list would name a region that is not one."""
        labels = {
            gcp_label(key, is_key=True): gcp_label(value)
            for key, value in self.aws_tags(stack, **extra).items()
        }
        key = gcp_label(ALLOWED_REGIONS_TAG, is_key=True)
        chunks: list[list[str]] = [[]]
        for region in self.allowed_regions:
            if chunks[-1] and len("_".join([*chunks[-1], region])) > 63:
                chunks.append([])
            chunks[-1].append(gcp_label(region))
        for index, chunk in enumerate(chunks):
            labels[key if index == 0 else f"{key}-{index + 1}"] = "_".join(chunk)
        return labels


@cache
def known_regions(cloud: str) -> frozenset[str]:
    """Every region name of `cloud` (empty when it is not known here). AWS's come from the
    provider's own `Region` enum, so a new region arrives with a pulumi-aws upgrade."""
    if cloud == "aws":
        from pulumi_aws import Region

        return frozenset(region.value for region in Region)
    if cloud == "gcp":
        # The catalog's GPU regions; region_problem also accepts any name of GCP's form
        # (`europe-west3`), and refuses AWS names (`us-east-1`) and the multi-regions and
        # dual-regions (`US`, `EU`, `NAM4`) that single-region data must not use (C4, D2).
        from aistack import catalog

        return frozenset(region for t in catalog.instance_types("gcp") for region in t.regions)
    return frozenset()


#: A Google Cloud region name: `us-central1`, `europe-west4`, `me-central2`.
GCP_REGION = re.compile(r"[a-z]+-[a-z]+[0-9]+")


def gcp_label(text: str, *, is_key: bool = False) -> str:
    """`text` made into a valid GCP label key or value."""
    label = _GCP_LABEL.sub("_", text.lower().replace(":", "-").replace(" ", "_"))[:63]
    if is_key and not (label and label[0].isalpha()):
        label = ("k" + label)[:63]
    return label

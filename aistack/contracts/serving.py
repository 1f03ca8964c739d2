"""One model version among several behind one endpoint, on every platform: the checks that
aws.InferenceTier, gcp.InferenceTier and k8s.InferenceService share.

Each platform's version Args (`aws.ModelVersion`, `gcp.ModelVersion`,
`k8s.ServingVersion`) declare their fields in their own order and words (nodes on the
clouds, replicas on Kubernetes) and inherit `VersionSpec`'s check of the version itself;
`check_versions` judges the list the same way everywhere: how many, weights that sum to 100,
each version once, an approver for each in prod (G3). What a version gets (nodes, replicas,
machine types) each platform plans itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import field_validator

from aistack.config import AistackModel
from aistack.contracts.model_versions import explicit_version, version_slug
from aistack.errors import Problems

__all__ = ["MAX_VERSIONS", "VersionSpec", "check_versions"]

#: Versions one endpoint routes between; more is a migration, not a rollback.
MAX_VERSIONS = 5


class VersionSpec(AistackModel):
    """What every platform's version has: an explicit version (S7), its share of traffic,
    its standby at weight 0 (S6) and who approved it (G3)."""

    if TYPE_CHECKING:  # declared by each platform, in its schema's order
        version: str
        weight: int
        standby: Literal["warm", "zero"]
        approved_by: str | None

    @field_validator("version", check_fields=False)
    @classmethod
    def _explicit(cls, version: str) -> str:
        return explicit_version(version)


S = TypeVar("S", bound=VersionSpec)


def check_versions(
    specs: Sequence[S],
    *,
    at: str,
    item: Callable[[int], str],
    prod: bool,
    routes: str,
    splits: str,
    problems: Problems,
) -> list[tuple[int, S, str]]:
    """Each distinct version as (index, spec, slug), the problems of the list in `problems`.

    `at` names the list's field and `item(i)` its i-th entry (`serve.versions[0]`); `routes`
    says what routes between the versions and `splits` how weights split traffic, for the
    messages."""
    if len(specs) > MAX_VERSIONS:
        problems.add(
            at,
            f"{len(specs)} versions; {routes} routes between at most {MAX_VERSIONS}.",
            "remove versions you will not roll back to.",
        )
    total = sum(spec.weight for spec in specs)
    if total != 100:
        problems.add(
            at,
            f"the weights sum to {total}, not 100 ({splits}).",
            "give the version(s) taking traffic weights that sum to 100, the others 0.",
        )
    seen: dict[str, int] = {}
    distinct: list[tuple[int, S, str]] = []
    for index, spec in enumerate(specs):
        slug = version_slug(spec.version)
        if slug in seen:
            first = specs[seen[slug]].version
            renamed = " (the same once made a resource name)" if spec.version != first else ""
            problems.add(
                f"{item(index)}.version",
                f"{spec.version!r} repeats version {first!r}{renamed}.",
                "list each version once.",
            )
            continue
        seen[slug] = index
        if prod and not spec.approved_by:
            problems.add(
                f"{item(index)}.approvedBy",
                f"version {spec.version} would be deployable in prod without a recorded "
                "approver (checklist G3).",
                "set approvedBy to who approved it (name, email or ticket).",
            )
        distinct.append((index, spec, slug))
    return distinct

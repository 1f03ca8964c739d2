"""GitHub Actions OIDC, the same on every cloud: which repository, branches and environments
a CI identity trusts, and the `sub` claims that name them (GitHub docs, "About security
hardening with OpenID Connect": `repo:<owner>/<repo>:ref:refs/heads/<branch>` and
`repo:<owner>/<repo>:environment:<name>`). The AWS role trust and the GCP workload identity
provider both validate their fields here, so the two clouds refuse the same input."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import field_validator

from aistack.config import AistackModel

__all__ = [
    "ISSUER",
    "GithubRepoRef",
    "check_branches",
    "check_environments",
    "check_repository",
    "has_wildcard",
    "subjects",
]

ISSUER = "token.actions.githubusercontent.com"

_REPOSITORY = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")
_BRANCH = re.compile(r"^[A-Za-z0-9._/-]{1,255}$")
_ENVIRONMENT = re.compile(r"^[A-Za-z0-9._-](?:[A-Za-z0-9._ -]{0,253}[A-Za-z0-9._-])?$")
_WILDCARDS = ("*", "?")


def has_wildcard(text: str) -> bool:
    return any(w in text for w in _WILDCARDS)


def check_repository(repository: str) -> str:
    if has_wildcard(repository):
        raise ValueError(
            f"repository {repository!r} is a wildcard: every matching repository's "
            "workflows could sign in. Fix: name exactly one repository as 'owner/name'."
        )
    if not _REPOSITORY.fullmatch(repository):
        raise ValueError(
            f"{repository!r} is not a GitHub repository. Fix: write it as 'owner/name', "
            "e.g. 'acme/ml-platform'."
        )
    return repository


def check_branches(branches: tuple[str, ...]) -> tuple[str, ...]:
    for branch in branches:
        if has_wildcard(branch):
            raise ValueError(
                f"branch {branch!r} is a wildcard: any branch anyone can push would "
                "deploy. Fix: list the protected branches by name."
            )
        if branch.startswith("refs/"):
            raise ValueError(
                f"{branch!r} is a ref, not a branch name. Fix: write "
                f"{branch.removeprefix('refs/heads/')!r}."
            )
        if not _BRANCH.fullmatch(branch) or ".." in branch:
            raise ValueError(f"{branch!r} is not a branch name. Fix: e.g. 'main'.")
    if len(set(branches)) != len(branches):
        raise ValueError("a branch is listed twice. Fix: list each branch once.")
    return branches


def check_environments(environments: tuple[str, ...]) -> tuple[str, ...]:
    for environment in environments:
        if has_wildcard(environment):
            raise ValueError(
                f"environment {environment!r} is a wildcard. Fix: list the GitHub "
                "environments by name."
            )
        if not _ENVIRONMENT.fullmatch(environment):
            raise ValueError(
                f"{environment!r} is not a GitHub environment name. Fix: use letters, "
                "digits, '.', '_', '-' (e.g. 'prod')."
            )
    if len(set(environments)) != len(environments):
        raise ValueError("an environment is listed twice. Fix: list each one once.")
    return environments


def subjects(
    repository: str, branches: tuple[str, ...], environments: tuple[str, ...]
) -> list[str]:
    """The `sub` claims of the repository's runs on `branches` and jobs in `environments`."""
    repo = f"repo:{repository}"
    return [f"{repo}:ref:refs/heads/{b}" for b in branches] + [
        f"{repo}:environment:{e}" for e in environments
    ]


class GithubRepoRef(AistackModel):
    """What a CI identity trusts, checked the same on every cloud: one repository and its
    exact branches and environments. The clouds' Args declare the fields, with their own
    descriptions and in their own order (the schema's order), and inherit the checks and the
    `sub` claims."""

    if TYPE_CHECKING:  # declared by each subclass
        repository: str
        branches: tuple[str, ...]
        environments: tuple[str, ...]

    @field_validator("repository", check_fields=False)
    @classmethod
    def _one_repository(cls, repository: str) -> str:
        return check_repository(repository)

    @field_validator("branches", check_fields=False)
    @classmethod
    def _exact_branches(cls, branches: tuple[str, ...]) -> tuple[str, ...]:
        return check_branches(branches)

    @field_validator("environments", check_fields=False)
    @classmethod
    def _exact_environments(cls, environments: tuple[str, ...]) -> tuple[str, ...]:
        return check_environments(environments)

    def subjects(self) -> list[str]:
        """The `sub` claims trusted, one per branch and environment."""
        return subjects(self.repository, self.branches, self.environments)

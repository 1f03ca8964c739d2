"""Which extra brings which SDK: `pip install 'aistack[gcp]'` installs pulumi-gcp alone, and
a component whose SDK is missing says, in one line, which extra to install."""

from __future__ import annotations

from aistack.errors import AistackError

__all__ = ["EXTRA_OF", "MissingExtraError", "missing_extra"]

#: The SDK module -> the extra (pyproject.toml [project.optional-dependencies]) with it.
EXTRA_OF = {
    "pulumi_aws": "aws",
    "pulumi_gcp": "gcp",
    "pulumi_kubernetes": "k8s",
    "policy_sentry": "scan",
    "kubernetes_validate": "scan",
    "jsonschema": "scan",
    "pulumi_policy": "policy",
}


class MissingExtraError(AistackError, ModuleNotFoundError):
    """An SDK that one of aistack's extras installs is not installed (the CLI prints it as
    its one-line error)."""


def missing_extra(error: ModuleNotFoundError, what: str) -> MissingExtraError | None:
    """The one-line error for `error` if it is an SDK an extra brings, else None."""
    top = (error.name or "").split(".", 1)[0]
    extra = EXTRA_OF.get(top)
    if extra is None:
        return None
    return MissingExtraError(
        f"{what} needs {top.replace('_', '-')}, which aistack[{extra}] installs: "
        f"pip install 'aistack[{extra}]' (or uv add 'aistack[{extra}]').",
        name=error.name,
    )

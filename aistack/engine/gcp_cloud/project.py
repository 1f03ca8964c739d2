"""The simulated Google Cloud project: its number, the names it makes up, and its refusals.

Every part of the simulated GCP derives ids from these, so two runs of the same program
record the same graph.
"""

from __future__ import annotations

import hashlib

from pulumi.runtime import MockResourceArgs

from aistack.errors import AistackError

__all__ = ["SimulatedGcpError", "digest", "module_and_kind", "physical_name", "project_number"]


class SimulatedGcpError(AistackError):
    """A registration Google Cloud would refuse."""


def digest(*parts: str, length: int = 17) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:length]


def project_number(project: str) -> str:
    """A stable 12-digit project number for `project` (real numbers are 12 digits)."""
    return str(10**11 + int(digest("project-number", project, length=12), 16) % (9 * 10**11))


def physical_name(args: MockResourceArgs) -> str:
    explicit = args.inputs.get("name")
    if explicit:
        return str(explicit)
    # pulumi-gcp autonames `<logical name>-<7 hex>`.
    return f"{args.name}-{digest(args.typ, args.name, length=7)}"


def module_and_kind(token: str) -> tuple[str, str]:
    _, module_path, kind = token.split(":", 2)
    return module_path.split("/", 1)[0], kind

"""Google's predefined IAM roles and their permissions, as the data aistack ships
(`aistack/scan/data/gcp_roles.json`; aistack.scan.gcp_iam tells where it comes from and
docs/scan.md how to refresh it). Read here, below the rules and the scan, because both
ask what a granted role allows (AIS-T1-06: can the checkpoint writer replace an object)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

__all__ = ["GCP_ROLES_FILE", "GcpRoleData", "default_data"]

GCP_ROLES_FILE = Path(__file__).resolve().parents[1] / "scan" / "data" / "gcp_roles.json"


class GcpRoleData:
    """Google's predefined roles and permissions, read from the shipped file on first use
    (an AWS-only scan never opens it)."""

    def __init__(self, path: Path = GCP_ROLES_FILE) -> None:
        self.path = path

    @functools.cached_property
    def _document(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.path.read_text())
        return document

    @property
    def version(self) -> str:
        doc = self._document
        return f"Google IAM roles of {doc['commit_date']} ({doc['repository']}@{doc['commit'][:7]})"

    @functools.cached_property
    def stages(self) -> dict[str, str]:
        """Predefined role -> launch stage (GA, BETA, ALPHA, DEPRECATED)."""
        return dict(self._document["roles"])

    @functools.cached_property
    def permissions(self) -> frozenset[str]:
        """Every permission some predefined role includes."""
        return frozenset(
            f"{service}.{resource}.{verb}" if resource else f"{service}.{verb}"
            for service, resources in self._document["permissions"].items()
            for resource, verbs in resources.items()
            for verb in verbs
        )

    @property
    def custom_roles_support(self) -> dict[str, str]:
        """Permission -> TESTING or NOT_SUPPORTED, where the data knows it."""
        return dict(self._document.get("custom_roles_support") or {})

    def exists(self, role: str) -> bool:
        return role in self.stages

    def permissions_of(self, role: str) -> frozenset[str]:
        """The permissions of a predefined role aistack grants (KeyError for the others:
        the file ships those roles' permissions only)."""
        return frozenset(self._document["role_permissions"][role])

    def grants(self, role: str, permission: str) -> bool:
        return permission in self.permissions_of(role)


@functools.cache
def default_data() -> GcpRoleData:
    return GcpRoleData()

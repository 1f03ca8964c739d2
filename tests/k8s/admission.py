"""A ValidatingAdmissionPolicy evaluated as the API server evaluates it, with real CEL
interpreters, so a test judges the expressions aistack ships, not a Python copy of them.

Two independent implementations, and `evaluate` runs both and requires them to agree:
- `cel-cpp`: the CEL project's C++ runtime (package cel-expr-python), whose `matches` is
  RE2, the regular expression syntax cel-go, and so the API server, uses;
- `celpy`: cel-python, pure Python, `matches` through Python's `re`.

What it follows (Kubernetes docs, "Validating Admission Policy",
kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/):
- `matchConstraints.resourceRules`: the request's group, resource (with its subresource,
  `pods/ephemeralcontainers`) and operation must be listed; `*` matches any;
- `matchConditions`: all must be true, else the policy is skipped;
- `variables`: named expressions, read as `variables.<name>` (evaluated here in order and
  eagerly, where the API server is lazy: stricter, as an expression that errors fails here
  even when the API server would not read it);
- `validations`: each false expression is a failure, reported with `messageExpression`
  when it evaluates to a one-line string, else `message`. An expression that errors raises
  here (with `failurePolicy: Fail` the API server would refuse the request).

The CEL variables: `object`, `oldObject` (null on CREATE), `request` (operation,
userInfo), `namespaceObject` (null for a cluster-scoped object).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import celpy
from cel_expr_python import cel as celcpp
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
ENGINES = ("cel-cpp", "celpy")
_ROOTS = ("object", "oldObject", "request", "namespaceObject", "variables")


class CelError(Exception):
    """An expression that errors at run time (a missing key, no such overload)."""


# ---- cel-cpp (cel-expr-python) ----------------------------------------------------------

_CPP_ENV = celcpp.NewEnv(variables={name: celcpp.Type.DYN for name in _ROOTS})
_CPP: dict[str, Any] = {}


def _cel_cpp(expression: str, data: dict[str, Any]) -> Any:
    if expression not in _CPP:
        _CPP[expression] = _CPP_ENV.compile(expression)
    value = _CPP[expression].eval(data=data)
    if value.type() == celcpp.Type.ERROR:
        raise CelError(f"{expression}: {value.value()}")
    return value.plain_value()


# ---- celpy (cel-python) -----------------------------------------------------------------


class _Object(celtypes.MapType):
    """A map that compares with `null` as CEL's heterogeneous equality says (cel-spec
    langdef "Equality": values of different types are not equal), which cel-go and cel-cpp
    implement and cel-python 0.5 does not (it raises "no such overload: MapType !=
    NoneType"). Used for `object`, `oldObject` and `namespaceObject`, which policies
    compare with null."""

    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> Any:
        return celtypes.BoolType(False) if other is None else super().__eq__(other)

    def __ne__(self, other: object) -> Any:
        return celtypes.BoolType(True) if other is None else super().__ne__(other)


_PY_ENV = celpy.Environment()
_PY: dict[str, Any] = {}


def _to_json(value: Any) -> Any:
    """A celpy value back as plain Python (bool, str, int, list, dict)."""
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    if isinstance(value, celtypes.IntType):
        return int(value)
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {_to_json(k): _to_json(v) for k, v in value.items()}
    return value


def _celpy(expression: str, data: dict[str, Any]) -> Any:
    if expression not in _PY:
        _PY[expression] = _PY_ENV.program(_PY_ENV.compile(expression))
    activation = {
        name: (
            None
            if data.get(name) is None
            else _Object(celpy.json_to_cel(data[name]))
            if name in ("object", "oldObject", "namespaceObject")
            else celpy.json_to_cel(data[name])
        )
        for name in _ROOTS
    }
    try:
        return _to_json(_PY[expression].evaluate(activation))
    except celpy.CELEvalError as error:
        raise CelError(f"{expression}: {error}") from None


_RUN = {"cel-cpp": _cel_cpp, "celpy": _celpy}


def cel(expression: str, data: dict[str, Any], engine: str = "cel-cpp") -> Any:
    """Evaluate one CEL expression on plain data; CelError when it errors."""
    return _RUN[engine](expression, data)


# ---- the policy -------------------------------------------------------------------------


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


def _verdict(spec: dict[str, Any], data: dict[str, Any], engine: str) -> Verdict:
    for condition in spec.get("matchConditions") or []:
        if cel(condition["expression"], data, engine) is not True:
            return Verdict(matched=False)
    data = {**data, "variables": {}}
    for variable in spec.get("variables") or []:
        data["variables"][variable["name"]] = cel(variable["expression"], data, engine)
    failures = []
    for validation in spec["validations"]:
        result = cel(validation["expression"], data, engine)
        assert isinstance(result, bool), f"{validation['expression']} is not a bool: {result!r}"
        if result:
            continue
        message = validation.get("message", "")
        if "messageExpression" in validation:
            try:
                value = cel(validation["messageExpression"], data, engine)
            except CelError:
                value = None  # the API server falls back to `message`
            if isinstance(value, str) and "\n" not in value:
                message = value
        failures.append(message)
    return Verdict(matched=True, failures=failures)


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
    `namespace_labels` (None: `namespaceObject` null), by both CEL engines, which must
    agree."""
    spec = policy.get("spec", policy)
    group, resource = RESOURCES[obj["kind"]]
    if subresource:
        resource = f"{resource}/{subresource}"
    if not _matches_rules(spec, group, resource, operation):
        return Verdict(matched=False)
    namespace = (obj.get("metadata") or {}).get("namespace", "default")
    data: dict[str, Any] = {
        "object": obj,
        "oldObject": old,
        "request": {
            "operation": operation,
            "namespace": namespace,
            "subResource": subresource,
            "resource": {"group": group, "resource": resource.split("/")[0]},
            "userInfo": {"username": "someone", "groups": list(groups)},
        },
        "namespaceObject": None
        if namespace_labels is None
        else {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": namespace, "labels": namespace_labels},
        },
    }
    verdicts = {engine: _verdict(spec, data, engine) for engine in ENGINES}
    first, second = verdicts.values()
    assert first == second, f"the CEL engines disagree: {verdicts}"
    return first

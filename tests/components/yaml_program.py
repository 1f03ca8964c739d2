"""A Pulumi YAML program built offline through the component provider, as the YAML runtime
builds it: each resource constructed in the program's order with its properties as the
engine hands them over (numbers as floats), `${name}`, `${name.output}` and
`${name.output["key"]}` replaced by what construct returned. Resource options are the
engine's business, not the provider's, so they are not applied here (the program's order
already puts every dependency first)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pulumi
import yaml

REFERENCE = re.compile(r"^\$\{([\w-]+)(?:\.(\w+))?(?:\[\"([\w./-]+)\"\])?\}$")


def load(path: Path) -> dict[str, Any]:
    return dict(yaml.safe_load(path.read_text()))


def as_the_engine_sends(value: Any) -> Any:
    """Every number a float, as the Pulumi engine hands them to a component provider."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, dict):
        return {key: as_the_engine_sends(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_the_engine_sends(item) for item in value]
    return value


def _resolve(value: Any, variables: dict[str, Any], outputs: dict[str, Any]) -> Any:
    if isinstance(value, str) and (match := REFERENCE.match(value)):
        head, prop, key = match.groups()
        if prop is None:
            return variables[head]
        found = outputs[head][prop]
        if key is None:
            return found
        return pulumi.Output.from_input(found).apply(lambda values: values[key])
    if isinstance(value, dict):
        return {k: _resolve(v, variables, outputs) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, variables, outputs) for v in value]
    return value


def build(provider: Any, program: dict[str, Any]) -> dict[str, Any]:
    """Constructs PROGRAM's resources (call it inside a Pulumi program); returns each
    resource's outputs by name."""
    variables = program.get("variables", {})
    outputs: dict[str, Any] = {}
    for name, resource in program["resources"].items():
        inputs = _resolve(as_the_engine_sends(resource["properties"]), variables, outputs)
        outputs[name] = provider.construct(name, resource["type"], inputs, None).state
    return outputs

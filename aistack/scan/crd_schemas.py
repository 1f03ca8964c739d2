"""Strict validation of custom resources against the upstream CRDs of the versions aistack pins.

kubernetes-validate knows built-in kinds only; a custom resource (a Kueue ClusterQueue, a
Karpenter NodePool, a PrometheusRule) would only warn "Couldn't find schema". The API
server validates a custom resource with the `openAPIV3Schema` of its CRD version, and
prunes unknown fields unless the schema says `x-kubernetes-preserve-unknown-fields`
(Kubernetes docs, "Extend the Kubernetes API with CustomResourceDefinitions": pruning,
"Specifying a structural schema"). Pruning is silent: a misspelt field is dropped and the
object is created without it, which is how `cohort` on Kueue v1beta2 (renamed `cohortName`)
turns into a queue without a cohort. Validated here, an unknown field is an error instead:

- `additionalProperties: false` wherever a schema lists `properties` and does not keep
  unknown fields (what pruning would have removed);
- `x-kubernetes-int-or-string: true` becomes "an integer or a string";
- the rest of the schema is JSON Schema draft 4-7 as the CRD gives it.

The CRDs are kept, unmodified, under `aistack/scan/data/crds/<project>-<version>/`, each
directory naming its source in `aistack/scan/data/crds/SOURCES.md`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["CRD_DIRECTORY", "CrdSchema", "crd_schemas", "schema_for", "validate_custom_resource"]

CRD_DIRECTORY = Path(__file__).parent / "data" / "crds"


@dataclass(frozen=True)
class CrdSchema:
    api_version: str
    kind: str
    #: The CRD's file, relative to CRD_DIRECTORY (names the pinned upstream version).
    source: str
    schema: dict[str, Any]


def _strict(schema: Any) -> Any:
    """The schema with pruning turned into refusal (see the module docstring)."""
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    # `properties` maps field names to schemas: its keys are not schema keywords (a field
    # may be named like one), so only its values are walked, below.
    out = {key: _strict(value) for key, value in schema.items() if key != "properties"}
    if out.pop("x-kubernetes-int-or-string", False):
        out.pop("type", None)
        out.setdefault("anyOf", [{"type": "integer"}, {"type": "string"}])
    if (
        "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {name: _strict(value) for name, value in schema["properties"].items()}
    return out


@cache
def crd_schemas() -> dict[tuple[str, str], CrdSchema]:
    """(apiVersion, kind) -> its strict schema, for every version served by every CRD kept."""
    groups = sorted({path.name.split("_", 1)[0] for path in CRD_DIRECTORY.rglob("*_*.yaml")})
    return {key: schema for group in groups for key, schema in _group_schemas(group).items()}


@cache
def _group_schemas(group: str) -> dict[tuple[str, str], CrdSchema]:
    """The schemas of one API group's CRDs. Each kept file is named `<group>_<plural>.yaml`,
    as controller-gen writes them (tests/scan/test_crd_schemas.py holds every file to it),
    so a lookup reads only its group's files: the 2 MB of YAML take about 2 s to read even
    with libyaml (its C parser, PyYAML's Python constructor), and most processes validate
    the custom resources of one or two operators."""
    import yaml

    # libyaml's loader when PyYAML has it: a tenth of the pure-Python loader's time.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    found: dict[tuple[str, str], CrdSchema] = {}
    for path in sorted(CRD_DIRECTORY.glob(f"*/{group}_*.yaml")):
        for document in yaml.load_all(path.read_text(), Loader=loader):
            if not document or document.get("kind") != "CustomResourceDefinition":
                continue
            spec = document["spec"]
            for version in spec["versions"]:
                if not version.get("served", True):
                    continue
                api_version = f"{spec['group']}/{version['name']}"
                schema = version["schema"]["openAPIV3Schema"]
                key = (api_version, spec["names"]["kind"])
                found[key] = CrdSchema(
                    api_version,
                    spec["names"]["kind"],
                    str(path.relative_to(CRD_DIRECTORY)),
                    _strict(schema),  # a new schema: the loaded one is not changed
                )
    return found


def schema_for(api_version: str, kind: str) -> CrdSchema | None:
    group = api_version.rpartition("/")[0]
    return _group_schemas(group).get((api_version, kind)) if group else None


def validate_custom_resource(document: dict[str, Any]) -> list[str]:
    """What is wrong with `document` for its CRD, one line per error (`spec.x.y: message`);
    a kind without a kept CRD is itself an error, since nothing could check it."""
    from jsonschema import Draft7Validator

    found = schema_for(document.get("apiVersion", ""), document.get("kind", ""))
    if found is None:
        return [f"no CRD kept for {document.get('apiVersion')} {document.get('kind')}"]
    validator = Draft7Validator(found.schema)
    return sorted(
        f"{'.'.join(str(p) for p in error.absolute_path) or '<root>'}: {error.message}"
        for error in validator.iter_errors(document)
    )

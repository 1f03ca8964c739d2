"""Regenerate aistack/scan/data/gcp_terraform.json from pulumi-gcp's bridge metadata.

pulumi-gcp is generated from terraform-provider-google; the generator records, per
Terraform resource type, the Pulumi token it became and which of its collection fields
are repeatable blocks (`maxItemsOne: false`): `provider/cmd/pulumi-resource-gcp/
bridge-metadata.json` in https://github.com/pulumi/pulumi-gcp. Pulumi pluralises a
repeatable field's name (`lifecycle_rule` -> `lifecycle_rules`); this script pairs each
Pulumi field of the installed SDK with its Terraform name so the plan converter can write
Terraform's.

    git clone --depth 1 https://github.com/pulumi/pulumi-gcp /tmp/pulumi-gcp
    uv run python tools/refresh_gcp_terraform_types.py \
        /tmp/pulumi-gcp/provider/cmd/pulumi-resource-gcp/bridge-metadata.json \
        --commit "$(git -C /tmp/pulumi-gcp rev-parse HEAD)" \
        --commit-date "$(git -C /tmp/pulumi-gcp log -1 --format=%cs)"

It prints the Pulumi list fields it could not pair (none expected); review the diff.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import sys
from pathlib import Path
from typing import Any

from aistack.scan.tfplan import _args_class, _fields

OUT = Path(__file__).resolve().parents[1] / "aistack/scan/data/gcp_terraform.json"


def plurals(name: str) -> set[str]:
    """The names the bridge may give a repeatable Terraform field (its inflector's rules)."""
    names = {name, f"{name}s", f"{name}es"}
    if name.endswith("y"):
        names.add(f"{name[:-1]}ies")
    if name.endswith("s"):
        names.add(f"{name}es")
    return names


def pair(cls: type | None, tf_fields: dict[str, Any], path: str, out: dict, unpaired: list):
    """Renames (Pulumi path -> Terraform name) at one level and below."""
    if cls is None:
        return
    for python_name, shape in _fields(cls).values():
        inner = shape[1] if isinstance(shape, tuple) and shape[0] == "list" else shape
        is_list = isinstance(shape, tuple) and shape[0] == "list"
        if python_name in tf_fields:
            tf_name = python_name
        else:
            matches = [
                k
                for k, v in tf_fields.items()
                if not v.get("maxItemsOne") and python_name in plurals(k)
            ]
            tf_name = matches[0] if len(matches) == 1 else None
            if tf_name is None:
                if is_list:
                    unpaired.append(f"{path}{python_name}")
                continue
            out[f"{path}{python_name}"] = tf_name
        sub = tf_fields[tf_name].get("elem", {}).get("fields", {})
        if isinstance(inner, tuple) and inner[0] == "object":
            pair(inner[1], sub, f"{path}{python_name}.", out, unpaired)


def _dump(document: dict[str, Any]) -> str:
    """One resource a line: a refresh's diff shows which types changed."""
    head = {k: v for k, v in document.items() if k != "resources"}
    lines = [json.dumps(head, indent=1)[:-2] + ',\n "resources": {']
    rows = [
        f" {json.dumps(token)}: {json.dumps(entry, separators=(',', ':'))}"
        for token, entry in document["resources"].items()
    ]
    return "\n".join(lines) + "\n" + ",\n".join(rows) + "\n }\n}\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("metadata", type=Path)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--commit-date", required=True)
    args = parser.parse_args(argv)
    metadata = json.loads(args.metadata.read_text())["auto-aliasing"]["resources"]
    resources: dict[str, dict[str, Any]] = {}
    unpaired: list[str] = []
    for tf_type, entry in sorted(metadata.items()):
        token = entry["current"]
        renames: dict[str, str] = {}
        missed: list[str] = []
        pair(_args_class(token), entry.get("fields", {}), "", renames, missed)
        unpaired += [f"{token} {path}" for path in missed]
        resources[token] = {"terraform": tf_type, **({"renames": renames} if renames else {})}
    document = {
        "source": (
            "pulumi-gcp's bridge metadata (the Terraform type of each Pulumi token and its "
            "repeatable blocks), paired with the installed pulumi_gcp SDK's field names"
        ),
        "repository": "https://github.com/pulumi/pulumi-gcp",
        "path": "provider/cmd/pulumi-resource-gcp/bridge-metadata.json",
        "commit": args.commit,
        "commit_date": args.commit_date,
        "pulumi_gcp": importlib.metadata.version("pulumi_gcp"),
        "generated": datetime.date.today().isoformat(),
        "resources": dict(sorted(resources.items())),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(_dump(document))
    print(f"{len(resources)} resources -> {OUT}")
    for line in unpaired:
        print(f"unpaired list field: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Regenerate aistack/scan/data/gcp_roles.json: Google's predefined IAM roles and permissions.

The facts are Google's "IAM basic and predefined roles reference"
(https://cloud.google.com/iam/docs/roles-permissions) and permissions reference
(https://cloud.google.com/iam/docs/permissions-reference), as the `gcloud iam roles list`
and `gcloud iam roles describe` dump that https://github.com/iann0036/iam-dataset refreshes
daily publishes them (gcp/predefined_roles.json, gcp/roles/<role>.json):

    git clone --depth 1 https://github.com/iann0036/iam-dataset /tmp/iam-dataset
    uv run python tools/refresh_gcp_roles.py /tmp/iam-dataset \
        --commit "$(git -C /tmp/iam-dataset rev-parse HEAD)" \
        --commit-date "$(git -C /tmp/iam-dataset log -1 --format=%cs)"

Optionally `--testable-permissions FILE`: the JSON of
`gcloud iam list-testable-permissions //cloudresourcemanager.googleapis.com/projects/P
--format=json`, whose `customRolesSupportLevel` (TESTING, NOT_SUPPORTED; absent when
SUPPORTED) says which permissions a custom role may hold. The dump above does not carry it.

What is shipped: every predefined role's name and launch stage; the permissions of the
roles aistack's GCP components grant (ROLES_USED, plus every roles/billing.* role); and
every permission some predefined role includes, the universe a custom role's permissions
are checked against.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "aistack/scan/data/gcp_roles.json"

#: The predefined roles aistack's GCP components grant (and the ones they may, by design).
ROLES_USED = (
    "roles/storage.objectViewer",
    "roles/storage.objectCreator",
    "roles/storage.objectUser",
    "roles/storage.objectAdmin",
    "roles/storage.legacyBucketReader",
    "roles/cloudkms.cryptoKeyEncrypterDecrypter",
    "roles/iam.workloadIdentityUser",
    "roles/iam.serviceAccountTokenCreator",
    "roles/iam.serviceAccountUser",
    "roles/artifactregistry.reader",
    "roles/artifactregistry.writer",
    "roles/pubsub.publisher",
    "roles/pubsub.subscriber",
    "roles/run.invoker",
    "roles/eventarc.eventReceiver",
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
)


def _permission_tree(permissions: set[str]) -> dict[str, dict[str, list[str]]]:
    """`storage.objects.get` -> {"storage": {"objects": ["get"]}} (a third of the size)."""
    tree: dict[str, dict[str, list[str]]] = collections.defaultdict(
        lambda: collections.defaultdict(list)
    )
    for permission in permissions:
        service, _, rest = permission.partition(".")
        resource, _, verb = rest.rpartition(".")
        tree[service][resource].append(verb)
    return {
        service: {resource: sorted(verbs) for resource, verbs in sorted(resources.items())}
        for service, resources in sorted(tree.items())
    }


def _dump(document: dict[str, Any]) -> str:
    """One role, one role's permissions, one service's permissions a line."""
    out = ["{"]
    for key, value in document.items():
        if isinstance(value, dict) and value:
            rows = [
                f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}"
                for k, v in value.items()
            ]
            out.append(f" {json.dumps(key)}: {{\n" + ",\n".join(rows) + "\n },")
        else:
            out.append(f" {json.dumps(key)}: {json.dumps(value)},")
    out[-1] = out[-1].rstrip(",")
    return "\n".join(out) + "\n}\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path, help="a checkout of iann0036/iam-dataset")
    parser.add_argument("--commit", required=True)
    parser.add_argument("--commit-date", required=True)
    parser.add_argument("--testable-permissions", type=Path)
    args = parser.parse_args(argv)
    listed = json.loads((args.dataset / "gcp/predefined_roles.json").read_text())
    stages = {role["name"]: role.get("stage", "GA") for role in listed}
    described: dict[str, list[str]] = {}
    for path in sorted((args.dataset / "gcp/roles").glob("*.json")):
        role = json.loads(path.read_text())
        described[role["name"]] = sorted(role.get("includedPermissions", []))
    universe = {p for name, perms in described.items() if name in stages for p in perms}
    used = [*ROLES_USED, *sorted(r for r in stages if r.startswith("roles/billing."))]
    missing = [role for role in used if role not in described]
    if missing:
        print(f"not in the dataset: {missing}", file=sys.stderr)
        return 1
    support: dict[str, str] = {}
    if args.testable_permissions:
        for item in json.loads(args.testable_permissions.read_text()):
            level = item.get("customRolesSupportLevel")
            if level and level != "SUPPORTED":
                support[item["name"]] = level
    document = {
        "source": (
            "Google's IAM basic and predefined roles reference and permissions reference, as "
            "the gcloud iam roles list/describe dump of iann0036/iam-dataset publishes them"
        ),
        "reference": "https://cloud.google.com/iam/docs/roles-permissions",
        "permissions_reference": "https://cloud.google.com/iam/docs/permissions-reference",
        "repository": "https://github.com/iann0036/iam-dataset",
        "paths": ["gcp/predefined_roles.json", "gcp/roles/<role>.json"],
        "commit": args.commit,
        "commit_date": args.commit_date,
        "generated": datetime.date.today().isoformat(),
        "custom_roles_support_source": (
            str(args.testable_permissions.name) if args.testable_permissions else None
        ),
        "custom_roles_support": dict(sorted(support.items())),
        "roles": dict(sorted(stages.items())),
        "role_permissions": {role: described[role] for role in used},
        "permissions": _permission_tree(universe),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(_dump(document))
    print(f"{len(stages)} roles, {len(universe)} permissions -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""AIS-C6-10: no Secret, ConfigMap or container environment holds cloud credentials."""

import base64
import binascii
import json
import re
from collections.abc import Iterator
from typing import Any

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import revealed
from aistack.queries.k8s import CONFIG_MAP, SECRET, is_k8s_object

#: Names under which cloud keys travel: the AWS SDKs' environment and credentials-file
#: keys, Azure's service principal secret and storage key, and Google's key-file variable.
CLOUD_KEY_NAMES = frozenset(
    {
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "azure_client_secret",
        "azure_storage_key",
        "azure_storage_account_key",
        "google_application_credentials",
        "google_credentials",
        "gcp_service_account_key",
    }
)
#: An AWS access key id: long-term (AKIA) or temporary (ASIA), 20 characters (IAM docs,
#: "Understanding unique ID prefixes").
_AWS_KEY_ID = re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b")


def _normalised(name: str) -> str:
    return re.sub(r"[-.\s]", "_", name).lower()


def _text(value: object, encoded: bool) -> str:
    if not isinstance(value, str):
        return ""
    if not encoded:
        return value
    try:
        return base64.b64decode(value, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return ""


def _looks_like_cloud_key(text: str) -> str | None:
    """What kind of cloud key `text` is, or None."""
    if _AWS_KEY_ID.search(text):
        return "an AWS access key id"
    if "aws_secret_access_key" in text.lower():
        return "an AWS credentials file"
    try:
        document = json.loads(text)
    except ValueError:
        return None
    # A Google service account key file (IAM docs, "Create and delete service account keys").
    if (
        isinstance(document, dict)
        and document.get("type") == "service_account"
        and ("private_key" in document)
    ):
        return "a Google service account key"
    return None


def _findings(data: dict, encoded: bool) -> list[str]:
    found = []
    for key, value in (data or {}).items():
        if _normalised(str(key).rsplit("/", 1)[-1]) in CLOUD_KEY_NAMES:
            found.append(f"key {key!r}")
            continue
        kind = _looks_like_cloud_key(_text(value, encoded))
        if kind:
            found.append(f"{kind} under {key!r}")
    return found


def _containers(value: object) -> Iterator[dict[Any, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("containers", "initContainers", "ephemeralContainers") and isinstance(
                item, list
            ):
                yield from (c for c in item if isinstance(c, dict))
            else:
                yield from _containers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _containers(item)


@rule(
    id="AIS-C6-10",
    checklist=["C6"],
    info="No Kubernetes Secret, ConfigMap or container environment carries cloud keys.",
    why="A key in a Secret is readable by anyone who can read Secrets in the namespace, "
    "is copied into etcd backups and never expires; workload identity (GKE Workload "
    "Identity, EKS Pod Identity or IRSA) gives the pod short-lived credentials instead.",
    fix="Delete the key and link the workload's ServiceAccount to a cloud identity "
    "(k8s.TeamNamespace serviceAccounts[].identity), then revoke the key in the cloud.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for resource in graph.resources:
        if not is_k8s_object(resource):
            continue
        inputs = revealed(resource.inputs)
        if resource.type in (SECRET, CONFIG_MAP):
            found = _findings(inputs.get("stringData") or {}, encoded=False)
            found += _findings(inputs.get("data") or {}, encoded=resource.type == SECRET)
            found += _findings(inputs.get("binaryData") or {}, encoded=True)
            what = "Secret" if resource.type == SECRET else "ConfigMap"
            if found:
                yield fail(resource, f"{what} holds cloud credentials: {', '.join(found)}.")
            else:
                yield ok(resource, f"{what} holds no cloud credentials.")
            continue
        env = [
            variable
            for container in _containers(inputs.get("spec") or {})
            for variable in container.get("env") or []
            if isinstance(variable, dict)
        ]
        if not env:
            continue
        found = [
            f"env {v.get('name')!r}"
            for v in env
            if _normalised(str(v.get("name", ""))) in CLOUD_KEY_NAMES
            or _looks_like_cloud_key(str(v.get("value", "")))
        ]
        if found:
            yield fail(resource, f"containers receive cloud credentials: {', '.join(found)}.")
        else:
            yield ok(resource, "no container receives cloud credentials.")

"""AIS-C6-06: no service account keys or HMAC keys; no key files in resource inputs."""

import re
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import HMAC_KEY, SERVICE_ACCOUNT, SERVICE_ACCOUNT_KEY

LONG_LIVED = {
    SERVICE_ACCOUNT_KEY: "a service account key: a private key that works from anywhere "
    "until someone deletes it (IAM docs, 'Best practices for managing service account keys')",
    HMAC_KEY: "a Cloud Storage HMAC key: a long-lived secret for a service account",
}
# The JSON key file `gcloud iam service-accounts keys create` writes, pasted into an input
# (environment variables, metadata, secrets).
_KEY_FILE = re.compile(r'"type"\s*:\s*"service_account"|-----BEGIN PRIVATE KEY-----')


def _holds_key_file(value: object) -> bool:
    if isinstance(value, str):
        return bool(_KEY_FILE.search(value))
    if isinstance(value, dict):
        return any(_holds_key_file(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_key_file(v) for v in value)
    return False


@rule(
    id="AIS-C6-06",
    checklist=["C6"],
    info="No GCP service account keys or HMAC keys; no key files stored in resources.",
    why="A key file never expires, works from any machine and leaks through images, logs and "
    "laptops. VMs, GKE pods and CI get short-lived tokens for their service account from the "
    "metadata server and Workload Identity Federation instead.",
    fix="Delete the key; run the workload as its service account (gcp.WorkloadIdentity), "
    "GKE pods through Workload Identity, CI through a GitHub workload identity pool. "
    "Optionally enforce the org policy iam.disableServiceAccountKeyCreation.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for resource in graph.resources:
        if resource.type in LONG_LIVED:
            yield fail(resource, LONG_LIVED[resource.type] + ".")
        elif resource.custom and resource.type.startswith("gcp:"):
            if _holds_key_file(resource.inputs):
                yield fail(resource, "its inputs hold a service account key file.")
            elif resource.type == SERVICE_ACCOUNT:
                yield ok(resource, "a service account with no key: tokens are short-lived.")

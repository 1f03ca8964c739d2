"""Identity in the simulated GCP: service accounts and Workload Identity Federation.

- a service account's id is `projects/<p>/serviceAccounts/<email>`, with a 21-digit
  `uniqueId`; workload identity pools and providers are named with the project NUMBER
  (`projects/<NUMBER>/locations/global/workloadIdentityPools/<id>[/providers/<id>]`);
- ids GCP refuses (account ids, pool and provider ids), a GitHub provider without an
  attribute condition and principals naming the project by ID fail the registration, each
  with the API's error.
"""

from __future__ import annotations

import re
from typing import Any

from aistack.engine.gcp_cloud.project import SimulatedGcpError, digest, project_number

__all__ = [
    "GITHUB_ISSUER",
    "POOL_ID",
    "SERVICE_ACCOUNT_ID",
    "check_principals",
    "identity_resource",
]

#: IAM API, projects.serviceAccounts.create: `accountId` "must be 6-30 characters long, and
#: match the regular expression [a-z]([-a-z0-9]*[a-z0-9])" (RFC 1035).
SERVICE_ACCOUNT_ID = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])")
#: IAM API, projects.locations.workloadIdentityPools(.providers).create: ids are 4-32
#: characters of [a-z0-9-]; the prefix `gcp-` is reserved by Google (pulumi-gcp docstring
#: of `workload_identity_pool_id` / `workload_identity_pool_provider_id`).
POOL_ID = re.compile(r"[a-z0-9-]{4,32}")
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"


def identity_resource(
    typ: str, project: str, name: str, inputs: dict[str, Any], out: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    number = project_number(project)
    if typ == "gcp:serviceaccount/account:Account":
        # pulumi-gcp autonames a missing account id (AccountArgs leaves it optional):
        # the logical name cut to 22 characters, `-` and 7 random characters (30 in all).
        logical, _, suffix = name.rpartition("-")
        account_id = str(inputs.get("accountId") or f"{logical[:22]}-{suffix}")
        if not (6 <= len(account_id) <= 30 and SERVICE_ACCOUNT_ID.fullmatch(account_id)):
            raise SimulatedGcpError(
                f"googleapi: Error 400: account_id {account_id!r} is invalid: service account "
                "ids are 6-30 characters matching [a-z]([-a-z0-9]*[a-z0-9])."
            )
        email = f"{account_id}@{project}.iam.gserviceaccount.com"
        resource_id = f"projects/{project}/serviceAccounts/{email}"
        out.update(
            accountId=account_id,
            email=email,
            member=f"serviceAccount:{email}",
            name=resource_id,
            # Service account unique ids are 21-digit numbers (IAM API `uniqueId`).
            uniqueId=str(10**20 + int(digest("sa", project, account_id, length=16), 16)),
            disabled=bool(inputs.get("disabled", False)),
        )
        return resource_id, out
    if typ == "gcp:iam/workloadIdentityPool:WorkloadIdentityPool":
        pool_id = str(inputs.get("workloadIdentityPoolId") or "")
        _check_pool_id(pool_id, "workload_identity_pool_id")
        # The pool's resource name uses the project NUMBER; Terraform's import id the ID.
        out.update(
            name=f"projects/{number}/locations/global/workloadIdentityPools/{pool_id}",
            state="ACTIVE",
            mode=inputs.get("mode") or "FEDERATION_ONLY",
        )
        return f"projects/{project}/locations/global/workloadIdentityPools/{pool_id}", out
    if typ == "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider":
        pool_id = str(inputs.get("workloadIdentityPoolId") or "")
        provider_id = str(inputs.get("workloadIdentityPoolProviderId") or "")
        if "/" in pool_id:
            # pulumi-gcp#1080: passing the pool's `id` or `name` instead of its short id.
            raise SimulatedGcpError(
                f"googleapi: Error 400: workload_identity_pool_id {pool_id!r} is a resource "
                "name; pass the pool's short id (pool.workload_identity_pool_id)."
            )
        _check_pool_id(provider_id, "workload_identity_pool_provider_id")
        oidc = inputs.get("oidc") or {}
        condition = str(inputs.get("attributeCondition") or "")
        if oidc.get("issuerUri") == GITHUB_ISSUER and "assertion." not in condition:
            # The API's answer to a GitHub provider without a condition
            # (terraform-google-github-actions-runners#261, chainguard-dev/
            # terraform-infra-common#672; IAM docs "Workload Identity Federation with
            # deployment pipelines", Conditions).
            raise SimulatedGcpError(
                "googleapi: Error 400: The attribute condition must reference one of the "
                "provider's claims. For more information, see https://cloud.google.com/iam/"
                "docs/workload-identity-federation-with-deployment-pipelines#conditions"
            )
        out.update(
            name=(
                f"projects/{number}/locations/global/workloadIdentityPools/{pool_id}"
                f"/providers/{provider_id}"
            ),
            state="ACTIVE",
        )
        resource_id = (
            f"projects/{project}/locations/global/workloadIdentityPools/{pool_id}"
            f"/providers/{provider_id}"
        )
        return resource_id, out
    return None


#: Federated principals (IAM docs, "Principal identifiers"): the pool path names the project
#: NUMBER, and the pool is a pool id or `<PROJECT_ID>.svc.id.goog` for GKE.
_PRINCIPAL = re.compile(
    r"principal(Set)?://iam\.googleapis\.com/projects/(?P<project>[^/]+)/locations/global/"
    r"workloadIdentityPools/(?P<pool>[a-z0-9.-]+)/(?P<rest>.+)"
)


def check_principals(typ: str, inputs: dict[str, Any]) -> None:
    """IAM refuses a federated principal that names the project by ID, or is malformed."""
    if not (typ.endswith("IAMMember") or typ.endswith("IAMBinding") or typ.endswith("IamMember")):
        return
    members = [inputs.get("member")] + list(inputs.get("members") or [])
    for member in (str(m) for m in members if m):
        if not member.startswith(("principal://", "principalSet://")):
            continue
        match = _PRINCIPAL.fullmatch(member)
        if match is None or not match["project"].isdigit():
            raise SimulatedGcpError(
                f"googleapi: Error 400: Invalid principal {member!r}: federated principals are "
                "principal(Set)://iam.googleapis.com/projects/<PROJECT_NUMBER>/locations/"
                "global/workloadIdentityPools/<pool>/..., with the project number, not its ID."
            )


def _check_pool_id(value: str, field: str) -> None:
    if not POOL_ID.fullmatch(value) or value.startswith("gcp-"):
        raise SimulatedGcpError(
            f"googleapi: Error 400: {field} {value!r} is invalid: 4-32 characters of "
            "[a-z0-9-], not starting with the reserved prefix 'gcp-'."
        )

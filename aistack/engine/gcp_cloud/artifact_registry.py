"""Artifact Registry in the simulated GCP: repositories, their IAM members, and the service
agents (`projects.ServiceIdentity`) that scanning and other APIs act as.

- a repository's id is `projects/<p>/locations/<l>/repositories/<id>` with `registryUri`
  `<l>-docker.pkg.dev/<p>/<id>`;
- repository ids GCP refuses and more than 10 cleanup policies fail the registration, each
  with the API's error.
"""

from __future__ import annotations

import re
from typing import Any

from aistack.engine.gcp_cloud.project import SimulatedGcpError, digest, project_number

__all__ = ["MAX_CLEANUP_POLICIES", "REPOSITORY_ID", "SERVICE_AGENT_DOMAINS", "registry_resource"]

#: Artifact Registry repository ids: lowercase letters, digits and hyphens, starting with a
#: letter and ending with a letter or digit, at most 63 characters (Artifact Registry docs,
#: "Create standard repositories", repository name rules).
REPOSITORY_ID = re.compile(r"[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?")
#: Service agents per API (IAM docs, "Service agents"): `service-<NUMBER>@<domain>`.
SERVICE_AGENT_DOMAINS = {
    "artifactregistry.googleapis.com": "gcp-sa-artifactregistry.iam.gserviceaccount.com",
    "containerscanning.googleapis.com": "gcp-sa-containerscanning.iam.gserviceaccount.com",
    "pubsub.googleapis.com": "gcp-sa-pubsub.iam.gserviceaccount.com",
    "cloudfunctions.googleapis.com": "gcf-admin-robot.iam.gserviceaccount.com",
    "container.googleapis.com": "container-engine-robot.iam.gserviceaccount.com",
    "eventarc.googleapis.com": "gcp-sa-eventarc.iam.gserviceaccount.com",
}
#: Artifact Registry applies at most 10 cleanup policies to a repository (Artifact Registry
#: docs, "Configure cleanup policies": maximum number of cleanup policies per repository).
MAX_CLEANUP_POLICIES = 10


def registry_resource(
    typ: str, project: str, region: str, inputs: dict[str, Any], out: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    if typ == "gcp:artifactregistry/repository:Repository":
        repository_id = str(inputs.get("repositoryId") or "")
        if not REPOSITORY_ID.fullmatch(repository_id):
            raise SimulatedGcpError(
                f"googleapi: Error 400: repository id {repository_id!r} is invalid: lowercase "
                "letters, digits and hyphens, starting with a letter, ending with a letter or "
                "digit, at most 63 characters."
            )
        policies = inputs.get("cleanupPolicies") or []
        if len(policies) > MAX_CLEANUP_POLICIES:
            raise SimulatedGcpError(
                f"googleapi: Error 400: {len(policies)} cleanup policies; a repository takes "
                f"at most {MAX_CLEANUP_POLICIES}."
            )
        location = str(inputs.get("location") or region)
        resource_id = f"projects/{project}/locations/{location}/repositories/{repository_id}"
        host = f"{location}-docker.pkg.dev" if inputs.get("format") == "DOCKER" else ""
        scanning = dict(inputs.get("vulnerabilityScanningConfig") or {})
        enabled = scanning.get("enablementConfig") != "DISABLED"
        scanning.setdefault("enablementConfig", "INHERITED")
        scanning.setdefault(
            "enablementState", "SCANNING_ACTIVE" if enabled else "SCANNING_DISABLED"
        )
        out.update(
            name=repository_id,
            location=location,
            mode=inputs.get("mode") or "STANDARD_REPOSITORY",
            registryUri=f"{host}/{project}/{repository_id}" if host else "",
            vulnerabilityScanningConfig=scanning,
            createTime="2026-01-01T00:00:00.000000Z",
            updateTime="2026-01-01T00:00:00.000000Z",
        )
        return resource_id, out
    if typ == "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember":
        location = str(inputs.get("location") or region)
        repository = str(inputs.get("repository") or "")
        target = (
            repository
            if repository.startswith("projects/")
            else f"projects/{project}/locations/{location}/repositories/{repository}"
        )
        resource_id = f"{target} {inputs.get('role', '')} {inputs.get('member', '')}"
        out.setdefault("etag", f"BwY{digest(resource_id, length=8)}=")
        return resource_id, out
    if typ == "gcp:projects/serviceIdentity:ServiceIdentity":
        service = str(inputs.get("service") or "")
        domain = SERVICE_AGENT_DOMAINS.get(service)
        if domain is None:
            raise SimulatedGcpError(
                f"the simulated cloud knows no service agent of {service!r}; add it to "
                "SERVICE_AGENT_DOMAINS with its source."
            )
        email = f"service-{project_number(project)}@{domain}"
        out.update(email=email, member=f"serviceAccount:{email}")
        return f"projects/{project}/services/{service}", out
    return None

"""The simulated cloud's Google Cloud answers: ids, self-links and invokes in GCP's formats.

`SimulatedCloud` (aistack.engine.cloud) hands every `gcp:` registration and the GCP
invokes to `GcpCloud`, the simulation of package `gcp` (a `SimulatedProvider`,
aistack.engine.context). Formats follow the Google APIs the provider calls (each cited
where it is built), so rules and scanners see what a real `pulumi up` records. One module
per responsibility:

- `resources`: the dispatcher `resource()`, what all types share, IAM member ids and the
  generic `projects/<p>/<location>/<collection>/<name>` path;
- `container` (GKE clusters and node pools), `storage`, `kms`, `identity` (service
  accounts, Workload Identity Federation, federated principals), `artifact_registry`
  (repositories, service agents), `quotas` (Cloud Quotas), `budget_guard` (budget,
  Pub/Sub, Monitoring, custom role, Cloud Function), `workbench` (Vertex AI Workbench
  instances): each type's ids and outputs and the refusals of its API;
- `provider`: `GcpCloud`, which hands registrations to `resources` and invokes to `invokes`;
- `invokes`: the invokes answered, by token (`lookups`: what earlier deployments left);
- `api_enablement`: the contract that a component's resource waits for its API
  (`ApiRaceCheck`, `missing_api_dependencies`);
- `project`: the project number, autonames and `SimulatedGcpError`.
"""

from __future__ import annotations

from aistack.engine.gcp_cloud.api_enablement import (
    API_OF_MODULE,
    ApiRaceCheck,
    missing_api_dependencies,
)
from aistack.engine.gcp_cloud.invokes import invokes
from aistack.engine.gcp_cloud.project import SimulatedGcpError, project_number
from aistack.engine.gcp_cloud.provider import GcpCloud
from aistack.engine.gcp_cloud.quotas import current_quota_value
from aistack.engine.gcp_cloud.resources import resource

__all__ = [
    "API_OF_MODULE",
    "SimulatedGcpError",
    "ApiRaceCheck",
    "GcpCloud",
    "current_quota_value",
    "invokes",
    "missing_api_dependencies",
    "project_number",
    "resource",
]

"""The simulated GCP's contract with the components about API enablement.

The simulated project is fresh, so a GCP resource inside an aistack component that does not
depend on the `projects.Service` enabling its API fails the run (`ApiRaceCheck`, run by the
engine's monitor), as its create fails on a real fresh project. Team resources outside
components are exempt: their APIs may be enabled out of band.
"""

from __future__ import annotations

from aistack.engine.gcp_cloud.project import module_and_kind
from aistack.engine.graph import Resource, StackGraph

__all__ = ["API_OF_MODULE", "SERVICE", "ApiRaceCheck", "missing_api_dependencies"]

SERVICE = "gcp:projects/service:Service"

#: The API a resource's module needs enabled on the project (Service Usage names).
API_OF_MODULE = {
    "storage": "storage.googleapis.com",
    "kms": "cloudkms.googleapis.com",
    "serviceaccount": "iam.googleapis.com",
    "iam": "iam.googleapis.com",
    "compute": "compute.googleapis.com",
    "container": "container.googleapis.com",
    "pubsub": "pubsub.googleapis.com",
    "monitoring": "monitoring.googleapis.com",
    "logging": "logging.googleapis.com",
    "artifactregistry": "artifactregistry.googleapis.com",
    "cloudquota": "cloudquotas.googleapis.com",
    "billing": "billingbudgets.googleapis.com",
    "cloudfunctionsv2": "cloudfunctions.googleapis.com",
    "cloudrunv2": "run.googleapis.com",
    "dns": "dns.googleapis.com",
    "workbench": "notebooks.googleapis.com",
}


def _api_of(resource: Resource) -> str | None:
    if not resource.type.startswith("gcp:") or resource.type == SERVICE:
        return None
    return API_OF_MODULE.get(module_and_kind(resource.type)[0])


def missing_api_dependencies(graph: StackGraph) -> list[tuple[Resource, str]]:
    """GCP resources inside aistack components that do not wait for the `projects.Service`
    enabling their API, with that API. On a fresh project each would fail its first `up`
    (services enable asynchronously: pulumi/pulumi#12163, terraform-provider-google#11020)."""
    check = ApiRaceCheck()
    found: list[tuple[Resource, str]] = []
    for res in graph.resources:
        check.add(res)
    for res in graph.resources:
        api = check.unwaited_api(res)
        if api is not None:
            found.append((res, api))
    return found


class ApiRaceCheck:
    """The API-enablement contract, judged as registrations arrive (the engine's monitor
    calls `error_for` once per resource): the index grows with each one, so judging the
    latest costs its ancestors and dependencies, not a pass over the whole graph."""

    def __init__(self) -> None:
        self._by_urn: dict[str, Resource] = {}
        self._enables: dict[str, str] = {}

    def add(self, res: Resource) -> None:
        self._by_urn[res.urn] = res
        if res.type == SERVICE:
            self._enables[res.urn] = str(res.inputs.get("service", ""))

    def error_for(self, res: Resource) -> str | None:
        """Records `res` (just registered) and returns the error GCP gives it if it belongs
        to an aistack component and does not wait for its API, else None. The simulated
        project is fresh: only what the stack enables is on, and only once the Service
        exists."""
        self.add(res)
        api = self.unwaited_api(res)
        if api is None:
            return None
        return (
            f"{res.type} {res.name!r}: googleapi: Error 403: {api} has not been used in "
            f"project {res.outputs.get('project', '')} before or it is disabled. "
            "(aistack: the resource does not depend on the ProjectServices' Service for "
            f"{api}; pass depends_on=services.enabling({api!r}).)"
        )

    def _in_aistack_component(self, res: Resource) -> bool:
        parent = self._by_urn.get(res.parent or "")
        while parent is not None:
            if parent.type.startswith("aistack:"):
                return True
            parent = self._by_urn.get(parent.parent or "")
        return False

    def unwaited_api(self, res: Resource) -> str | None:
        api = _api_of(res)
        if api is None or not self._in_aistack_component(res):
            return None
        seen: set[str] = set()
        todo = list(res.dependencies)
        while todo:
            urn = todo.pop()
            if urn in seen:
                continue
            seen.add(urn)
            if self._enables.get(urn) == api:
                return None
            found = self._by_urn.get(urn)
            if found is not None:
                todo.extend(found.dependencies)
        return api

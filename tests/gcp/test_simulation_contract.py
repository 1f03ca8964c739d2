"""The contract between the GCP components and the simulated cloud, over every component.

Two pulumi-gcp 10 facts that break a real `pulumi up` or `destroy` and that no mock would
catch by itself:

- `deletion_policy` (provider-side, default "DELETE") is the only protection that survives
  a state edit: every retained resource whose pulumi-gcp class takes it must set PREVENT.
- A resource whose API is not enabled yet fails on a fresh project: every GCP resource
  must depend on the ProjectServices' Service for its API.
"""

import inspect

import pulumi_gcp
import pytest

from aistack import gcp
from aistack.engine.gcp_cloud import missing_api_dependencies
from tests._harness.shared_graphs import shared
from tests.gcp.conftest import GOVERNANCE, run_stack

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("gcp-simulation_contract")

PROJECT = "team-ml-prod"


def _takes_deletion_policy(token: str) -> bool:
    """Read from the installed pulumi-gcp's signature, not from a list kept here."""
    _, module_path, kind = token.split(":", 2)
    cls = getattr(getattr(pulumi_gcp, module_path.split("/", 1)[0]), kind)
    return "deletion_policy" in inspect.signature(cls._internal_init).parameters


def _every_component(governance, allow_destroy=False):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        logs = gcp.DatasetBucket(
            "logs",
            {
                "kind": "logs",
                "region": "europe-west4",
                "governance": governance,
                "allowDestroyWithData": allow_destroy,
            },
            services=apis,
        )
        for kind in ("checkpoints", "models"):
            bucket = gcp.DatasetBucket(
                kind,
                {
                    "kind": kind,
                    "region": "europe-west4",
                    "governance": governance,
                    "allowDestroyWithData": allow_destroy,
                },
                services=apis,
                access_logs=logs,
            )
            bucket.grant_write("serviceAccount:t@p.iam.gserviceaccount.com", name="t", prefix="r")
        identity = gcp.WorkloadIdentity(
            "ml",
            {
                "governance": governance,
                "accountPrefix": "team-ml",
                "workloadPoolExists": True,
                "workloads": [
                    {
                        "name": "training",
                        "kubernetesServiceAccounts": [{"namespace": "a", "serviceAccount": "t"}],
                        "projectRoles": ["roles/logging.logWriter"],
                    }
                ],
                "github": {"repository": "acme/ml", "branches": ["main"]},
            },
            services=apis,
        )
        registry = gcp.ContainerRegistry(
            "images",
            {
                "region": "europe-west4",
                "governance": governance,
                "allowDestroyWithImages": allow_destroy,
            },
            services=apis,
        )
        registry.grant_pull(identity.member("training"), name="training")
        gcp.BudgetGuard(
            "budget",
            {
                "governance": governance,
                "region": "europe-west4",
                "billingAccount": "01A2B3-C4D5E6-F7A8B9",
                "monthlyLimit": 3000,
                "alertEmails": ["ml@example.com"],
                "killSwitch": True,
            },
            services=apis,
        )

    return program


@pytest.fixture(scope="module")
def every_component():
    """allow_destroy -> every component's stack with that choice, each built once for the
    module (shared)."""
    kept = run_stack(_every_component(dict(GOVERNANCE)))
    loose = run_stack(_every_component(dict(GOVERNANCE), allow_destroy=True))
    with shared(kept), shared(loose):
        yield {False: kept, True: loose}


#: Kept on destroy for what their delete would do, not for data they hold: a deleted pool
#: or provider holds its id for 30 days (IAM docs); the next `up` imports them.
KEPT_FOR_THEIR_IDS = {
    "gcp:iam/workloadIdentityPool:WorkloadIdentityPool",
    "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider",
}


def test_every_retained_resource_prevents_its_deletion_where_pulumi_gcp_allows(every_component):
    graph = every_component[False]
    retained = [
        r
        for r in graph.resources
        if r.type.startswith("gcp:") and r.retain_on_delete and r.type not in KEPT_FOR_THEIR_IDS
    ]
    assert retained
    for resource in retained:
        if _takes_deletion_policy(resource.type):
            assert resource.inputs.get("deletionPolicy") == "PREVENT", resource.name


def test_allowing_destroy_lets_the_provider_delete(every_component):
    graph = every_component[True]
    for resource in graph.resources:
        if resource.type.startswith("gcp:") and _takes_deletion_policy(resource.type):
            assert resource.outputs.get("deletionPolicy") == "DELETE", resource.name


@pytest.mark.parametrize("allow_destroy", [False, True])
def test_every_gcp_resource_waits_for_the_service_enabling_its_api(every_component, allow_destroy):
    graph = every_component[allow_destroy]
    assert missing_api_dependencies(graph) == []

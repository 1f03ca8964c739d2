"""Every built-in object aistack's Kubernetes components register is valid for the API
server: rendered from the recorded graph into a manifest and checked with
kubernetes-validate in strict mode (unknown fields are errors) against the oldest and the
newest Kubernetes version aistack supports."""

import copy

import kubernetes_validate
import pytest

from aistack import engine, k8s
from aistack.k8s._base import NEWEST_KUBERNETES, OLDEST_KUBERNETES
from aistack.queries.k8s import builtin_manifests
from tests.k8s.conftest import GOVERNANCE, ROLE_ARN

VERSIONS = (OLDEST_KUBERNETES, NEWEST_KUBERNETES)


def test_the_supported_versions_are_ones_kubernetes_validate_ships():
    utils = kubernetes_validate.utils
    shipped = {utils.major_minor(version) for version in utils.all_versions()}
    assert set(VERSIONS) <= shipped
    # The newest we claim is the newest it has: a package upgrade prompts a new claim.
    assert utils.major_minor(utils.latest_version()) == NEWEST_KUBERNETES


def _every_option(governance):
    """One namespace using every feature: each identity kind, listed egress, a token."""
    return {
        "team": "ml",
        "gpus": 8,
        "governance": governance,
        "serviceAccounts": [
            {
                "name": "trainer",
                "identity": "gke-workload-identity",
                "gcpServiceAccount": "trainer@team-ml-prod.iam.gserviceaccount.com",
            },
            {"name": "server", "identity": "eks-irsa", "awsRoleArn": ROLE_ARN},
            {"name": "notebook", "identity": "eks-pod-identity", "awsRoleArn": ROLE_ARN},
            {"name": "operator", "needsApiToken": True},
        ],
        "allowEgress": [
            {
                "cidr": "10.0.0.0/8",
                "exceptCidrs": ["10.1.0.0/16"],
                "ports": [443, 8443],
                "purpose": "object storage and STS endpoints",
            }
        ],
    }


@pytest.fixture(scope="module")
def manifests():
    graph = engine.run(lambda: k8s.TeamNamespace("ml-train", _every_option(dict(GOVERNANCE))))
    found = builtin_manifests(graph)
    assert {m["kind"] for _, m in found} == {
        "Namespace",
        "ResourceQuota",
        "LimitRange",
        "NetworkPolicy",
        "ServiceAccount",
    }
    return [m for _, m in found]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_team_namespace_object_passes_strict_validation(manifests, version):
    for document in manifests:
        kubernetes_validate.validate(document, version, strict=True)


@pytest.mark.parametrize(
    ("kind", "path", "value"),
    [
        ("ResourceQuota", ("spec", "hardLimits"), {"pods": "1"}),  # a field that does not exist
        ("NetworkPolicy", ("spec", "policyTypes"), "Ingress"),  # a list, not a string
        ("ServiceAccount", ("automountToken",), False),  # misspelt
    ],
)
def test_strict_validation_catches_a_wrong_field(manifests, kind, path, value):
    document = copy.deepcopy(next(m for m in manifests if m["kind"] == kind))
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(document, OLDEST_KUBERNETES, strict=True)

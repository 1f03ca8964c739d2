"""`aistack scan` over Kubernetes objects: checkov's kubernetes framework in the same run as
the plan, NetworkPolicy matching kept within a namespace, and strict schemas for every
object (kubernetes-validate for built-in kinds, the kept CRDs for custom resources)."""

import copy

import pulumi
import pulumi_kubernetes as kubernetes
import pytest

from aistack import engine, k8s
from aistack.scan import scan
from aistack.scan.kubernetes import SCAN_NAMESPACE_LABEL, kubernetes_documents, scoped_for_checkov
from tests.k8s.conftest import GOVERNANCE
from tests.k8s.test_checkov import SERVER


def _deployment(name, namespace, spec):
    return kubernetes.apps.v1.Deployment(
        name, metadata={"name": "server", "namespace": namespace}, spec=spec
    )


def _program():
    """A serving namespace with its default deny and a hardened server in it, and the same
    server in a namespace without any policy."""
    k8s.TeamNamespace(
        "ml-serve",
        {
            "team": "ml",
            "tier": "serve",
            "gpus": 2,
            "governance": GOVERNANCE,
            "serviceAccounts": [{"name": "server"}],
        },
    )
    _deployment("guarded-server", "ml-serve", SERVER["spec"])
    kubernetes.core.v1.Namespace("elsewhere", metadata={"name": "elsewhere"})
    _deployment("loose-server", "elsewhere", SERVER["spec"])


@pytest.fixture(scope="module")
def result():
    return scan(engine.run(_program), skips=None)


def test_checkov_runs_its_kubernetes_framework_on_the_stack_objects(result):
    assert result.checkov.resource_count >= 9
    assert ("CKV_K8S_43", "guarded-server") in result.checkov.passed_checks  # image digest
    assert ("CKV_K8S_41", "ml-serve-sa-server") in result.checkov.passed_checks


def test_a_default_deny_covers_the_pods_of_its_own_namespace_only(result):
    failed = {(f.check_id, f.resource) for f in result.checkov.findings}
    assert ("CKV2_K8S_6", "loose-server") in failed
    assert ("CKV2_K8S_6", "guarded-server") not in failed
    assert ("CKV2_K8S_6", "guarded-server") in result.checkov.passed_checks


def test_checkov_reads_namespace_scoped_copies_not_changed_manifests():
    policy = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "deny", "namespace": "a"},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]},
    }
    scoped = scoped_for_checkov(policy)
    assert scoped["spec"]["podSelector"] == {"matchLabels": {SCAN_NAMESPACE_LABEL: "a"}}
    assert policy["spec"]["podSelector"] == {}
    server = copy.deepcopy(SERVER)
    labels = scoped_for_checkov(server)["spec"]["template"]["metadata"]["labels"]
    assert labels == {"app": "server", SCAN_NAMESPACE_LABEL: "ml-serve"}
    assert SERVER["spec"]["template"]["metadata"]["labels"] == {"app": "server"}


def test_every_object_of_a_valid_stack_passes_both_kubernetes_versions(result):
    assert result.k8s_versions == ("1.30", "1.37")
    assert result.k8s_builtin == len(kubernetes_documents(engine.run(_program)))
    assert result.schema_findings == []


def test_a_wrong_field_is_a_schema_finding_for_every_supported_version():
    def program():
        kubernetes.core.v1.ConfigMap(
            "settings", metadata={"namespace": "team"}, data={"a": "b"}, opts=None
        )
        spec = {**SERVER["spec"], "replica": 2}  # spelt `replicas`
        _deployment("typo-server", "team", spec)

    found = scan(engine.run(program), skips=None, checkov=False)
    schema = [(f.check_id, f.resource, f.title.split(":")[0]) for f in found.schema_findings]
    assert schema == [
        ("K8S_SCHEMA", "typo-server", "Kubernetes 1.30"),
        ("K8S_SCHEMA", "typo-server", "Kubernetes 1.37"),
    ]
    assert "replica" in found.schema_findings[0].title
    assert found.schema_findings[0].location == "Deployment team/server"
    assert not found.ok


def test_a_custom_resource_without_a_kept_crd_is_a_finding_not_a_pass():
    def program():
        kubernetes.apiextensions.CustomResource(
            "widget",
            api_version="example.com/v1",
            kind="Widget",
            metadata={"namespace": "team"},
            spec={"size": 1},
        )

    found = scan(engine.run(program), skips=None, checkov=False)
    assert [(f.check_id, f.title) for f in found.schema_findings] == [
        ("CRD_SCHEMA", "no CRD kept for example.com/v1 Widget")
    ]
    assert found.as_dict()["kubernetes"]["custom_resources"] == 1


def test_a_stack_without_kubernetes_objects_reports_no_kubernetes_section():
    found = scan(engine.run(lambda: pulumi.export("nothing", 1)), skips=None, checkov=False)
    assert "kubernetes" not in found.as_dict()

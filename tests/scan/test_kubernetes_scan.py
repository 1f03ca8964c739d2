"""`aistack scan` over Kubernetes objects: checkov's kubernetes framework in the same run as
the plan, NetworkPolicy matching kept within a namespace, and strict schemas for every
object (kubernetes-validate for built-in kinds, the kept CRDs for custom resources)."""

import copy

import pulumi
import pulumi_kubernetes as kubernetes
import pytest

from aistack import engine
from aistack.scan import scan
from aistack.scan.kubernetes import SCAN_NAMESPACE_LABEL, kubernetes_documents, scoped_for_checkov
from tests.k8s.test_checkov import SERVER
from tests.scan import small_programs


@pytest.fixture(scope="module")
def result(stack_scans):
    """small_programs.kubernetes_namespaces, scanned in the session's checkov batch."""
    return stack_scans["k8s-namespaces"]


def test_checkov_runs_its_kubernetes_framework_on_the_stack_objects(result):
    assert result.resources >= 9
    assert ("CKV_K8S_43", "guarded-server") in result.passed  # image digest
    assert ("CKV_K8S_41", "ml-serve-sa-server") in result.passed


def test_a_default_deny_covers_the_pods_of_its_own_namespace_only(result):
    failed = {(f.check_id, f.resource) for f in result.findings}
    assert ("CKV2_K8S_6", "loose-server") in failed
    assert ("CKV2_K8S_6", "guarded-server") not in failed
    assert ("CKV2_K8S_6", "guarded-server") in result.passed


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
    kube = result.summary["kubernetes"]
    assert kube["versions"] == ["1.30", "1.37"]
    objects = kubernetes_documents(engine.run(small_programs.kubernetes_namespaces))
    assert kube["builtin_objects"] == len(objects)
    assert kube["failed"] == 0
    assert [f for f in result.findings if f.tool == "schema"] == []


def test_a_wrong_field_is_a_schema_finding_for_every_supported_version():
    found = scan(engine.run(small_programs.kubernetes_typo), skips=None, checkov=False)
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


def test_a_jobset_template_s_pods_are_judged_through_the_jobs_it_creates(stack_scans):
    scanned = stack_scans["k8s-jobset"]
    assert scanned.findings == []
    for job in ("llama-leader-0", "llama-workers-0"):
        name = f"llama-template:manifest.json/{job}"
        assert ("CKV_K8S_43", name) in scanned.passed  # image by digest
        assert ("CKV2_K8S_6", name) in scanned.passed  # the namespace's default deny
    assert scanned.summary["kubernetes"]["custom_resources"] == 1  # the JobSet, by its CRD


def test_a_misspelt_field_in_a_kept_template_is_a_schema_finding():
    found = scan(
        engine.run(small_programs.kubernetes_templates_with_typos), skips=None, checkov=False
    )
    by_where = {}
    for finding in found.schema_findings:
        by_where.setdefault((finding.check_id, finding.resource, finding.location), []).append(
            finding.title
        )
    assert set(by_where) == {
        ("K8S_SCHEMA", "templates:job.json", "Job team/train-"),
        ("K8S_SCHEMA", "templates:jobset.yaml/dist-workers-0", "Job team/dist-workers-0"),
        ("CRD_SCHEMA", "templates:jobset.yaml", "JobSet team/dist-"),
    }
    assert any(
        "backofLimit" in t for t in by_where["K8S_SCHEMA", "templates:job.json", "Job team/train-"]
    )
    assert any(
        "maxRestart" in t
        for t in by_where["CRD_SCHEMA", "templates:jobset.yaml", "JobSet team/dist-"]
    )


def test_kubernetes_schemas_are_parsed_once_per_process_with_the_same_verdicts(monkeypatch):
    import kubernetes_validate

    from aistack.scan import kubernetes as scan_kubernetes

    wrong = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "dataa": {}}
    right = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}}
    first = scan_kubernetes._builtin_errors(wrong, "1.37")
    assert len(first) == 1 and "dataa" in first[0]
    read_once = kubernetes_validate.utils.schema_contents
    misses = read_once.cache_info().misses
    assert scan_kubernetes._builtin_errors(wrong, "1.37") == first
    assert scan_kubernetes._builtin_errors(right, "1.37") == []
    assert read_once.cache_info().misses == misses  # no file read a second time
    # The library reading its files itself, as it does without aistack, agrees.
    monkeypatch.setattr(kubernetes_validate.utils, "schema_contents", read_once.__wrapped__)
    with pytest.raises(kubernetes_validate.ValidationError, match="dataa"):
        kubernetes_validate.validate(wrong, "1.37", strict=True)
    kubernetes_validate.validate(right, "1.37", strict=True)

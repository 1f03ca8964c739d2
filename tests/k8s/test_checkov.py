"""checkov's kubernetes framework over each TeamNamespace's objects, scanned together as
one bundle per namespace: no failed check, and its NetworkPolicy graph check (CKV2_K8S_6)
sees the default deny for a workload placed in the namespace.

Measured with checkov 3.3.30: on the namespace's own objects checkov has only two checks
(CKV_K8S_21 and CKV_K8S_41, on the ServiceAccounts); its pod checks apply once a
workload is added, which the hardened Deployment below stands in for. CKV2_K8S_6 matches
policies to pods by labels, ignoring namespaces, which is why bundles are per namespace.
"""

import copy
import json

import pytest
import yaml

from aistack import engine, k8s
from aistack.queries.k8s import namespace_bundles
from aistack.scan.checkov import REPORT_ARGUMENTS
from tests._harness import checkov_service
from tests.k8s.conftest import GOVERNANCE, GSA

DIGEST = "sha256:" + "0" * 64

#: A workload as the team would submit it: restricted security context, digest, limits.
SERVER = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "server", "namespace": "ml-serve"},
    "spec": {
        "selector": {"matchLabels": {"app": "server"}},
        "template": {
            "metadata": {"labels": {"app": "server"}},
            "spec": {
                "serviceAccountName": "server",
                "automountServiceAccountToken": False,
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": 10001,
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
                "containers": [
                    {
                        "name": "server",
                        "image": f"registry.example.com/server@{DIGEST}",
                        "imagePullPolicy": "Always",
                        "securityContext": {
                            "allowPrivilegeEscalation": False,
                            "readOnlyRootFilesystem": True,
                            "runAsNonRoot": True,
                            "runAsUser": 10001,
                            "capabilities": {"drop": ["ALL"]},
                        },
                        "resources": {
                            "requests": {"cpu": "1", "memory": "1Gi"},
                            "limits": {"cpu": "1", "memory": "1Gi"},
                        },
                        "livenessProbe": {"httpGet": {"path": "/health", "port": 8000}},
                        "readinessProbe": {"httpGet": {"path": "/health", "port": 8000}},
                    }
                ],
            },
        },
    },
}


def _checkov(tmp_path, name, documents):
    directory = tmp_path / name
    directory.mkdir()
    (directory / "bundle.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
    # The session's checkov service, else a checkov process (tests/_harness/checkov_service.py).
    _, stdout = checkov_service.run(
        ["-d", str(directory), "--framework", "kubernetes", *REPORT_ARGUMENTS]
    )
    report = json.loads(stdout)
    report = report[0] if isinstance(report, list) else report
    results = report.get("results", {})
    return (
        report["summary"],
        {(c["check_id"], c["resource"]) for c in results.get("passed_checks", [])},
        {(c["check_id"], c["resource"]) for c in results.get("failed_checks", [])},
    )


@pytest.fixture(scope="module")
def bundle():
    args = {
        "team": "ml",
        "tier": "serve",
        "gpus": 2,
        "governance": GOVERNANCE,
        "serviceAccounts": [
            {"name": "server", "identity": "gke-workload-identity", "gcpServiceAccount": GSA}
        ],
    }
    graph = engine.run(lambda: k8s.TeamNamespace("ml-serve", args))
    return namespace_bundles(graph)["ml-serve"]


def test_a_namespace_bundle_with_a_workload_fails_no_checkov_check(tmp_path, bundle):
    summary, passed, failed = _checkov(tmp_path, "serve", [*bundle, SERVER])
    assert summary["parsing_errors"] == 0
    assert failed == set()
    assert ("CKV2_K8S_6", "Pod.ml-serve.server.app-server") in passed
    assert ("CKV_K8S_41", "ServiceAccount.ml-serve.server") in passed


def test_the_same_workload_without_the_namespace_policies_fails_the_network_check(tmp_path):
    loose = copy.deepcopy(SERVER)
    loose["metadata"]["namespace"] = "elsewhere"
    _, _, failed = _checkov(tmp_path, "loose", [loose])
    assert ("CKV2_K8S_6", "Pod.elsewhere.server.app-server") in failed

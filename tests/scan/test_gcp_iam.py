"""Google IAM roles and custom-role permissions against Google's published roles reference.

The facts asserted below are in the shipped data (aistack/scan/data/gcp_roles.json, from
Google's roles reference as iann0036/iam-dataset dumps it, commit and date in the file) and
on Google's reference pages: https://cloud.google.com/iam/docs/roles-permissions/storage
(roles/storage.objectCreator has storage.objects.create and not storage.objects.delete),
.../cloudkms (cryptoKeyEncrypterDecrypter: cryptoKeyVersions.useToEncrypt/useToDecrypt),
.../pubsub (roles/pubsub.publisher: pubsub.topics.publish only).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pulumi_gcp as gcp
import pytest

from aistack import engine
from aistack.gcp import dataset_bucket
from aistack.scan import scan
from aistack.scan.gcp_iam import (
    BASIC_ROLE,
    CUSTOM_ROLE_PERMISSION,
    DEPRECATED_ROLE,
    GCP_ROLES_FILE,
    UNKNOWN_PERMISSION,
    UNKNOWN_ROLE,
    GcpRoleData,
    check_graph,
    default_data,
    role_uses,
)
from tests.scan import gcp_programs

TRAINER = gcp_programs.TRAINER
#: What a kill switch needs to resize node pools and instance groups. GKE authorizes node
#: pool calls with the cluster's permissions: there is no container.nodePools.* permission
#: (roles reference, roles/container.clusterAdmin), the very mistake the check exists for.
KILL_SWITCH_PERMISSIONS = [
    "container.clusters.get",
    "container.clusters.update",
    "compute.instanceGroupManagers.get",
    "compute.instanceGroupManagers.update",
]


def _run(program):
    return engine.run(program, config=gcp_programs.CONFIG)


def _ids(findings):
    return sorted((f.check_id, f.resource) for f in findings)


def test_the_gcp_guardrails_stack_grants_only_real_roles_and_permissions(gcp_guardrails_graph):
    # Every role and custom-role permission of the six GCP components (budget function
    # included) exists in Google's roles reference, and no basic role is granted.
    assert role_uses(gcp_guardrails_graph)
    assert check_graph(gcp_guardrails_graph) == []


def test_the_gcp_foundation_stack_names_only_real_roles(gcp_foundation_graph):
    uses = role_uses(gcp_foundation_graph)
    assert {u.role for u in uses} == {
        "roles/cloudkms.cryptoKeyEncrypterDecrypter",
        "roles/storage.objectCreator",
        "roles/storage.objectViewer",
    }
    assert check_graph(gcp_foundation_graph) == []


def test_a_misspelt_role_fails_and_names_the_resource():
    def program():
        gcp.storage.BucketIAMMember(
            "reader", bucket="data", role="roles/storage.objectReader", member=TRAINER
        )
        gcp.storage.BucketIAMMember(
            "viewer", bucket="data", role="roles/storage.objectViewer", member=TRAINER
        )

    findings = check_graph(_run(program))
    assert _ids(findings) == [(UNKNOWN_ROLE, "reader")]
    assert "roles/storage.objectReader" in findings[0].title
    assert findings[0].location == "reader: role"


def test_basic_roles_are_reported():
    def program():
        gcp.projects.IAMMember("owner", project="p", role="roles/owner", member=TRAINER)
        gcp.projects.IAMBinding("editors", project="p", role="roles/editor", members=[TRAINER])
        gcp.projects.IAMMember("logs", project="p", role="roles/logging.logWriter", member=TRAINER)

    assert _ids(check_graph(_run(program))) == [(BASIC_ROLE, "editors"), (BASIC_ROLE, "owner")]


def test_a_deprecated_predefined_role_is_reported():
    deprecated = sorted(r for r, stage in default_data().stages.items() if stage == "DEPRECATED")
    assert deprecated, "the data has DEPRECATED roles to test with"

    def program():
        gcp.projects.IAMMember("old", project="p", role=deprecated[0], member=TRAINER)

    assert _ids(check_graph(_run(program))) == [(DEPRECATED_ROLE, "old")]


def test_roles_inside_an_iam_policy_document_are_checked():
    def program():
        gcp.storage.BucketIAMPolicy(
            "policy",
            bucket="data",
            policy_data=json.dumps(
                {
                    "bindings": [
                        {"role": "roles/storage.objectViewer", "members": [TRAINER]},
                        {"role": "roles/storage.objectWriter", "members": [TRAINER]},
                    ]
                }
            ),
        )

    findings = check_graph(_run(program))
    assert _ids(findings) == [(UNKNOWN_ROLE, "policy")]
    assert findings[0].location == "policy: policyData.bindings[1].role"


def test_custom_role_permissions_must_exist_and_wildcards_are_refused():
    def program():
        role = gcp.projects.IAMCustomRole(
            "kill-switch",
            project=gcp_programs.PROJECT,
            role_id="aistackKillSwitch",
            title="aistack kill switch",
            permissions=[*KILL_SWITCH_PERMISSIONS, "container.nodePools.update", "compute.*"],
        )
        gcp.projects.IAMMember(
            "kill-switch-grant",
            project=gcp_programs.PROJECT,
            role=role.name.apply(lambda _: f"projects/{gcp_programs.PROJECT}/roles/x"),
            member=TRAINER,
        )

    findings = check_graph(_run(program))
    assert _ids(findings) == [(UNKNOWN_PERMISSION, "kill-switch")] * 2
    assert {f.location for f in findings} == {
        "kill-switch: permissions[4]",
        "kill-switch: permissions[5]",
    }


def test_a_custom_role_permission_the_data_marks_testing_is_reported(tmp_path):
    document = json.loads(GCP_ROLES_FILE.read_text())
    document["custom_roles_support"] = {"container.clusters.update": "TESTING"}
    data_file = tmp_path / "roles.json"
    data_file.write_text(json.dumps(document))

    def program():
        gcp.projects.IAMCustomRole(
            "kill-switch",
            role_id="aistackKillSwitch",
            title="aistack kill switch",
            permissions=KILL_SWITCH_PERMISSIONS,
        )

    graph = _run(program)
    assert check_graph(graph) == []
    findings = check_graph(graph, GcpRoleData(data_file))
    assert _ids(findings) == [(CUSTOM_ROLE_PERMISSION, "kill-switch")]
    assert "TESTING" in findings[0].title


def test_a_stack_without_google_iam_never_reads_the_data(reference_graph):
    missing = GcpRoleData(Path("/nonexistent/gcp_roles.json"))
    assert check_graph(reference_graph, missing) == []


def test_the_scan_reports_google_iam_findings_beside_the_aws_ones():
    def program():
        gcp.storage.BucketIAMMember(
            "reader", bucket="data", role="roles/storage.objectReader", member=TRAINER
        )

    result = scan(_run(program), checkov=False)
    assert [f.check_id for f in result.triage.failed] == [UNKNOWN_ROLE]
    summary = result.as_dict()["gcp_iam"]
    assert summary["grants"] == 1 and summary["failed"] == 1
    assert "iann0036/iam-dataset" in summary["database"]


# ---- the data itself: Google's facts the components rely on ---------------------------


def test_the_roles_data_names_its_source_commit_and_date():
    document = json.loads(GCP_ROLES_FILE.read_text())
    assert document["reference"] == "https://cloud.google.com/iam/docs/roles-permissions"
    assert document["repository"] == "https://github.com/iann0036/iam-dataset"
    assert re.fullmatch(r"[0-9a-f]{40}", document["commit"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", document["commit_date"])
    assert len(document["roles"]) > 2000
    assert len(default_data().permissions) > 10000


@pytest.mark.parametrize(
    ("role", "needed", "never"),
    [
        # DatasetBucket's grants: read, and write without delete or overwrite.
        (dataset_bucket.READ_ROLE, {"storage.objects.get", "storage.objects.list"}, set()),
        (
            dataset_bucket.WRITE_ROLE,
            {"storage.objects.create"},
            {"storage.objects.delete", "storage.objects.get", "storage.objects.update"},
        ),
        (
            dataset_bucket.KMS_ENCRYPTER,
            {"cloudkms.cryptoKeyVersions.useToEncrypt", "cloudkms.cryptoKeyVersions.useToDecrypt"},
            {"cloudkms.cryptoKeys.setIamPolicy"},
        ),
        # WorkloadIdentity: a Kubernetes service account impersonates the Google one.
        ("roles/iam.workloadIdentityUser", {"iam.serviceAccounts.getAccessToken"}, set()),
        ("roles/iam.serviceAccountTokenCreator", {"iam.serviceAccounts.getAccessToken"}, set()),
        # ContainerRegistry's reader and writer.
        (
            "roles/artifactregistry.reader",
            {"artifactregistry.repositories.downloadArtifacts"},
            {"artifactregistry.repositories.uploadArtifacts"},
        ),
        ("roles/artifactregistry.writer", {"artifactregistry.repositories.uploadArtifacts"}, set()),
        # BudgetGuard: the budget's topic, the function's trigger and its telemetry.
        ("roles/pubsub.publisher", {"pubsub.topics.publish"}, {"pubsub.subscriptions.consume"}),
        ("roles/pubsub.subscriber", {"pubsub.subscriptions.consume"}, {"pubsub.topics.publish"}),
        ("roles/run.invoker", {"run.routes.invoke"}, set()),
        ("roles/eventarc.eventReceiver", {"eventarc.events.receiveEvent"}, set()),
        ("roles/logging.logWriter", {"logging.logEntries.create"}, set()),
        ("roles/monitoring.metricWriter", {"monitoring.timeSeries.create"}, set()),
        ("roles/billing.viewer", {"billing.accounts.get"}, {"billing.resourceAssociations.delete"}),
    ],
)
def test_each_role_aistack_grants_holds_what_the_component_needs_and_no_more(role, needed, never):
    data = default_data()
    assert data.exists(role)
    assert needed <= data.permissions_of(role)
    assert not never & data.permissions_of(role)


def test_every_role_named_in_aistacks_gcp_code_exists():
    """A typo in a component constant fails here, before any stack names it (this covers
    the components other branches add under aistack/gcp/ too)."""
    root = Path(dataset_bucket.__file__).parent
    named = {
        role
        for path in root.rglob("*.py")
        for role in re.findall(r"[\"'](roles/[A-Za-z0-9_.]+)[\"']", path.read_text())
    }
    assert named, "aistack/gcp names roles"
    assert {role for role in named if not default_data().exists(role)} == set()


def test_the_kill_switch_permissions_exist_and_node_pool_permissions_do_not():
    permissions = default_data().permissions
    assert set(KILL_SWITCH_PERMISSIONS) <= permissions
    assert not any(p.startswith("container.nodePools.") for p in permissions)

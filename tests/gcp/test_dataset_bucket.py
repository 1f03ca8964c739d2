"""gcp.DatasetBucket: versioned, lifecycle-managed, CMEK, never public, retained, in region."""

import json
import re

import pytest

from aistack import gcp
from aistack.engine.gcp_cloud import missing_api_dependencies
from aistack.errors import ConfigError
from aistack.gcp.dataset_bucket import LIFECYCLE_DEFAULTS
from tests._harness.shared_graphs import shared
from tests.gcp.conftest import GOVERNANCE, run_stack

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("gcp-dataset_bucket")

BUCKET = "gcp:storage/bucket:Bucket"
MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
PROJECT = "team-ml-prod"
DATASET = {
    "name": "Support Tickets",
    "version": "2024-06-01",
    "source": "https://internal.example.com/exports/tickets",
    "licence": "proprietary",
    "containsPersonalData": True,
    "legalBasis": "contract: DPA signed by dpo@example.com",
}
TRAINER = "serviceAccount:trainer@team-ml-prod.iam.gserviceaccount.com"


def _args(governance, **overrides):
    return {
        "kind": "dataset",
        "region": "europe-west4",
        "governance": governance,
        "dataset": DATASET,
        **overrides,
    }


def _stack(governance, grants=False, **overrides):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        logs = gcp.DatasetBucket(
            "logs",
            {"kind": "logs", "region": "europe-west4", "governance": governance},
            services=apis,
        )
        data = gcp.DatasetBucket(
            "data", _args(governance, **overrides), services=apis, access_logs=logs
        )
        if grants:
            data.grant_read(TRAINER, prefix="train", name="trainer")
            data.grant_write(TRAINER, prefix="/checkpoints/", name="writer")
            data.grant_read(TRAINER, name="everything")

    return program


def _bucket(graph, component="data"):
    return graph.named(f"{component}-bucket")


@pytest.fixture(scope="module")
def default_graph():
    """The default dataset bucket, built once for the module's tests that read it."""
    with shared(run_stack(_stack(dict(GOVERNANCE)))) as graph:
        yield graph


@pytest.fixture(scope="module")
def grants_graph():
    """The bucket with read and write grants, built once for the tests that read it."""
    with shared(run_stack(_stack(dict(GOVERNANCE), grants=True))) as graph:
        yield graph


def test_the_bucket_is_versioned_and_retires_old_versions_keeping_the_newest(default_graph):
    bucket = _bucket(default_graph)
    assert bucket.inputs["versioning"] == {"enabled": True}
    rules = bucket.inputs["lifecycleRules"]
    deletes = [r["condition"] for r in rules if r["action"]["type"] == "Delete"]
    # All conditions of a rule must hold (Cloud Storage "Object Lifecycle Management"), and
    # numNewerVersions counts the live version: 3 noncurrent kept means at least 4 newer.
    assert {"daysSinceNoncurrentTime": 90, "numNewerVersions": 4, "withState": "ARCHIVED"} in (
        deletes
    )
    aborts = [r for r in rules if r["action"]["type"] == "AbortIncompleteMultipartUpload"]
    assert [a["condition"] for a in aborts] == [{"age": 7}]
    moves = [r for r in rules if r["action"]["type"] == "SetStorageClass"]
    assert moves[0]["action"]["storageClass"] == "NEARLINE"


@pytest.mark.parametrize("kind", ["checkpoints", "models", "logs"])
def test_each_kind_gets_its_lifecycle_and_soft_delete(run, governance, kind):
    graph = run(_stack(governance, kind=kind, dataset=None))
    bucket = _bucket(graph)
    days, keep, _, expire, soft = LIFECYCLE_DEFAULTS[kind]
    conditions = [r["condition"] for r in bucket.inputs["lifecycleRules"]]
    noncurrent = next(c for c in conditions if "daysSinceNoncurrentTime" in c)
    assert noncurrent["daysSinceNoncurrentTime"] == days
    assert noncurrent.get("numNewerVersions") == (keep + 1 if keep else None)
    assert any(c.get("withState") == "LIVE" for c in conditions) == (expire is not None)
    assert bucket.inputs["softDeletePolicy"]["retentionDurationSeconds"] == soft * 86400


def test_the_bucket_is_never_public(default_graph):
    bucket = _bucket(default_graph)
    assert bucket.inputs["publicAccessPrevention"] == "enforced"
    assert bucket.inputs["uniformBucketLevelAccess"] is True


def test_the_bucket_is_retained_and_its_deletion_prevented(default_graph):
    graph = default_graph
    bucket = _bucket(graph)
    assert bucket.inputs["deletionPolicy"] == "PREVENT"
    assert bucket.inputs["forceDestroy"] is False
    assert bucket.retain_on_delete
    assert graph.named("data-key").inputs["deletionPolicy"] == "PREVENT"


def test_allow_destroy_with_data_lets_destroy_delete_it(run, governance):
    bucket = _bucket(run(_stack(governance, allowDestroyWithData=True)))
    assert bucket.inputs["deletionPolicy"] == "DELETE"
    assert bucket.inputs["forceDestroy"] is True
    assert not bucket.retain_on_delete


def test_cmek_is_granted_to_the_storage_agent_before_the_bucket_names_the_key(default_graph):
    graph = default_graph
    bucket, key, grant = _bucket(graph), graph.named("data-key"), graph.named("data-key-agent")
    assert bucket.inputs["encryption"] == {"defaultKmsKeyName": key.id}
    assert grant.inputs["cryptoKeyId"] == key.id
    assert grant.inputs["role"] == "roles/cloudkms.cryptoKeyEncrypterDecrypter"
    number = graph.named("data-bucket").outputs["projectNumber"]
    assert grant.inputs["member"] == (
        f"serviceAccount:service-{number}@gs-project-accounts.iam.gserviceaccount.com"
    )
    assert grant.urn in bucket.dependencies
    # A CMEK key must sit in the bucket's location.
    assert graph.named("data-keyring").inputs["location"] == "europe-west4"


def test_a_shared_key_is_used_and_still_granted(run, governance):
    key = f"projects/{PROJECT}/locations/europe-west4/keyRings/shared/cryptoKeys/data"
    graph = run(_stack(governance, kmsKeyName=key))
    assert not graph.of_type("gcp:kms/cryptoKey:CryptoKey")[1:]  # only the logs bucket's
    assert _bucket(graph).inputs["encryption"] == {"defaultKmsKeyName": key}
    assert graph.named("data-key-agent").inputs["cryptoKeyId"] == key


def test_usage_logs_go_to_the_logs_bucket_which_storage_may_write(default_graph):
    graph = default_graph
    logs = _bucket(graph, "logs")
    assert _bucket(graph).inputs["logging"] == {
        "logBucket": logs.outputs["name"],
        "logObjectPrefix": "usage/data",
    }
    writer = graph.named("logs-usage-log-writer")
    assert writer.inputs["member"] == "group:cloud-storage-analytics@google.com"
    assert writer.inputs["role"] == "roles/storage.objectCreator"


def test_the_bucket_is_single_region_in_the_allowed_regions(default_graph):
    bucket = _bucket(default_graph)
    assert bucket.inputs["location"] == "europe-west4"
    assert bucket.inputs["project"] == PROJECT


@pytest.mark.parametrize(
    ("region", "message"),
    [
        ("us-east-1", "not a Google Cloud region"),
        ("EU", "not a Google Cloud region"),
        ("us-east1", "not in governance.allowed_regions"),
    ],
)
def test_a_region_outside_gcp_or_governance_is_refused(run, governance, region, message):
    with pytest.raises(ConfigError, match=message) as caught:
        run(_stack(governance, region=region))
    assert [p.field for p in caught.value.problems] == ["data.region"]


def test_without_services_the_bucket_is_refused():
    with pytest.raises(ConfigError, match="services"):
        gcp.DatasetBucket(
            "data",
            _args(
                dict(owner="a", costCenter="b", allowedRegions=["us-central1"]),
                region="us-central1",
            ),
        )


def test_services_that_do_not_enable_storage_are_refused(run, governance):
    def program():
        apis = gcp.ProjectServices(
            "apis", {"project": PROJECT, "services": ["cloudkms.googleapis.com"]}
        )
        gcp.DatasetBucket("data", _args(governance), services=apis)

    with pytest.raises(ConfigError, match="storage.googleapis.com"):
        run(program)


def test_access_logs_must_go_to_a_logs_bucket(run, governance):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        other = gcp.DatasetBucket(
            "ckpt",
            {"kind": "checkpoints", "region": "europe-west4", "governance": governance},
            services=apis,
        )
        gcp.DatasetBucket("data", _args(governance), services=apis, access_logs=other)

    with pytest.raises(ConfigError, match="kind 'logs'"):
        run(program)


@pytest.mark.parametrize("bucket_name", ["google-data", "goog-data", "Data", "a"])
def test_a_bucket_name_gcs_refuses_is_a_config_error(run, governance, bucket_name):
    with pytest.raises(ConfigError) as caught:
        run(_stack(governance, bucketName=bucket_name))
    assert [p.field for p in caught.value.problems] == ["data.bucketName"]


def test_soft_delete_outside_what_gcs_accepts_is_refused(run, governance):
    with pytest.raises(ConfigError, match="7 to 90"):
        run(_stack(governance, softDeleteDays=3))


def test_every_resource_waits_for_the_api_it_uses(grants_graph):
    # The API-enablement race: on a fresh project a resource created before its API is on
    # fails (pulumi/pulumi#12163, terraform-provider-google#11020).
    graph = grants_graph
    assert missing_api_dependencies(graph) == []


def test_grants_are_scoped_to_the_prefix_with_iam_conditions(grants_graph):
    graph = grants_graph
    name = _bucket(graph).outputs["name"]
    read = graph.named("data-read-trainer")
    assert read.inputs["role"] == "roles/storage.objectViewer"
    assert read.inputs["member"] == TRAINER
    expression = read.inputs["condition"]["expression"]
    assert f'resource.name.startsWith("projects/_/buckets/{name}/objects/train/")' in expression
    # storage.objects.list is authorised on the bucket, not on object names.
    assert f'resource.name == "projects/_/buckets/{name}"' in expression
    write = graph.named("data-write-writer")
    assert write.inputs["role"] == "roles/storage.objectCreator"
    assert write.inputs["condition"]["expression"] == (
        f'resource.name.startsWith("projects/_/buckets/{name}/objects/checkpoints/")'
    )
    viewer = graph.named("data-write-writer-viewer")
    assert viewer.inputs["role"] == "roles/storage.objectViewer"
    assert "condition" not in graph.named("data-read-everything").inputs


def test_one_member_can_be_granted_read_and_write_under_one_name(run, governance):
    def grants():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        data = gcp.DatasetBucket("data", _args(governance), services=apis)
        data.grant_read(TRAINER, prefix="raw", name="trainer")
        data.grant_write(TRAINER, prefix="derived", name="trainer")

    graph = run(grants)
    assert {r.name for r in graph.of_type(MEMBER)} == {
        "data-read-trainer",
        "data-write-trainer",
        "data-write-trainer-viewer",
    }


def test_labels_are_valid_gcp_labels_and_free_text_goes_to_the_manifest(default_graph):
    graph = default_graph
    labels = _bucket(graph).inputs["labels"]
    assert labels["aistack-stack"] == "aistack-dev"
    assert labels["aistack-dataset-name"] == "support_tickets"
    for key, value in labels.items():
        assert re.fullmatch(r"[a-z][a-z0-9_-]{0,62}", key) and re.fullmatch(
            r"[a-z0-9_-]{0,63}", value
        ), (key, value)
    manifest = graph.named("data-manifest")
    assert manifest.inputs["name"] == ".aistack/manifest.json"
    # pulumi-gcp marks a BucketObject's content secret: the graph holds it wrapped.
    content = manifest.inputs["content"]
    content = json.loads(content["value"] if isinstance(content, dict) else content)
    assert content["legalBasis"] == DATASET["legalBasis"]


def test_a_grant_without_a_name_is_keyed_by_its_member_as_registry_grants_are(run, governance):
    # One rule for every GCP grant: name= keys it, or else the member does (its local part
    # and a hash), so `grant_read(member)` reads the same on buckets and registries.
    def grants():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        data = gcp.DatasetBucket("data", _args(governance), services=apis)
        data.grant_read(TRAINER, prefix="raw")
        registry = gcp.ContainerRegistry(
            "images", {"region": "europe-west4", "governance": governance}, services=apis
        )
        registry.grant_pull(TRAINER)

    graph = run(grants)
    names = {r.name for r in graph.resources}
    (bucket,) = {n.removeprefix("data-read-") for n in names if n.startswith("data-read-")}
    (registry,) = {n.removeprefix("images-read-") for n in names if n.startswith("images-read-")}
    assert bucket == registry
    assert re.fullmatch(r"trainer-[0-9a-f]{6}", bucket)


def test_a_grant_to_a_member_known_only_at_deploy_time_needs_a_name(run, governance):
    import pulumi

    def grants():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        data = gcp.DatasetBucket("data", _args(governance), services=apis)
        data.grant_write(pulumi.Output.from_input(TRAINER))

    with pytest.raises(ConfigError) as caught:
        run(grants)
    assert caught.value.fields == ["data.grant_write.name"]


# ---- checkpoint writers replace what they rewrite (audit defect 8) ------------------------

CUSTOM_ROLE = "gcp:projects/iAMCustomRole:IAMCustomRole"


def _role_permissions(role: str) -> set[str]:
    """A predefined role's permissions, from Google's roles reference as aistack ships it
    (aistack/scan/data/gcp_roles.json, tools/refresh_gcp_roles.py)."""
    from aistack.scan.gcp_iam import GCP_ROLES_FILE

    return set(json.loads(GCP_ROLES_FILE.read_text())["role_permissions"][role])


def _writers(governance, kind: str, **grant):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        bucket = gcp.DatasetBucket(
            "store", {"kind": kind, "region": "europe-west4", "governance": governance},
            services=apis,
        )  # fmt: skip
        bucket.grant_write(TRAINER, prefix="runs", name="train", **grant)
        bucket.grant_write(TRAINER, prefix="evals", name="evals", **grant)

    return program


def test_a_checkpoint_writer_may_replace_and_delete_under_its_prefix_only(run, governance):
    """`gcloud storage rsync` re-uploads a changed `last.ckpt` under its name: an upload
    over an existing object needs storage.objects.create and storage.objects.delete (Cloud
    Storage IAM JSON/XML permission tables), which objectCreator lacks ("Does not give
    permission to view, delete, or replace objects")."""
    graph = run(_writers(governance, "checkpoints"))
    assert "storage.objects.delete" not in _role_permissions("roles/storage.objectCreator")
    (role,) = graph.of_type(CUSTOM_ROLE)
    assert set(role.inputs["permissions"]) == {
        "storage.objects.create",
        "storage.objects.delete",
        "storage.multipartUploads.create",
        "storage.multipartUploads.abort",
        "storage.multipartUploads.listParts",
    }
    assert role.inputs["roleId"].startswith("aistack_store_replace_")
    name = _bucket(graph, "store").outputs["name"]
    for grant, prefix in (("train", "runs"), ("evals", "evals")):
        write = graph.named(f"store-write-{grant}")
        assert write.inputs["role"] == role.outputs["name"]
        assert write.inputs["condition"]["expression"] == (
            f'resource.name.startsWith("projects/_/buckets/{name}/objects/{prefix}/")'
        )
        assert graph.named(f"store-write-{grant}-viewer").inputs["role"] == (
            "roles/storage.objectViewer"
        )
    # The replaced generation stays: the bucket is versioned.
    assert _bucket(graph, "store").inputs["versioning"] == {"enabled": True}


def test_a_model_writer_stays_write_once(run, governance):
    """A model version, once uploaded, is what serving loads under its name (S6, S7): the CI
    writer creates but never replaces (objectCreator), unless asked to."""
    graph = run(_writers(governance, "models"))
    assert graph.of_type(CUSTOM_ROLE) == []
    assert graph.named("store-write-train").inputs["role"] == "roles/storage.objectCreator"
    replacing = run(_writers(governance, "models", replace=True))
    assert len(replacing.of_type(CUSTOM_ROLE)) == 1

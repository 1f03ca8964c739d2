"""gcp.ContainerRegistry: immutable tags, real cleanup, scanning, CMEK first, images by digest."""

import pulumi_gcp
import pytest

from aistack import gcp
from aistack.engine.gcp_cloud import SimulatedGcpError, missing_api_dependencies, project_number
from aistack.errors import ConfigError
from tests._harness.shared_graphs import shared
from tests.gcp.conftest import GOVERNANCE, run_stack

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("gcp-container_registry")

REPOSITORY = "gcp:artifactregistry/repository:Repository"
MEMBER = "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember"
PROJECT = "team-ml-prod"
DIGEST = "sha256:" + "ab" * 32
TRAINER = "serviceAccount:trainer@team-ml-prod.iam.gserviceaccount.com"
CI = "serviceAccount:ci@team-ml-prod.iam.gserviceaccount.com"


def _args(governance, **overrides):
    return {"region": "europe-west4", "governance": governance, **overrides}


def _stack(governance, grants=False, seen=None, **overrides):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        registry = gcp.ContainerRegistry("images", _args(governance, **overrides), services=apis)
        if grants:
            registry.grant_pull(TRAINER)
            registry.grant_push(CI, name="ci")
        if seen is not None:
            registry.image("trainer", DIGEST).apply(lambda v: seen.setdefault("ref", v))
            registry.repository_url.apply(lambda v: seen.setdefault("url", v))

    return program


@pytest.fixture(scope="module")
def default_graph():
    """The default registry, built once for the module's tests that read it."""
    with shared(run_stack(_stack(dict(GOVERNANCE)))) as graph:
        yield graph


def test_the_repository_is_docker_with_immutable_tags_and_real_cleanup(default_graph):
    repository = default_graph.named("images-repository")
    assert repository.inputs["format"] == "DOCKER"
    assert repository.inputs["repositoryId"] == "images-13d1dc"
    assert repository.inputs["dockerConfig"] == {"immutableTags": True}
    assert repository.inputs["cleanupPolicyDryRun"] is False
    policies = {p["id"]: p for p in repository.inputs["cleanupPolicies"]}
    assert policies["keep-newest"] == {
        "id": "keep-newest",
        "action": "KEEP",
        "mostRecentVersions": {"keepCount": 20},
    }
    # Durations are protobuf Durations in seconds ("604800s" is 7 days).
    assert policies["delete-untagged"]["condition"] == {
        "tagState": "UNTAGGED",
        "olderThan": "604800s",
    }
    assert policies["delete-old-releases"]["condition"] == {
        "tagState": "TAGGED",
        "tagPrefixes": ["v", "release-"],
        "olderThan": f"{90 * 86400}s",
    }


def test_cleanup_settings_follow_the_arguments(run, governance):
    program = _stack(
        governance, keepRecentVersions=5, untaggedExpiryDays=2, releaseTagPrefixes=["rel-"]
    )
    policies = {p["id"]: p for p in run(program).named("images-repository").inputs[
        "cleanupPolicies"
    ]}  # fmt: skip
    assert policies["keep-newest"]["mostRecentVersions"] == {"keepCount": 5}
    assert policies["delete-untagged"]["condition"]["olderThan"] == "172800s"
    assert policies["delete-old-releases"]["condition"]["tagPrefixes"] == ["rel-"]


def test_pushed_images_are_scanned_and_the_scanning_api_is_enabled(default_graph):
    graph = default_graph
    repository = graph.named("images-repository")
    assert repository.inputs["vulnerabilityScanningConfig"] == {"enablementConfig": "INHERITED"}
    services = {s.inputs["service"] for s in graph.of_type("gcp:projects/service:Service")}
    assert "containerscanning.googleapis.com" in services
    assert repository.outputs["vulnerabilityScanningConfig"]["enablementState"] == (
        "SCANNING_ACTIVE"
    )


def test_scanning_can_be_turned_off_only_explicitly(run, governance):
    repository = run(_stack(governance, allowUnscanned=True)).named("images-repository")
    assert repository.inputs["vulnerabilityScanningConfig"] == {"enablementConfig": "DISABLED"}


def test_the_service_agent_holds_the_key_before_the_repository_uses_it(default_graph):
    graph = default_graph
    repository = graph.named("images-repository")
    grant = graph.named("images-key-agent")
    agent = graph.named("images-agent")
    assert agent.inputs["service"] == "artifactregistry.googleapis.com"
    # IAM docs, "Service agents": the Artifact Registry service agent.
    assert grant.inputs["member"] == (
        f"serviceAccount:service-{project_number(PROJECT)}"
        "@gcp-sa-artifactregistry.iam.gserviceaccount.com"
    )
    assert grant.inputs["role"] == "roles/cloudkms.cryptoKeyEncrypterDecrypter"
    assert grant.urn in repository.dependencies
    key = graph.named("images-key")
    assert repository.inputs["kmsKeyName"] == key.id
    assert grant.inputs["cryptoKeyId"] == key.id
    assert key.inputs["rotationPeriod"] == "7776000s"
    assert missing_api_dependencies(graph) == []


def test_the_repository_and_key_are_retained_with_deletion_policy_prevent(default_graph):
    graph = default_graph
    for name in ("images-repository", "images-key", "images-keyring", "images-key-agent"):
        assert graph.named(name).retain_on_delete is True, name
    assert graph.named("images-repository").inputs["deletionPolicy"] == "PREVENT"
    assert graph.named("images-key").inputs["deletionPolicy"] == "PREVENT"


def test_in_prod_the_repository_is_protected_and_destroy_can_be_allowed_elsewhere(run, governance):
    prod = run(_stack({**governance, "environment": "prod"})).named("images-repository")
    assert prod.protect is True
    disposable = run(_stack(governance, allowDestroyWithImages=True)).named("images-repository")
    assert disposable.inputs["deletionPolicy"] == "DELETE"
    assert disposable.retain_on_delete is not True


def test_an_existing_key_is_used_as_given(run, governance):
    key = "projects/team-ml-prod/locations/europe-west4/keyRings/shared/cryptoKeys/images"
    graph = run(_stack(governance, kmsKeyName=key))
    assert graph.named("images-repository").inputs["kmsKeyName"] == key
    assert not graph.of_type("gcp:kms/cryptoKey:CryptoKey")


def test_repository_url_and_images_by_digest(run, governance):
    seen = {}
    run(_stack(governance, seen=seen))
    # Artifact Registry Docker repositories: <location>-docker.pkg.dev/<project>/<repository>.
    assert seen["url"] == f"europe-west4-docker.pkg.dev/{PROJECT}/images-13d1dc"
    assert seen["ref"] == f"europe-west4-docker.pkg.dev/{PROJECT}/images-13d1dc/trainer@{DIGEST}"


@pytest.mark.parametrize(
    ("image", "digest", "field"),
    [
        ("trainer:v1", DIGEST, "images.image.name"),
        ("trainer@sha256:" + "a" * 64, DIGEST, "images.image.name"),
        ("Trainer", DIGEST, "images.image.name"),
        ("trainer", "latest", "images.image.digest"),
        ("trainer", "sha256:" + "AB" * 32, "images.image.digest"),
    ],
)
def test_image_refs_refuse_tags_and_bad_digests(run, governance, image, digest, field):
    caught = {}

    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        registry = gcp.ContainerRegistry("images", _args(governance), services=apis)
        try:
            registry.image(image, digest)
        except ConfigError as error:
            caught["error"] = error

    run(program)
    assert caught["error"].fields == [field]


def test_grants_are_scoped_to_the_repository(run, governance):
    graph = run(_stack(governance, grants=True))
    grants = {g.name: g for g in graph.of_type(MEMBER)}
    assert sorted(grants) == ["images-read-trainer-" + _hash(TRAINER), "images-write-ci"]
    read = grants["images-read-trainer-" + _hash(TRAINER)]
    assert read.inputs["role"] == "roles/artifactregistry.reader"
    assert read.inputs["member"] == TRAINER
    assert read.inputs["repository"] == "images-13d1dc"
    assert read.inputs["location"] == "europe-west4"
    assert grants["images-write-ci"].inputs["role"] == "roles/artifactregistry.writer"
    assert read.id.startswith(
        f"projects/{PROJECT}/locations/europe-west4/repositories/images-13d1dc "
    )


def _hash(member):
    import hashlib

    return hashlib.sha256(member.encode()).hexdigest()[:6]


def test_the_repository_id_is_in_gcp_format(default_graph):
    repository = default_graph.named("images-repository")
    assert repository.id == f"projects/{PROJECT}/locations/europe-west4/repositories/images-13d1dc"
    assert repository.outputs["name"] == "images-13d1dc"


def test_bad_input_is_one_config_error_naming_every_field(run, governance):
    with pytest.raises(ConfigError) as caught:
        run(
            _stack(
                governance,
                region="asia-east1",
                repositoryId="Images_1",
                releaseTagPrefixes=["-bad"],
                untaggedExpiryDays=0,
            )
        )
    assert sorted(caught.value.fields) == [
        "images.region",
        "images.releaseTagPrefixes",
        "images.repositoryId",
        "images.untaggedExpiryDays",
    ]


def test_a_key_in_another_region_and_missing_apis_are_refused(run, governance):
    def program():
        apis = gcp.ProjectServices(
            "apis", {"project": PROJECT, "services": ["artifactregistry.googleapis.com"]}
        )
        key = "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"
        gcp.ContainerRegistry("images", _args(governance, kmsKeyName=key), services=apis)

    with pytest.raises(ConfigError) as caught:
        run(program)
    assert caught.value.fields == ["images.services", "images.services", "images.kmsKeyName"]
    assert "containerscanning.googleapis.com" in str(caught.value)


def test_multi_region_locations_are_refused(run, governance):
    # 'europe', 'us' and 'asia' are Artifact Registry multi-regions: images in regions
    # nobody chose (C4).
    with pytest.raises(ConfigError) as caught:
        run(_stack(governance, region="europe"))
    assert caught.value.fields == ["images.region"]


def test_the_simulated_cloud_refuses_repository_ids_and_policy_counts_gcp_refuses(run):
    def bad_id():
        pulumi_gcp.artifactregistry.Repository("r", repository_id="1images", format="DOCKER")

    with pytest.raises(SimulatedGcpError, match="repository id"):
        run(bad_id)

    def too_many():
        pulumi_gcp.artifactregistry.Repository(
            "r",
            repository_id="images",
            format="DOCKER",
            cleanup_policies=[{"id": f"p{i}", "action": "DELETE"} for i in range(11)],
        )

    # Artifact Registry applies at most 10 cleanup policies per repository.
    with pytest.raises(SimulatedGcpError, match="at most 10"):
        run(too_many)


def test_the_old_verbs_warn_and_grant_exactly_what_the_new_ones_do(governance):
    # grant_read/grant_write/image_ref were GCP's own words for what both clouds' registries
    # now call grant_pull/grant_push/image; kept one release, they must build the same.
    def old_program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        registry = gcp.ContainerRegistry("images", _args(governance), services=apis)
        with pytest.warns(DeprecationWarning, match="grant_pull"):
            registry.grant_read(TRAINER)
        with pytest.warns(DeprecationWarning, match="grant_push"):
            registry.grant_write(CI, name="ci")
        with pytest.warns(DeprecationWarning, match="image"):
            registry.image_ref("trainer", DIGEST)

    old = run_stack(old_program)
    new = run_stack(_stack(governance, grants=True))
    assert {(r.type, r.name, str(r.inputs)) for r in old.resources} == {
        (r.type, r.name, str(r.inputs)) for r in new.resources
    }

"""ContainerRegistry: immutable, scanned, KMS-encrypted, lifecycle-managed, retained ECR."""

import json

import pulumi
import pulumi_aws as aws
import pytest

from aistack import aws as aistack_aws
from aistack import cost
from aistack.errors import ConfigError

DIGEST = "sha256:" + "0123456789abcdef" * 4
REPOSITORY = "aws:ecr/repository:Repository"
LIFECYCLE = "aws:ecr/lifecyclePolicy:LifecyclePolicy"


def _args(governance, **overrides):
    return {
        "repositories": ["trainer", "vllm-server"],
        "region": "us-east-1",
        "governance": governance,
        **overrides,
    }


def _registry(governance, **overrides):
    return lambda: aistack_aws.ContainerRegistry("images", _args(governance, **overrides))


def _errors_from(run, program):
    errors = []

    def guarded():
        try:
            program()
        except ConfigError as error:
            errors.append(error)

    graph = run(guarded)
    return graph, errors


def test_one_repository_per_image_named_as_the_image_under_the_stack(run, governance):
    graph = run(_registry(governance))
    repositories = {r.name: r for r in graph.of_type(REPOSITORY)}
    assert set(repositories) == {"images-trainer", "images-vllm-server"}
    # ECR names are unique per region: the default namespace is `<project>/<stack>/`, so
    # the account's other stacks (this program's `staging` too) never pick the same name.
    assert repositories["images-trainer"].inputs["name"] == "aistack/dev/trainer"
    assert repositories["images-trainer"].inputs["region"] == "us-east-1"
    assert graph.named("images").type == "aistack:index:AwsContainerRegistry"


def test_namespace_prefixes_every_repository_name(run, governance):
    graph = run(_registry(governance, namespace="ml-platform/"))
    names = {r.inputs["name"] for r in graph.of_type(REPOSITORY)}
    assert names == {"ml-platform/trainer", "ml-platform/vllm-server"}


def test_tags_are_immutable_and_every_push_is_scanned(run, governance):
    graph = run(_registry(governance))
    assert len(graph.of_type(REPOSITORY)) == 2
    for repository in graph.of_type(REPOSITORY):
        assert repository.inputs["imageTagMutability"] == "IMMUTABLE"
        assert repository.inputs["imageScanningConfiguration"] == {"scanOnPush": True}


def test_encrypted_with_one_rotating_customer_key(run, governance):
    graph = run(_registry(governance))
    keys = graph.of_type("aws:kms/key:Key")
    assert len(keys) == 1
    key = keys[0]
    assert key.inputs["enableKeyRotation"] is True
    for repository in graph.of_type(REPOSITORY):
        assert repository.inputs["encryptionConfigurations"] == [
            {"encryptionType": "KMS", "kmsKey": key.outputs["arn"]}
        ]


def test_a_given_key_is_used_instead_of_a_new_one(run, governance):
    arn = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    graph = run(_registry(governance, kms_key_arn=arn))
    assert graph.of_type("aws:kms/key:Key") == []
    for repository in graph.of_type(REPOSITORY):
        assert repository.inputs["encryptionConfigurations"][0]["kmsKey"] == arn


def test_a_key_from_another_region_is_refused(run, governance):
    arn = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    graph, errors = _errors_from(run, _registry(governance, kms_key_arn=arn))
    assert graph.resources == []
    assert errors and errors[0].fields == ["images.kmsKeyArn"]


def test_lifecycle_keeps_last_20_per_release_prefix_and_expires_untagged_after_7_days(
    run, governance
):
    graph = run(_registry(governance))
    policies = {p.name: p for p in graph.of_type(LIFECYCLE)}
    assert set(policies) == {"images-trainer-lifecycle", "images-vllm-server-lifecycle"}
    trainer = policies["images-trainer-lifecycle"]
    assert trainer.inputs["repository"] == graph.named("images-trainer").outputs["name"]
    rules = json.loads(trainer.inputs["policy"])["rules"]
    tagged = [r for r in rules if r["selection"]["tagStatus"] == "tagged"]
    # One rule per prefix: ECR ANDs the prefixes of a single tagPrefixList.
    assert [r["selection"]["tagPrefixList"] for r in tagged] == [["v"], ["release-"]]
    for r in tagged:
        assert r["selection"]["countType"] == "imageCountMoreThan"
        assert r["selection"]["countNumber"] == 20
        assert r["action"] == {"type": "expire"}
    (untagged,) = [r for r in rules if r["selection"]["tagStatus"] == "untagged"]
    assert untagged["selection"] == {
        "tagStatus": "untagged",
        "countType": "sinceImagePushed",
        "countUnit": "days",
        "countNumber": 7,
    }
    priorities = [r["rulePriority"] for r in rules]
    assert len(set(priorities)) == len(priorities) and min(priorities) >= 1
    assert not any(r["selection"]["tagStatus"] == "any" for r in rules)


def test_lifecycle_counts_and_prefixes_are_configurable(run, governance):
    graph = run(
        _registry(
            governance,
            keep_release_images=5,
            release_tag_prefixes=["prod-"],
            untagged_expiry_days=2,
        )
    )
    rules = json.loads(graph.named("images-trainer-lifecycle").inputs["policy"])["rules"]
    kept = [(r["selection"].get("tagPrefixList"), r["selection"]["countNumber"]) for r in rules]
    assert kept == [(["prod-"], 5), (None, 2)]


def test_repositories_and_key_are_retained_and_never_force_deleted(run, governance):
    graph = run(_registry(governance))
    for resource in [*graph.of_type(REPOSITORY), graph.named("images-key")]:
        assert resource.retain_on_delete is True, resource.name
        assert resource.protect is False  # dev: retained, not protected
    for repository in graph.of_type(REPOSITORY):
        assert repository.inputs["forceDelete"] is False
    prod = run(_registry({**governance, "environment": "prod"}))
    assert len(prod.of_type(REPOSITORY)) == 2
    assert all(r.protect for r in prod.of_type(REPOSITORY))


def test_destroy_with_images_is_an_explicit_opt_out(run, governance):
    graph = run(_registry(governance, allow_destroy_with_images=True))
    assert len(graph.of_type(REPOSITORY)) == 2
    for repository in graph.of_type(REPOSITORY):
        assert repository.inputs["forceDelete"] is True
        assert repository.retain_on_delete is False


def test_governance_tags_on_repositories_and_key(run, governance):
    graph = run(_registry(governance))
    for resource in [*graph.of_type(REPOSITORY), graph.named("images-key")]:
        tags = resource.inputs["tags"]
        assert tags["aistack:allowed-regions"] == "us-east-1 us-west-2"
        assert tags["aistack:workload"] == "images"
        assert tags["aistack:owner"] == "ml-platform"


def test_region_outside_allowed_regions_is_refused_before_anything_registers(run, governance):
    graph, errors = _errors_from(run, _registry(governance, region="eu-west-1"))
    assert graph.resources == []
    assert errors and errors[0].fields == ["images.region"]
    assert "C4" in str(errors[0])


def test_invalid_repository_names_and_every_other_problem_are_reported_at_once(governance):
    with pytest.raises(ConfigError) as caught:
        aistack_aws.ContainerRegistryArgs.parse(
            {
                "repositories": ["Trainer", "vllm server", "ok"],
                "governance": governance,
                "keepReleaseImages": 0,
                "releaseTagPrefixes": ["-bad"],
                "bogus": 1,
            },
            where="images",
        )
    fields = set(caught.value.fields)
    assert {
        "images.repositories",
        "images.region",
        "images.keepReleaseImages",
        "images.releaseTagPrefixes",
        "images.bogus",
    } <= fields
    assert "'Trainer'" in str(caught.value) and "'vllm server'" in str(caught.value)


def test_duplicate_repositories_are_refused(governance):
    with pytest.raises(ConfigError, match="listed twice"):
        aistack_aws.ContainerRegistryArgs.parse(_args(governance, repositories=["a1", "a1"]))


def test_image_returns_the_repository_url_pinned_by_digest(run, governance):
    def program():
        registry = aistack_aws.ContainerRegistry("images", _args(governance))
        pulumi.export("trainer", registry.image("trainer", DIGEST))
        pulumi.export("server", registry.image("vllm-server", DIGEST.removeprefix("sha256:")))

    graph = run(program)
    url = graph.named("images-trainer").outputs["repositoryUrl"]
    assert url == "123456789012.dkr.ecr.us-east-1.amazonaws.com/aistack/dev/trainer"
    assert graph.stack_outputs["trainer"] == f"{url}@{DIGEST}"
    server_url = graph.named("images-vllm-server").outputs["repositoryUrl"]
    assert graph.stack_outputs["server"] == f"{server_url}@{DIGEST}"


@pytest.mark.parametrize(
    ("repository", "digest", "field"),
    [
        ("trainer", "latest", "images.image.digest"),
        ("trainer", "sha256:abc", "images.image.digest"),
        ("notebook", DIGEST, "images.image.repository"),
    ],
)
def test_image_refuses_unknown_repositories_and_bad_digests(
    run, governance, repository, digest, field
):
    def program():
        registry = aistack_aws.ContainerRegistry("images", _args(governance))
        registry.image(repository, digest)

    _, errors = _errors_from(run, program)
    assert errors and errors[0].fields == [field]


def _statements(graph, name):
    return {s["Sid"]: s for s in json.loads(graph.named(name).inputs["policy"])["Statement"]}


def test_grant_pull_is_scoped_to_the_repositories_with_auth_token_on_star(run, governance):
    def program():
        registry = aistack_aws.ContainerRegistry("images", _args(governance))
        registry.grant_pull(aws.iam.Role("trainer", assume_role_policy="{}"))

    graph = run(program)
    grant = graph.named("images-pull-trainer")
    assert grant.inputs["role"] == graph.named("trainer").id
    statements = _statements(graph, "images-pull-trainer")
    assert statements["Auth"] == {
        "Sid": "Auth",
        "Effect": "Allow",
        "Action": ["ecr:GetAuthorizationToken"],
        "Resource": "*",
    }
    repos = statements["Repositories"]
    assert sorted(repos["Resource"]) == sorted(r.outputs["arn"] for r in graph.of_type(REPOSITORY))
    assert set(repos["Action"]) == {
        "ecr:BatchCheckLayerAvailability",
        "ecr:BatchGetImage",
        "ecr:GetDownloadUrlForLayer",
    }
    for statement in statements.values():
        assert not any("*" in action for action in statement["Action"])


def test_grant_push_adds_uploads_but_never_deletes_and_can_name_one_repository(run, governance):
    def program():
        registry = aistack_aws.ContainerRegistry("images", _args(governance))
        registry.grant_push(aws.iam.Role("ci", assume_role_policy="{}"), repositories=["trainer"])

    graph = run(program)
    repos = _statements(graph, "images-push-ci")["Repositories"]
    assert repos["Resource"] == [graph.named("images-trainer").outputs["arn"]]
    assert {"ecr:PutImage", "ecr:InitiateLayerUpload", "ecr:CompleteLayerUpload"} <= set(
        repos["Action"]
    )
    assert not any("Delete" in action for action in repos["Action"])


def test_grant_for_an_unknown_repository_is_refused(run, governance):
    def program():
        registry = aistack_aws.ContainerRegistry("images", _args(governance))
        registry.grant_pull(aws.iam.Role("x", assume_role_policy="{}"), repositories=["nope"])

    _, errors = _errors_from(run, program)
    assert errors and errors[0].fields == ["images.grant_pull.repositories"]


def test_cost_with_lifecycle_is_a_fifth_of_keeping_every_image(run, governance):
    graph = run(_registry(governance))
    items = [i for i in cost.estimate(graph).items if i.resource_type == REPOSITORY]
    assert len(items) == 2
    for item in items:
        assert item.monthly_usd == pytest.approx(2.0)  # 20 GB x $0.10
        assert item.naive_monthly_usd == pytest.approx(10.0)
        assert "20 GB" in item.basis and "5x" in item.basis


def test_cost_of_a_repository_without_lifecycle_policy_is_the_naive_one(run):
    graph = run(lambda: aws.ecr.Repository("raw"))
    (item,) = [i for i in cost.estimate(graph).items if i.resource_type == REPOSITORY]
    assert item.monthly_usd == item.naive_monthly_usd == pytest.approx(10.0)
    assert "no lifecycle policy" in item.basis

"""GCP E1 rules: Artifact Registry immutable tags, real cleanup, vulnerability scanning."""

import pulumi_gcp as gcp
import pytest

from aistack import gcp as aistack_gcp
from tests.policy.rules.shared_verdicts import findings_of

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
CLEANUP = [
    {"id": "keep", "action": "KEEP", "most_recent_versions": {"keep_count": 5}},
    {"id": "untagged", "action": "DELETE", "condition": {"tag_state": "UNTAGGED"}},
]


def _registry():
    apis = aistack_gcp.ProjectServices("apis", {"project": "team-ml-prod"})
    aistack_gcp.ContainerRegistry(
        "images", {"region": "europe-west4", "governance": GOVERNANCE}, services=apis
    )


def _bare(scanning_api=True, **overrides):
    def program():
        if scanning_api:
            gcp.projects.Service("scan", service="containerscanning.googleapis.com")
        gcp.artifactregistry.Repository(
            "raw",
            **{
                "repository_id": "raw",
                "format": "DOCKER",
                "location": "europe-west4",
                "docker_config": {"immutable_tags": True},
                "cleanup_policies": CLEANUP,
                "cleanup_policy_dry_run": False,
                **overrides,
            },
        )

    return program


@pytest.mark.parametrize("rule_id", ["AIS-E1-03", "AIS-E1-04", "AIS-E1-05"])
def test_e1_the_container_registry_passes(verdicts, rule_id):
    assert verdicts(rule_id, _registry) == {"images-repository": "compliant"}


@pytest.mark.parametrize("rule_id", ["AIS-E1-03", "AIS-E1-04", "AIS-E1-05"])
def test_e1_a_hardened_hand_written_repository_passes(verdicts, rule_id):
    assert verdicts(rule_id, _bare()) == {"raw": "compliant"}


@pytest.mark.parametrize("docker_config", [None, {"immutable_tags": False}])
def test_e1_mutable_tags_fail(verdicts, docker_config):
    program = _bare(docker_config=docker_config)
    assert verdicts("AIS-E1-03", program) == {"raw": "non-compliant"}


@pytest.mark.parametrize(
    "overrides",
    [
        {"cleanup_policy_dry_run": True},
        # Left unset, the API's default is a dry run: Artifact Registry only logs.
        {"cleanup_policy_dry_run": None},
        {"cleanup_policies": None},
        # Keep policies alone delete nothing.
        {"cleanup_policies": CLEANUP[:1]},
    ],
)
def test_e1_cleanup_in_dry_run_or_without_a_delete_policy_fails(verdicts, overrides):
    assert verdicts("AIS-E1-04", _bare(**overrides)) == {"raw": "non-compliant"}


def test_e1_scanning_disabled_fails(verdicts):
    program = _bare(vulnerability_scanning_config={"enablement_config": "DISABLED"})
    assert verdicts("AIS-E1-05", program) == {"raw": "non-compliant"}


def test_e1_scanning_inherited_without_the_scanning_api_fails(verdicts):
    assert verdicts("AIS-E1-05", _bare(scanning_api=False)) == {"raw": "non-compliant"}


def test_e1_remote_repositories_are_not_judged(verdicts):
    program = _bare(mode="REMOTE_REPOSITORY", docker_config=None, cleanup_policies=None)
    assert verdicts("AIS-E1-03", program) == {"": "not-applicable"}


def test_the_crossguard_pack_judges_registries_like_aistack_check():
    from aistack import engine, policy
    from aistack.policy.crossguard import graph_from_policy_resources

    from ...crossguard_resources import policy_resources

    def program():
        _registry()
        _bare(
            scanning_api=False,
            docker_config=None,
            cleanup_policy_dry_run=True,
            vulnerability_scanning_config={"enablement_config": "DISABLED"},
        )()

    graph = engine.run(program, config={"gcp:project": "team-ml-prod"})
    rebuilt = graph_from_policy_resources(policy_resources(graph))
    for rule in policy.all_rules():
        if rule.id in ("AIS-E1-03", "AIS-E1-04", "AIS-E1-05"):
            ours = {(f.resource_name, f.status) for f in findings_of(rule.id, graph)}
            assert ours == {(f.resource_name, f.status) for f in rule.evaluate(rebuilt)}
            assert ours == {("images-repository", "compliant"), ("raw", "non-compliant")}

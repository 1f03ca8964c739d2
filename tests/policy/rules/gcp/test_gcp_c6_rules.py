"""GCP C6 rules: no service account keys, GitHub providers pinned, no basic roles."""

import pulumi_gcp as gcp
import pytest

from aistack import gcp as aistack_gcp
from tests.policy.rules.shared_verdicts import findings_of

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
ISSUER = "https://token.actions.githubusercontent.com"
SA = "serviceAccount:trainer@team-ml-prod.iam.gserviceaccount.com"


def _identity():
    apis = aistack_gcp.ProjectServices("apis", {"project": "team-ml-prod"})
    aistack_gcp.WorkloadIdentity(
        "ml",
        {
            "governance": GOVERNANCE,
            "accountPrefix": "team-ml",
            "workloads": [{"name": "training", "projectRoles": ["roles/logging.logWriter"]}],
            "github": {"repository": "acme/ml-platform", "branches": ["main"]},
        },
        services=apis,
    )


def test_c6_service_accounts_without_keys_pass(verdicts):
    assert verdicts("AIS-C6-06", _identity) == {"ml-training": "compliant", "ml-ci": "compliant"}


def test_c6_a_service_account_key_fails(verdicts):
    def program():
        account = gcp.serviceaccount.Account("bot", account_id="deploy-bot")
        gcp.serviceaccount.Key("bot-key", service_account_id=account.name)

    assert verdicts("AIS-C6-06", program) == {"bot": "compliant", "bot-key": "non-compliant"}


def test_c6_an_hmac_key_or_a_key_file_in_an_object_fails(verdicts):
    def program():
        gcp.storage.HmacKey("hmac", service_account_email="bot@p.iam.gserviceaccount.com")
        gcp.storage.BucketObject(
            "creds",
            bucket="team-ml-configs",
            name="deploy.json",
            content='{"type": "service_account", "private_key_id": "abc"}',
        )

    assert verdicts("AIS-C6-06", program) == {"hmac": "non-compliant", "creds": "non-compliant"}


def test_c6_the_components_github_provider_is_pinned(verdicts):
    assert verdicts("AIS-C6-07", _identity) == {"ml-github-provider": "compliant"}


def _provider(condition):
    def program():
        pool = gcp.iam.WorkloadIdentityPool("pool", workload_identity_pool_id="ci-pool-1")
        gcp.iam.WorkloadIdentityPoolProvider(
            "gh",
            workload_identity_pool_id=pool.workload_identity_pool_id,
            workload_identity_pool_provider_id="github-1",
            attribute_mapping={"google.subject": "assertion.sub"},
            attribute_condition=condition,
            oidc={"issuer_uri": ISSUER},
        )

    return program


@pytest.mark.parametrize(
    "condition",
    [
        # Owner only: every repository of the organisation can deploy.
        "assertion.repository_owner == 'acme'",
        # A disjunction pins nothing it does not share.
        "assertion.repository == 'acme/ml' || assertion.repository == 'evil/x'",
        # A prefix match is not a pin.
        "assertion.repository.startsWith('acme/')",
        "assertion.sub == 'repo:acme/*:ref:refs/heads/main'",
    ],
)
def test_c6_a_github_provider_that_admits_more_than_one_repository_fails(verdicts, condition):
    assert verdicts("AIS-C6-07", _provider(condition)) == {"gh": "non-compliant"}


def test_c6_a_hand_written_condition_on_owner_and_repository_passes(verdicts):
    condition = "assertion.repository_owner_id == '42' && assertion.repository == 'acme/ml'"
    assert verdicts("AIS-C6-07", _provider(condition)) == {"gh": "compliant"}


def test_c6_the_api_refuses_a_github_provider_without_a_condition():
    # GCP answers 400 "The attribute condition must reference one of the provider's claims"
    # (terraform-google-github-actions-runners#261): the simulated cloud fails the run too.
    from aistack import engine

    with pytest.raises(Exception, match="attribute condition must reference"):
        engine.run(_provider(None), config={"gcp:project": "team-ml-prod"})


def test_c6_workload_grants_of_predefined_roles_pass(verdicts):
    assert verdicts("AIS-C6-08", _identity) == {"ml-training-logging-logwriter": "compliant"}


@pytest.mark.parametrize("role", ["roles/owner", "roles/editor", "roles/viewer"])
def test_c6_a_basic_role_for_a_service_account_fails(verdicts, role):
    def program():
        gcp.projects.IAMMember("grant", project="team-ml-prod", role=role, member=SA)
        # People are out of scope of this rule.
        gcp.projects.IAMMember(
            "human", project="team-ml-prod", role=role, member="user:alice@example.com"
        )

    assert verdicts("AIS-C6-08", program) == {"grant": "non-compliant"}


def test_the_crossguard_pack_judges_identities_like_aistack_check():
    from aistack import engine, policy
    from aistack.policy.crossguard import graph_from_policy_resources

    from ...crossguard_resources import policy_resources

    def program():
        _identity()
        _provider("assertion.repository_owner == 'acme'")()
        gcp.projects.IAMMember("grant", project="team-ml-prod", role="roles/editor", member=SA)

    graph = engine.run(program, config={"gcp:project": "team-ml-prod"})
    rebuilt = graph_from_policy_resources(policy_resources(graph))
    expected = {
        "AIS-C6-06": {("ml-training", "compliant"), ("ml-ci", "compliant")},
        "AIS-C6-07": {("ml-github-provider", "compliant"), ("gh", "non-compliant")},
        "AIS-C6-08": {("ml-training-logging-logwriter", "compliant"), ("grant", "non-compliant")},
    }
    for rule in policy.all_rules():
        if rule.id in expected:
            ours = {(f.resource_name, f.status) for f in findings_of(rule.id, graph)}
            assert ours == {(f.resource_name, f.status) for f in rule.evaluate(rebuilt)}, rule.id
            assert ours == expected[rule.id], rule.id


def _gke_identity():
    apis = aistack_gcp.ProjectServices("apis", {"project": "team-ml-prod"})
    aistack_gcp.WorkloadIdentity(
        "ml",
        {
            "governance": GOVERNANCE,
            "accountPrefix": "team-ml",
            "workloadPoolExists": True,
            "workloads": [
                {
                    "name": "training",
                    "kubernetesServiceAccounts": [{"namespace": "a", "serviceAccount": "t"}],
                }
            ],
            "github": {"repository": "acme/ml-platform", "branches": ["main"]},
        },
        services=apis,
    )


def test_c6_the_components_federated_bindings_name_one_repository_or_ksa(verdicts):
    assert verdicts("AIS-C6-09", _gke_identity) == {
        "ml-ci-github": "compliant",
        "ml-training-ksa-a-t": "compliant",
    }


POOL = "principalSet://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/ci-pool"


@pytest.mark.parametrize(
    "member",
    [
        f"{POOL}/*",
        f"{POOL}/attribute.repository/acme/*",
        "serviceAccount:team-ml-prod.svc.id.goog[team-a/*]",
    ],
)
def test_c6_a_binding_to_a_whole_pool_or_a_wildcard_fails(verdicts, member):
    def program():
        account = gcp.serviceaccount.Account("deploy", account_id="deploy-bot")
        gcp.serviceaccount.IAMMember(
            "trust",
            service_account_id=account.name,
            role="roles/iam.workloadIdentityUser",
            member=member,
        )

    assert verdicts("AIS-C6-09", program) == {"trust": "non-compliant"}

"""gcp.WorkloadIdentity: a service account per workload, GKE and GitHub federation, no keys."""

import re

import celpy
import pulumi
import pulumi_gcp
import pytest

from aistack import gcp
from aistack.engine.gcp_cloud import SimulatedGcpError, missing_api_dependencies, project_number
from aistack.errors import ConfigError
from aistack.gcp.workload_identity import account_id_for, github_attribute_condition

ACCOUNT = "gcp:serviceaccount/account:Account"
SA_MEMBER = "gcp:serviceaccount/iAMMember:IAMMember"
PROJECT_MEMBER = "gcp:projects/iAMMember:IAMMember"
POOL = "gcp:iam/workloadIdentityPool:WorkloadIdentityPool"
PROVIDER = "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider"
PROJECT = "team-ml-prod"
NUMBER = project_number(PROJECT)
GITHUB = {
    "repository": "acme/ml-platform",
    "repositoryOwnerId": "4242",
    "branches": ["main"],
    "environments": ["prod"],
}
#: IAM API serviceAccounts.create: 6-30 characters, [a-z]([-a-z0-9]*[a-z0-9]).
GCP_ACCOUNT_ID = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])")


def _args(governance, **overrides):
    return {"governance": governance, "accountPrefix": "team-ml", **overrides}


def _stack(governance, name="ml", **overrides):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        gcp.WorkloadIdentity(name, _args(governance, **overrides), services=apis)

    return program


def _principal_claims(**claims):
    """A GitHub Actions OIDC token's claims (GitHub docs, "About security hardening with
    OpenID Connect": sub, repository, repository_owner, repository_owner_id, ref)."""
    token = {
        "sub": "repo:acme/ml-platform:ref:refs/heads/main",
        "repository": "acme/ml-platform",
        "repository_owner": "acme",
        "repository_owner_id": "4242",
        "ref": "refs/heads/main",
        "actor": "octocat",
    }
    token.update(claims)
    return token


def test_each_default_workload_gets_its_own_service_account_and_no_key(run, governance):
    graph = run(_stack(governance))
    accounts = {a.name: a for a in graph.of_type(ACCOUNT)}
    assert sorted(accounts) == ["ml-inference", "ml-notebook", "ml-training"]
    training = accounts["ml-training"]
    assert training.inputs["accountId"] == "team-ml-training-13d1dc"
    assert training.outputs["email"] == f"team-ml-training-13d1dc@{PROJECT}.iam.gserviceaccount.com"
    assert training.outputs["name"] == (
        f"projects/{PROJECT}/serviceAccounts/team-ml-training-13d1dc@{PROJECT}.iam.gserviceaccount.com"
    )
    assert re.fullmatch(r"\d{21}", training.outputs["uniqueId"])
    assert training.inputs["displayName"] == "aistack training"
    # No key, and no role until a component grants one.
    assert not [r for r in graph.resources if r.type == "gcp:serviceaccount/key:Key"]
    assert not graph.of_type(PROJECT_MEMBER)
    assert missing_api_dependencies(graph) == []


def test_long_account_ids_are_shortened_deterministically_within_30_characters():
    long_id = account_id_for("research-platform-team", "distributed-training")
    assert len(long_id) <= 30 and GCP_ACCOUNT_ID.fullmatch(long_id)
    assert long_id == account_id_for("research-platform-team", "distributed-training")
    assert long_id != account_id_for("research-platform-team", "distributed-trainer")
    assert account_id_for("team-ml", "training").startswith("team-ml-training-")


def test_the_component_name_is_the_default_prefix_and_long_ids_are_shortened(run, governance):
    program = _stack(
        governance, name="research-platform", accountPrefix=None,
        workloads=[{"name": "distributed-training-workers"}],
    )  # fmt: skip
    account = run(program).named("research-platform-distributed-training-workers")
    account_id = account.inputs["accountId"]
    assert (
        len(account_id) <= 30
        and account_id.startswith("research-platform-")
        and account_id.endswith("-13d1dc")
    )


def test_a_short_prefix_still_makes_a_valid_id_as_the_stack_digest_ends_it(run, governance):
    graph = run(_stack(governance, accountPrefix="ab", workloads=[{"name": "ci"}]))
    (account,) = graph.of_type(ACCOUNT)
    assert account.inputs["accountId"] == "ab-ci-13d1dc"


def test_explicit_account_ids_gcp_would_refuse_are_refused(run, governance):
    with pytest.raises(ConfigError) as caught:
        run(_stack(governance, workloads=[{"name": "web", "accountId": "Web_Server"}]))
    assert caught.value.fields == ["ml.workloads.0.accountId"]


def test_bad_input_is_one_config_error_naming_every_field(run, governance):
    registered = {}

    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        try:
            gcp.WorkloadIdentity(
                "ml",
                _args(
                    governance,
                    workloads=[{"name": "training"}, {"name": "training"}],
                    github={"repository": "acme/ml-platform", "branches": []},
                    kubernetesMode="pods",
                ),
                services=apis,
            )
        except ConfigError as error:
            registered["error"] = error

    graph = run(program)
    error = registered["error"]
    assert sorted(error.fields) == ["ml.github.branches", "ml.kubernetesMode", "ml.workloads"]
    assert "'training' is listed twice" in str(error)
    # Nothing of the component was registered.
    assert not [r for r in graph.resources if r.type.startswith("gcp:") and "ml" in r.name]


BASIC = {"workloads": [{"name": "t1", "projectRoles": ["roles/editor"]}]}


def _github(repository="acme/ml", branches=("main",)):
    return {"github": {"repository": repository, "branches": list(branches)}}


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        (BASIC, "ml.workloads.0.projectRoles", "basic roles"),
        (_github(repository="acme/*"), "ml.github.repository", "wildcard"),
        (_github(branches=["feat-*"]), "ml.github.branches", "wildcard"),
        (_github(branches=["refs/heads/main"]), "ml.github.branches", "is a ref"),
    ],
)
def test_unsafe_roles_and_wildcard_trust_are_refused(run, governance, overrides, field, message):
    with pytest.raises(ConfigError, match=message) as caught:
        run(_stack(governance, **overrides))
    assert caught.value.fields == [field]


def test_missing_apis_are_named(run, governance):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT, "services": ["iam.googleapis.com"]})
        gcp.WorkloadIdentity("ml", _args(governance), services=apis)

    with pytest.raises(ConfigError, match="sts.googleapis.com"):
        run(program)


def test_gke_service_accounts_impersonate_the_workload_account(run, governance):
    workloads = [
        {
            "name": "training",
            "kubernetesServiceAccounts": [{"namespace": "team-a", "serviceAccount": "trainer"}],
        }
    ]

    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        cluster = pulumi_gcp.container.Cluster(
            "gke",
            location="europe-west4",
            initial_node_count=1,
            workload_identity_config={"workload_pool": f"{PROJECT}.svc.id.goog"},
            opts=pulumi.ResourceOptions(depends_on=apis.enabling("container.googleapis.com")),
        )
        gcp.WorkloadIdentity(
            "ml", _args(governance, workloads=workloads), services=apis, cluster=cluster
        )

    graph = run(program)
    binding = graph.named("ml-training-ksa-team-a-trainer")
    # The pool <project>.svc.id.goog exists once the cluster does: the binding waits.
    assert graph.named("gke").urn in binding.dependencies
    assert binding.type == SA_MEMBER
    assert binding.inputs["role"] == "roles/iam.workloadIdentityUser"
    # GKE docs: the Kubernetes service account's identity in the project's workload pool.
    assert binding.inputs["member"] == f"serviceAccount:{PROJECT}.svc.id.goog[team-a/trainer]"
    assert binding.inputs["serviceAccountId"] == graph.named("ml-training").outputs["name"]


def test_principal_mode_grants_roles_to_the_kubernetes_principal_directly(run, governance):
    workloads = [
        {
            "name": "training",
            "kubernetesServiceAccounts": [{"namespace": "team-a", "serviceAccount": "trainer"}],
            "projectRoles": ["roles/logging.logWriter"],
        }
    ]
    program = _stack(
        governance, workloads=workloads, kubernetesMode="principal", workloadPoolExists=True
    )
    graph = run(program)
    assert not graph.of_type(SA_MEMBER)
    members = {g.inputs["member"] for g in graph.of_type(PROJECT_MEMBER)}
    # Project NUMBER in the path, project ID in the pool name (research §D1 13).
    assert members == {
        f"serviceAccount:team-ml-training-13d1dc@{PROJECT}.iam.gserviceaccount.com",
        f"principal://iam.googleapis.com/projects/{NUMBER}/locations/global/"
        f"workloadIdentityPools/{PROJECT}.svc.id.goog/subject/ns/team-a/sa/trainer",
    }


def test_kubernetes_bindings_need_the_cluster_that_creates_the_workload_pool(run, governance):
    # IAM refuses a binding naming <project>.svc.id.goog until a GKE cluster enables
    # Workload Identity: "Error 400: Identity Pool does not exist (<project>.svc.id.goog)"
    # (terraform-google-kubernetes-engine#916).
    workloads = [
        {
            "name": "training",
            "kubernetesServiceAccounts": [{"namespace": "a", "serviceAccount": "t"}],
        }
    ]
    with pytest.raises(ConfigError, match="exists only once a GKE cluster") as caught:
        run(_stack(governance, workloads=workloads))
    assert caught.value.fields == ["ml.workloads.training.kubernetesServiceAccounts"]


def test_one_kubernetes_service_account_cannot_act_as_two_workloads(run, governance):
    ksa = [{"namespace": "team-a", "serviceAccount": "shared"}]
    workloads = [
        {"name": "training", "kubernetesServiceAccounts": ksa},
        {"name": "inference", "kubernetesServiceAccounts": ksa},
    ]
    with pytest.raises(ConfigError, match="team-a/shared is also bound"):
        run(_stack(governance, workloads=workloads))


def test_github_provider_pins_owner_repository_and_refs_and_binds_the_ci_account(run, governance):
    graph = run(_stack(governance, github=GITHUB))
    pool = graph.named("ml-github-pool")
    provider = graph.named("ml-github-provider")
    assert pool.inputs["workloadIdentityPoolId"] == "team-ml-github-13d1dc-1"
    assert pool.outputs["name"] == (
        f"projects/{NUMBER}/locations/global/workloadIdentityPools/team-ml-github-13d1dc-1"
    )
    # The pool's short id, never its path (pulumi-gcp#1080).
    assert provider.inputs["workloadIdentityPoolId"] == "team-ml-github-13d1dc-1"
    assert provider.inputs["oidc"]["issuerUri"] == "https://token.actions.githubusercontent.com"
    mapping = provider.inputs["attributeMapping"]
    assert mapping["google.subject"] == "assertion.sub"
    for claim in ("repository", "repository_owner", "repository_owner_id", "ref"):
        assert mapping[f"attribute.{claim}"] == f"assertion.{claim}"
    assert provider.outputs["name"] == (
        f"projects/{NUMBER}/locations/global/workloadIdentityPools/team-ml-github-13d1dc-1"
        "/providers/github-1"
    )
    binding = graph.named("ml-ci-github")
    assert binding.inputs["role"] == "roles/iam.workloadIdentityUser"
    assert binding.inputs["member"] == (
        f"principalSet://iam.googleapis.com/projects/{NUMBER}/locations/global/"
        "workloadIdentityPools/team-ml-github-13d1dc-1/attribute.repository/acme/ml-platform"
    )
    assert binding.inputs["serviceAccountId"] == graph.named("ml-ci").outputs["name"]
    assert provider.urn in binding.dependencies
    assert missing_api_dependencies(graph) == []


@pytest.mark.parametrize(
    ("claims", "admitted"),
    [
        ({}, True),
        ({"sub": "repo:acme/ml-platform:environment:prod"}, True),
        # Another branch of the same repository, e.g. an unreviewed feature branch.
        (
            {"sub": "repo:acme/ml-platform:ref:refs/heads/feature", "ref": "refs/heads/feature"},
            False,
        ),
        # Another repository of the same owner.
        ({"sub": "repo:acme/other:ref:refs/heads/main", "repository": "acme/other"}, False),
        # Someone re-registered the owner name: the numeric id differs.
        ({"repository_owner_id": "9999"}, False),
        ({"sub": "repo:acme/ml-platform:pull_request"}, False),
    ],
)
def test_the_attribute_condition_admits_only_the_chosen_refs(claims, admitted):
    # Evaluated with a real CEL implementation, as the Security Token Service evaluates it.
    github = gcp.WorkloadIdentityArgs.model_validate(
        {"governance": {"owner": "o", "costCenter": "c", "allowedRegions": ["us-central1"]},
         "github": GITHUB}
    ).github  # fmt: skip
    environment = celpy.Environment()
    program = environment.program(environment.compile(github_attribute_condition(github)))
    result = program.evaluate({"assertion": celpy.json_to_cel(_principal_claims(**claims))})
    assert bool(result) is admitted


def test_a_new_id_suffix_moves_the_pool_and_provider_past_soft_deleted_ids(run, governance):
    # Pools and providers stay soft-deleted 30 days with their ids reserved: destroy then up
    # with the same ids fails with 409 (terraform-provider-google#14191, pulumi-gcp#1149).
    graph = run(_stack(governance, github={**GITHUB, "idSuffix": "2"}))
    assert (
        graph.named("ml-github-pool").inputs["workloadIdentityPoolId"] == "team-ml-github-13d1dc-2"
    )
    assert graph.named("ml-github-provider").inputs["workloadIdentityPoolProviderId"] == (
        "github-2"
    )


def test_long_pool_ids_are_shortened_within_32_characters(run, governance):
    graph = run(_stack(governance, github={**GITHUB, "poolId": "research-platform-github-ci-pool"}))
    pool_id = graph.named("ml-github-pool").inputs["workloadIdentityPoolId"]
    assert len(pool_id) <= 32 and pool_id.endswith("-1")


def test_in_prod_the_pool_and_provider_are_protected(run, governance):
    graph = run(_stack({**governance, "environment": "prod"}, github=GITHUB))
    assert graph.named("ml-github-pool").protect is True
    assert graph.named("ml-github-provider").protect is True


def test_a_reserved_pool_id_is_refused(run, governance):
    with pytest.raises(ConfigError, match="reserved 'gcp-'"):
        run(_stack(governance, github={**GITHUB, "poolId": "gcp-ci"}))


def test_the_ci_workload_cannot_share_a_workload_account(run, governance):
    with pytest.raises(ConfigError, match="CI would share its account"):
        run(_stack(governance, github={**GITHUB, "workload": "training"}))


def test_outputs_are_the_emails_and_the_provider_name_for_the_auth_action(run, governance):
    seen = {}

    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        identity = gcp.WorkloadIdentity("ml", _args(governance, github=GITHUB), services=apis)
        identity.github_provider_name.apply(lambda v: seen.setdefault("provider", v))
        identity.email("ci").apply(lambda v: seen.setdefault("ci", v))
        identity.member("training").apply(lambda v: seen.setdefault("training", v))
        annotations = identity.kubernetes_annotations("training")
        annotations["iam.gke.io/gcp-service-account"].apply(lambda v: seen.setdefault("ksa", v))
        with pytest.raises(ConfigError, match="no workload 'serving'"):
            identity.email("serving")

    run(program)
    assert seen["provider"].startswith(f"projects/{NUMBER}/locations/global/")
    assert seen["ci"] == f"team-ml-ci-13d1dc@{PROJECT}.iam.gserviceaccount.com"
    assert (
        seen["training"]
        == f"serviceAccount:team-ml-training-13d1dc@{PROJECT}.iam.gserviceaccount.com"
    )
    assert seen["ksa"] == f"team-ml-training-13d1dc@{PROJECT}.iam.gserviceaccount.com"


def test_the_simulated_cloud_refuses_account_ids_gcp_refuses(run):
    with pytest.raises(SimulatedGcpError, match="6-30 characters"):
        run(lambda: pulumi_gcp.serviceaccount.Account("short", account_id="ci"))


def test_the_simulated_cloud_autonames_a_missing_account_id_as_pulumi_gcp_does(run):
    # pulumi-gcp's AccountArgs leaves account_id optional: the provider autonames it.
    graph = run(lambda: pulumi_gcp.serviceaccount.Account("deploy-bot"))
    account = graph.named("deploy-bot")
    assert re.fullmatch(r"deploy-bot-[0-9a-f]{7}", account.outputs["accountId"])
    assert account.outputs["email"].startswith(account.outputs["accountId"] + "@")


def test_the_simulated_cloud_refuses_a_principal_naming_the_project_by_id(run):
    # Principal identifiers take the project NUMBER (research §D1 13; IAM docs, "Principal
    # identifiers"); the project ID there is an invalid principal.
    member = (
        f"principal://iam.googleapis.com/projects/{PROJECT}/locations/global/"
        f"workloadIdentityPools/{PROJECT}.svc.id.goog/subject/ns/a/sa/t"
    )
    with pytest.raises(SimulatedGcpError, match="project number"):
        run(
            lambda: pulumi_gcp.projects.IAMMember(
                "grant", project=PROJECT, role="roles/logging.logWriter", member=member
            )
        )

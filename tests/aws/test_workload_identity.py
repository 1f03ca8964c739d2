"""WorkloadIdentity: one role per workload, service-only trust, no keys, narrow policies, OIDC."""

import json

import pulumi
import pytest

from aistack import aws as aistack_aws
from aistack.aws.workload_identity import (
    MANAGED_POLICIES,
    eks_pod_identity_trust,
    irsa_trust,
)
from aistack.errors import ConfigError
from aistack.policy.rules.aws.c6_01_no_stored_keys import LONG_LIVED
from aistack.policy.rules.aws.c6_03_no_broad_managed_policies import broad_managed_policy
from aistack.testing import assert_compliant

ROLE = "aws:iam/role:Role"
PROFILE = "aws:iam/instanceProfile:InstanceProfile"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
OIDC = "aws:iam/openIdConnectProvider:OpenIdConnectProvider"
ACCOUNT = "123456789012"
GITHUB = {"repository": "acme/ml-platform", "branches": ["main"], "environments": ["prod"]}
ISSUER = "oidc.eks.us-east-1.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE"
PROVIDER_ARN = f"arn:aws:iam::{ACCOUNT}:oidc-provider/{ISSUER}"


def _identity(governance, **overrides):
    return lambda: aistack_aws.WorkloadIdentity("ids", {"governance": governance, **overrides})


def _trust(role):
    return json.loads(role.inputs["assumeRolePolicy"])


def _principals(role):
    return {
        service
        for statement in _trust(role)["Statement"]
        for service in [statement["Principal"].get("Service")]
        if service
    }


def _refused(run, program):
    errors = []

    def guarded():
        try:
            program()
        except ConfigError as error:
            errors.append(error)

    graph = run(guarded)
    assert errors, "expected a ConfigError"
    assert graph.resources == [], "nothing may register before validation passes"
    return errors[0]


# ---- roles and trust -------------------------------------------------------------------------


def test_one_role_per_default_workload_trusted_by_exactly_its_services(run, governance):
    graph = run(_identity(governance))
    roles = {role.name: role for role in graph.of_type(ROLE)}
    assert set(roles) == {"ids-training", "ids-training-job", "ids-inference", "ids-notebook"}
    # The Batch job role is not the instance role: only ecs-tasks may assume it.
    assert _principals(roles["ids-training"]) == {"ec2.amazonaws.com"}
    assert _principals(roles["ids-training-job"]) == {"ecs-tasks.amazonaws.com"}
    assert _principals(roles["ids-inference"]) == {"ec2.amazonaws.com"}
    assert _principals(roles["ids-notebook"]) == {"sagemaker.amazonaws.com"}
    for role in roles.values():
        for statement in _trust(role)["Statement"]:
            assert statement["Effect"] == "Allow"
            assert statement["Action"] == "sts:AssumeRole"
            assert set(statement["Principal"]) == {"Service"}
        assert graph.parent_of(role).type == "aistack:index:AwsWorkloadIdentity"


def test_source_account_pins_ecs_tasks_and_sagemaker_but_not_ec2(run, governance):
    graph = run(_identity(governance))
    by_service = {
        statement["Principal"]["Service"]: statement
        for role in graph.of_type(ROLE)
        for statement in _trust(role)["Statement"]
    }
    pinned = {"StringEquals": {"aws:SourceAccount": ACCOUNT}}
    assert by_service["ecs-tasks.amazonaws.com"]["Condition"] == pinned
    assert by_service["sagemaker.amazonaws.com"]["Condition"] == pinned
    # EC2 does not send aws:SourceAccount for instance profiles; the condition would lock out.
    assert "Condition" not in by_service["ec2.amazonaws.com"]


def test_unconditioned_trust_is_an_explicit_per_workload_opt_out(run, governance):
    workloads = [{"name": "notebook", "services": ["sagemaker.amazonaws.com"]}]
    graph = run(
        _identity(
            governance,
            workloads=[{**workloads[0], "allowUnconditionedTrust": True}],
        )
    )
    (statement,) = _trust(graph.named("ids-notebook"))["Statement"]
    assert "Condition" not in statement


def test_workload_list_is_configurable(run, governance):
    graph = run(
        _identity(
            governance,
            workloads=[
                {"name": "trainer-nodes", "services": ["ec2.amazonaws.com"]},
                {"name": "trainer-jobs", "services": ["ecs-tasks.amazonaws.com"]},
            ],
        )
    )
    assert {r.name for r in graph.of_type(ROLE)} == {"ids-trainer-nodes", "ids-trainer-jobs"}
    assert {p.name for p in graph.of_type(PROFILE)} == {"ids-trainer-nodes-profile"}


def test_instance_profiles_exist_only_for_ec2_trusted_roles(run, governance):
    graph = run(_identity(governance))
    profiles = {profile.name: profile for profile in graph.of_type(PROFILE)}
    assert set(profiles) == {"ids-training-profile", "ids-inference-profile"}
    for workload in ("training", "inference"):
        role = graph.named(f"ids-{workload}")
        assert profiles[f"ids-{workload}-profile"].inputs["role"] == role.outputs["name"]


def test_attached_policies_are_exactly_the_documented_narrow_ones(run, governance):
    graph = run(_identity(governance))
    role_of = {role.outputs["name"]: role.name for role in graph.of_type(ROLE)}
    attached = {
        (role_of[a.inputs["role"]], a.inputs["policyArn"]) for a in graph.of_type(ATTACHMENT)
    }
    aws_managed = "arn:aws:iam::aws:policy/"
    # Managed policies on instance roles only; never on the job role. No
    # CloudWatchAgentServerPolicy: its logs:PutRetentionPolicy and logs:CreateLogGroup on "*"
    # (AWS managed policy reference) would let any job shorten the audit logs' retention.
    assert attached == {
        ("ids-training", aws_managed + "AmazonSSMManagedInstanceCore"),
        ("ids-training", aws_managed + "service-role/AmazonEC2ContainerServiceforEC2Role"),
        ("ids-inference", aws_managed + "AmazonSSMManagedInstanceCore"),
    }
    assert not any(broad_managed_policy(arn) for _, arn in attached)
    assert not any(broad_managed_policy(aws_managed + p) for p in MANAGED_POLICIES.values())
    # No customer policies; the only inline ones are the agent's tag lookup: data, log,
    # metric and Studio access is granted by their owners (aws.Notebook for Studio).
    assert graph.of_type("aws:iam/policy:Policy") == []
    assert sorted(p.name for p in graph.of_type("aws:iam/rolePolicy:RolePolicy")) == [
        "ids-inference-cloudwatch-agent",
        "ids-training-cloudwatch-agent",
    ]
    agent = json.loads(graph.named("ids-training-cloudwatch-agent").inputs["policy"])
    assert [s["Action"] for s in agent["Statement"]] == [["ec2:DescribeTags"]]
    for role in graph.of_type(ROLE):
        assert not role.inputs.get("managedPolicyArns")
        assert not role.inputs.get("inlinePolicies")


def test_session_manager_cloudwatch_and_batch_policies_are_switchable(run, governance):
    graph = run(
        _identity(
            governance,
            workloads=[
                {
                    "name": "training",
                    "services": ["ec2.amazonaws.com"],
                    "sessionManager": False,
                    "batchInstanceRole": False,
                },
                {
                    "name": "inference",
                    "services": ["ec2.amazonaws.com"],
                    "cloudwatchAgent": False,
                    "batchInstanceRole": True,
                },
            ],
        )
    )
    assert {a.name for a in graph.of_type(ATTACHMENT)} == {
        "ids-inference-ssm",
        "ids-inference-ecs-instance",
    }
    assert {p.name for p in graph.of_type("aws:iam/rolePolicy:RolePolicy")} == {
        "ids-training-cloudwatch-agent"
    }


def test_one_role_trusted_by_ec2_and_ecs_tasks_is_refused(governance):
    # Such a role is both the Batch instance role and the job role: user code would run with
    # AmazonEC2ContainerServiceforEC2Role and AmazonSSMManagedInstanceCore.
    with pytest.raises(ConfigError) as caught:
        aistack_aws.WorkloadIdentityArgs.parse(
            {
                "governance": governance,
                "workloads": [
                    {
                        "name": "training",
                        "services": ["ec2.amazonaws.com", "ecs-tasks.amazonaws.com"],
                    }
                ],
            }
        )
    assert caught.value.fields == ["workloads.0.services"]


def test_no_users_keys_or_passwords_anywhere_and_every_c6_rule_passes(run, governance):
    graph = run(
        _identity(
            governance,
            github=GITHUB,
            kubernetesServiceAccounts=[
                {"name": "serving", "namespace": "ml", "serviceAccount": "server"}
            ],
        )
    )
    assert not [r for r in graph.resources if r.type in LONG_LIVED]
    assert not [r for r in graph.resources if r.type.startswith("aws:iam/user")]
    assert_compliant(graph, "C6")


def test_roles_and_profiles_carry_governance_and_workload_tags(run, governance):
    graph = run(_identity(governance, github=GITHUB))
    for resource in graph.of_type(ROLE) + graph.of_type(PROFILE) + graph.of_type(OIDC):
        tags = resource.inputs["tags"]
        assert tags["aistack:owner"] == "ml-platform"
        assert tags["aistack:stack"] == "aistack-dev"
    assert graph.named("ids-training").inputs["tags"]["aistack:workload"] == "training"
    assert graph.named("ids-training-profile").inputs["tags"]["aistack:workload"] == "training"
    assert graph.named("ids-ci").inputs["tags"]["aistack:workload"] == "ci"


def test_session_duration_path_and_boundary_apply_to_every_role(run, governance):
    boundary = f"arn:aws:iam::{ACCOUNT}:policy/ml-boundary"
    graph = run(
        _identity(
            governance,
            github=GITHUB,
            maxSessionDuration=7200,
            rolePath="/aistack/",
            permissionsBoundaryArn=boundary,
        )
    )
    roles = graph.of_type(ROLE)
    assert len(roles) == 5
    for role in roles:
        assert role.inputs["maxSessionDuration"] == 7200
        assert role.inputs["path"] == "/aistack/"
        assert role.inputs["permissionsBoundary"] == boundary
    assert (
        graph.named("ids-training")
        .outputs["arn"]
        .startswith(f"arn:aws:iam::{ACCOUNT}:role/aistack/ids-training-")
    )


# ---- GitHub Actions OIDC ---------------------------------------------------------------------


def test_github_ci_role_trusts_only_the_repositorys_branches_and_environments(run, governance):
    graph = run(_identity(governance, github=GITHUB))
    provider = graph.named("ids-github-oidc")
    assert provider.inputs["url"] == "https://token.actions.githubusercontent.com"
    assert provider.inputs["clientIdLists"] == ["sts.amazonaws.com"]
    assert "thumbprintLists" not in provider.inputs
    (statement,) = _trust(graph.named("ids-ci"))["Statement"]
    assert statement["Principal"] == {"Federated": provider.outputs["arn"]}
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert statement["Condition"] == {
        "StringEquals": {
            "token.actions.githubusercontent.com:aud": "sts.amazonaws.com",
            "token.actions.githubusercontent.com:sub": [
                "repo:acme/ml-platform:ref:refs/heads/main",
                "repo:acme/ml-platform:environment:prod",
            ],
        }
    }


def test_ci_role_gets_no_permissions_unless_the_caller_grants_them(run, governance):
    graph = run(_identity(governance, github=GITHUB))
    ci = graph.named("ids-ci")
    assert not graph.referencing(ci.outputs["name"])
    assert not ci.inputs.get("managedPolicyArns") and not ci.inputs.get("inlinePolicies")


def test_existing_github_provider_is_reused_not_created(run, governance):
    existing = f"arn:aws:iam::{ACCOUNT}:oidc-provider/token.actions.githubusercontent.com"
    graph = run(_identity(governance, github={**GITHUB, "providerArn": existing}))
    assert graph.of_type(OIDC) == []
    (statement,) = _trust(graph.named("ids-ci"))["Statement"]
    assert statement["Principal"] == {"Federated": existing}


def test_no_ci_role_or_provider_without_github(run, governance):
    graph = run(_identity(governance))
    assert graph.of_type(OIDC) == []
    assert "ids-ci" not in {r.name for r in graph.resources}


@pytest.mark.parametrize("repository", ["acme/*", "*", "*/ml-platform", "acme/ml-*", "acme/?"])
def test_wildcard_repository_is_refused(run, governance, repository):
    error = _refused(run, _identity(governance, github={**GITHUB, "repository": repository}))
    assert error.fields == ["ids.github.repository"]
    assert "wildcard" in str(error)


@pytest.mark.parametrize(
    ("field", "value"),
    [("branches", ["*"]), ("branches", ["release/*"]), ("environments", ["prod*"])],
)
def test_wildcard_branch_or_environment_is_refused(run, governance, field, value):
    error = _refused(run, _identity(governance, github={**GITHUB, field: value}))
    assert error.fields == [f"ids.github.{field}"]


def test_ci_role_trusting_no_branch_and_no_environment_is_refused(run, governance):
    error = _refused(run, _identity(governance, github={"repository": "acme/ml", "branches": []}))
    assert error.fields == ["ids.github.branches"]
    assert "environments" in error.problems[0].fix


def test_github_provider_choices_must_be_consistent(run, governance):
    error = _refused(run, _identity(governance, github={**GITHUB, "createProvider": False}))
    assert error.fields == ["ids.github.providerArn"]
    error = _refused(
        run,
        _identity(
            governance,
            github={**GITHUB, "providerArn": f"arn:aws:iam::{ACCOUNT}:oidc-provider/example.com"},
        ),
    )
    assert error.fields == ["ids.github.providerArn"]


# ---- Kubernetes ------------------------------------------------------------------------------


def test_irsa_trust_pins_the_service_account_and_audience():
    document = json.loads(irsa_trust(PROVIDER_ARN, f"https://{ISSUER}", "ml", "trainer"))
    (statement,) = document["Statement"]
    assert statement["Principal"] == {"Federated": PROVIDER_ARN}
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert statement["Condition"] == {
        "StringEquals": {
            f"{ISSUER}:sub": "system:serviceaccount:ml:trainer",
            f"{ISSUER}:aud": "sts.amazonaws.com",
        }
    }


def test_irsa_trust_refuses_a_provider_of_another_issuer_and_wildcards():
    with pytest.raises(ConfigError) as caught:
        irsa_trust(PROVIDER_ARN, "https://oidc.eks.us-west-2.amazonaws.com/id/OTHER", "*", "x")
    assert set(caught.value.fields) == {"oidc_provider_arn", "namespace"}


def test_pod_identity_trust_is_the_eks_service_with_tag_session():
    (statement,) = json.loads(eks_pod_identity_trust())["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert statement["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    assert "Condition" not in statement
    (pinned,) = json.loads(
        eks_pod_identity_trust(namespace="ml", service_account="server", cluster_name="gpu")
    )["Statement"]
    assert pinned["Condition"] == {
        "StringEquals": {
            "aws:RequestTag/eks-cluster-name": "gpu",
            "aws:RequestTag/kubernetes-namespace": "ml",
            "aws:RequestTag/kubernetes-service-account": "server",
        }
    }


def test_kubernetes_service_accounts_get_their_own_pinned_roles(run, governance):
    graph = run(
        _identity(
            governance,
            kubernetesServiceAccounts=[
                {
                    "name": "serving",
                    "namespace": "ml",
                    "serviceAccount": "server",
                    "clusterName": "gpu",
                    "region": "us-east-1",
                },
                {
                    "name": "batch-jobs",
                    "namespace": "ml",
                    "serviceAccount": "jobs",
                    "mechanism": "irsa",
                    "oidcProviderArn": PROVIDER_ARN,
                    "oidcIssuerUrl": f"https://{ISSUER}",
                },
            ],
        )
    )
    serving = graph.named("ids-serving")
    assert _trust(serving) == json.loads(
        eks_pod_identity_trust(namespace="ml", service_account="server", cluster_name="gpu")
    )
    association = graph.named("ids-serving-pod-identity")
    assert association.inputs["roleArn"] == serving.outputs["arn"]
    assert (association.inputs["namespace"], association.inputs["serviceAccount"]) == (
        "ml",
        "server",
    )
    assert association.inputs["clusterName"] == "gpu"
    assert _trust(graph.named("ids-batch-jobs")) == json.loads(
        irsa_trust(PROVIDER_ARN, f"https://{ISSUER}", "ml", "jobs")
    )
    assert "ids-batch-jobs-profile" not in {r.name for r in graph.resources}


def test_kubernetes_service_account_options_are_validated(run, governance):
    error = _refused(
        run,
        _identity(
            governance,
            kubernetesServiceAccounts=[
                {"name": "a", "namespace": "ml", "serviceAccount": "x", "mechanism": "irsa"},
                {
                    "name": "b",
                    "namespace": "ml",
                    "serviceAccount": "y",
                    "clusterName": "gpu",
                    "region": "eu-west-1",
                },
                {"name": "c", "namespace": "ml", "serviceAccount": "z", "region": "us-east-1"},
            ],
        ),
    )
    assert set(error.fields) == {
        "ids.kubernetesServiceAccounts.0.oidcProviderArn",
        "ids.kubernetesServiceAccounts.0.oidcIssuerUrl",
        "ids.kubernetesServiceAccounts.1.region",
        "ids.kubernetesServiceAccounts.2.region",
    }
    assert "C4" in str(error)


def test_irsa_cluster_outside_the_allowed_regions_is_refused(run, governance):
    issuer = "oidc.eks.eu-west-1.amazonaws.com/id/EXAMPLE"
    error = _refused(
        run,
        _identity(
            governance,
            kubernetesServiceAccounts=[
                {
                    "name": "jobs",
                    "namespace": "ml",
                    "serviceAccount": "jobs",
                    "mechanism": "irsa",
                    "oidcProviderArn": f"arn:aws:iam::{ACCOUNT}:oidc-provider/{issuer}",
                    "oidcIssuerUrl": f"https://{issuer}",
                }
            ],
        ),
    )
    assert error.fields == ["ids.kubernetesServiceAccounts.0.oidcIssuerUrl"]
    assert "C4" in str(error)


# ---- validation ------------------------------------------------------------------------------


def test_every_cross_field_problem_is_reported_at_its_field(run, governance):
    error = _refused(
        run,
        _identity(
            governance,
            workloads=[
                {"name": "training", "services": ["ec2.amazonaws.com"]},
                {
                    "name": "training",
                    "services": ["sagemaker.amazonaws.com", "sagemaker.amazonaws.com"],
                    "sessionManager": True,
                },
                {"name": "ci", "services": ["ec2.amazonaws.com"]},
            ],
            kubernetesServiceAccounts=[
                {"name": "training", "namespace": "ml", "serviceAccount": "x"}
            ],
        ),
    )
    assert set(error.fields) == {
        "ids.workloads.1.name",
        "ids.workloads.1.services",
        "ids.workloads.1.sessionManager",
        "ids.workloads.2.name",
        "ids.kubernetesServiceAccounts.0.name",
    }


def test_field_errors_name_their_paths(governance):
    with pytest.raises(ConfigError) as caught:
        aistack_aws.WorkloadIdentityArgs.parse(
            {
                "workloads": [
                    {"name": "Training_1", "services": ["ec2.amazonaws.com"]},
                    {"name": "gpu", "services": ["lambda.amazonaws.com"]},
                    {"name": "empty", "services": []},
                ],
                "maxSessionDuration": 60,
            },
            where="ids",
        )
    assert set(caught.value.fields) == {
        "ids.governance",
        "ids.workloads.0.name",
        "ids.workloads.1.services.0",
        "ids.workloads.2.services",
        "ids.maxSessionDuration",
    }


@pytest.mark.parametrize("seconds", [3599, 43201])
def test_session_duration_outside_aws_limits_is_refused(governance, seconds):
    with pytest.raises(ConfigError) as caught:
        aistack_aws.WorkloadIdentityArgs.parse(
            {"governance": governance, "maxSessionDuration": seconds}, where="ids"
        )
    assert caught.value.fields == ["ids.maxSessionDuration"]


def test_role_names_that_would_exceed_iams_limit_are_refused(run, governance):
    long_name = "x" * 40
    error = _refused(
        run,
        lambda: aistack_aws.WorkloadIdentity(
            long_name,
            {
                "governance": governance,
                "workloads": [{"name": "y" * 20, "services": ["ec2.amazonaws.com"]}],
            },
        ),
    )
    assert error.fields == [f"{long_name}.workloads.0.name"]


# ---- lookups ---------------------------------------------------------------------------------


def test_lookups_return_the_workloads_resources_and_refuse_unknown_ones(run, governance):
    found = {}

    def program():
        ids = aistack_aws.WorkloadIdentity("ids", {"governance": governance})
        found["training"] = ids.role("training")
        pulumi.export("training_arn", ids.role_arn("training"))
        pulumi.export("profile", ids.instance_profile("inference").name)
        for lookup in (lambda: ids.role("gpu"), lambda: ids.instance_profile("notebook")):
            try:
                lookup()
            except ConfigError as error:
                found.setdefault("errors", []).append(error)

    graph = run(program)
    assert found["training"] is not None
    assert graph.stack_outputs["training_arn"] == graph.named("ids-training").outputs["arn"]
    assert graph.stack_outputs["profile"] == graph.named("ids-inference-profile").outputs["name"]
    gpu, notebook = found["errors"]
    assert gpu.fields == ["ids.workloads"] and "training" in gpu.problems[0].fix
    assert "not trusted by ec2.amazonaws.com" in str(notebook)


def test_the_notebook_role_gets_its_studio_permissions_from_its_domain_not_here(run, governance):
    # Studio permissions name one domain and region (aws.Notebook attaches them, pinned to
    # its domain id): an identity created before the domain could only say "*".
    graph = run(lambda: aistack_aws.WorkloadIdentity("id", {"governance": governance}))
    assert not [r for r in graph.resources if r.name.endswith("-studio")]

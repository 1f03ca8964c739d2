"""Notebook: VPC-only Studio, idle shutdown with bounds, KMS, retained home volume, users."""

import pulumi
import pulumi_aws as aws
import pytest

from aistack import aws as aistack_aws
from aistack import cost
from aistack.errors import ConfigError
from tests._harness.shared_graphs import shared

from .conftest import GOVERNANCE, run_in_us_east_1

DOMAIN = "aws:sagemaker/domain:Domain"
PROFILE = "aws:sagemaker/userProfile:UserProfile"
ROLE_ARN = "arn:aws:iam::123456789012:role/notebook"
VPC = "vpc-0123456789abcdef0"
SUBNETS = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
SECURITY_GROUP = "sg-0123456789abcdef0"


def _args(governance, **overrides):
    return {
        "governance": governance,
        "region": "us-east-1",
        "users": ["ana", "bo"],
        "vpcId": VPC,
        "subnetIds": SUBNETS,
        "securityGroupIds": [SECURITY_GROUP],
        "executionRoleArn": ROLE_ARN,
        **overrides,
    }


def _one(graph, token):
    found = graph.of_type(token)
    assert len(found) == 1, f"expected one {token}, found {len(found)}"
    return found[0]


def _domain(run, governance, **overrides):
    graph = run(lambda: aistack_aws.Notebook("nb", _args(governance, **overrides)))
    return graph, _one(graph, DOMAIN)


@pytest.fixture(scope="module")
def default_domain():
    """`_domain(run, governance)` for the default arguments, built once for the tests that
    only read it: (graph, domain)."""
    graph = run_in_us_east_1(lambda: aistack_aws.Notebook("nb", _args(dict(GOVERNANCE))))
    with shared(graph):
        yield graph, _one(graph, DOMAIN)


def _refused(run, program):
    """Run `program`, expecting a ConfigError before anything registers."""
    errors = []

    def guarded():
        try:
            program()
        except ConfigError as error:
            errors.append(error)

    graph = run(guarded)
    assert graph.resources == [], "nothing may register before validation passes"
    assert errors, "expected a ConfigError"
    return errors[0]


def test_domain_is_vpc_only_in_the_given_network_with_iam_auth(default_domain):
    _, domain = default_domain
    assert domain.inputs["appNetworkAccessType"] == "VpcOnly"
    assert domain.inputs["authMode"] == "IAM"
    assert domain.inputs["vpcId"] == VPC
    assert domain.inputs["subnetIds"] == SUBNETS
    assert domain.get("defaultUserSettings", "securityGroups") == [SECURITY_GROUP]
    # Shared spaces do not take the user settings' groups: they need their own.
    assert domain.get("defaultSpaceSettings", "securityGroups") == [SECURITY_GROUP]


def test_network_and_role_can_be_wired_from_other_components_outputs(run, governance):
    def program():
        vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
        subnet = aws.ec2.Subnet("private", vpc_id=vpc.id, cidr_block="10.0.1.0/24")
        group = aws.ec2.SecurityGroup("notebook-sg", vpc_id=vpc.id)
        role = aws.iam.Role("notebook-role", assume_role_policy="{}")
        aistack_aws.Notebook(
            "nb",
            {"governance": governance, "region": "us-east-1", "users": ["ana"]},
            vpc_id=vpc.id,
            subnet_ids=[subnet.id],
            security_group_ids=[group.id],
            execution_role_arn=role.arn,
        )

    graph = run(program)
    domain = _one(graph, DOMAIN)
    assert domain.inputs["vpcId"] == graph.named("vpc").id
    assert domain.inputs["subnetIds"] == [graph.named("private").id]
    assert domain.get("defaultUserSettings", "securityGroups") == [graph.named("notebook-sg").id]
    role_arn = graph.named("notebook-role").outputs["arn"]
    assert domain.get("defaultUserSettings", "executionRole") == role_arn
    assert domain.get("defaultSpaceSettings", "executionRole") == role_arn


def test_network_keyword_wires_the_domain_to_the_network_notebook_tier(run, governance):
    # network= is the wiring the other components take; it gives the notebook tier's VPC,
    # subnets and security group, exactly what the raw ids give.
    def program(wired):
        network = aistack_aws.Network(
            "net",
            {
                "governance": governance,
                "region": "us-east-1",
                "trainingInstanceTypes": ["p5.48xlarge"],
                "notebook": True,
            },
        )
        raw = {
            "vpc_id": network.vpc_id,
            "subnet_ids": network.subnet_ids("notebook"),
            "security_group_ids": [network.security_group_id("notebook")],
        }
        aistack_aws.Notebook(
            "nb",
            {"governance": governance, "region": "us-east-1", "users": ["ana"]},
            execution_role_arn="arn:aws:iam::123456789012:role/notebook",
            **({"network": network} if wired else raw),
        )

    wired, raw = run(lambda: program(True)), run(lambda: program(False))
    domain = _one(wired, DOMAIN)
    assert domain.inputs == _one(raw, DOMAIN).inputs
    assert domain.inputs["vpcId"] == wired.named("net-vpc").id
    assert domain.inputs["subnetIds"]


@pytest.mark.parametrize(
    ("path", "app"),
    [
        (("defaultUserSettings", "jupyterLabAppSettings"), "JupyterLab"),
        (("defaultUserSettings", "codeEditorAppSettings"), "Code Editor"),
        (("defaultSpaceSettings", "jupyterLabAppSettings"), "shared JupyterLab"),
    ],
)
def test_idle_shutdown_is_enabled_with_the_configured_minutes_and_bounds(
    run, governance, path, app
):
    _, domain = _domain(run, governance, idle_timeout_minutes=90, max_idle_timeout_minutes=180)
    idle = domain.get(*path, "appLifecycleManagement", "idleSettings")
    assert idle == {
        "lifecycleManagement": "ENABLED",
        "idleTimeoutInMinutes": 90,
        "minIdleTimeoutInMinutes": 60,
        "maxIdleTimeoutInMinutes": 180,
    }, app


def test_idle_shutdown_defaults_to_an_hour_with_users_capped_at_four(default_domain):
    _, domain = default_domain
    idle = domain.get(
        "defaultUserSettings", "jupyterLabAppSettings", "appLifecycleManagement", "idleSettings"
    )
    assert idle["idleTimeoutInMinutes"] == 60
    assert idle["maxIdleTimeoutInMinutes"] == 240


def test_spaces_start_on_a_small_cpu_instance(default_domain):
    _, domain = default_domain
    for path in (
        ("defaultUserSettings", "jupyterLabAppSettings"),
        ("defaultUserSettings", "codeEditorAppSettings"),
        ("defaultSpaceSettings", "jupyterLabAppSettings"),
    ):
        assert domain.get(*path, "defaultResourceSpec", "instanceType") == "ml.t3.medium"


def test_a_gpu_default_instance_is_an_explicit_opt_in(run, governance):
    error = _refused(
        run,
        lambda: aistack_aws.Notebook("nb", _args(governance, default_instance_type="ml.g5.xlarge")),
    )
    assert error.fields == ["nb.defaultInstanceType"]
    _, domain = _domain(
        run,
        governance,
        default_instance_type="ml.g5.xlarge",
        allow_gpu_default_instance=True,
    )
    spec = domain.get("defaultUserSettings", "jupyterLabAppSettings", "defaultResourceSpec")
    assert spec == {"instanceType": "ml.g5.xlarge"}


def test_updated_studio_only_with_studio_classic_hidden(default_domain):
    _, domain = default_domain
    settings = domain.inputs["defaultUserSettings"]
    assert settings["studioWebPortal"] == "ENABLED"
    assert settings["defaultLandingUri"] == "studio::"
    assert settings["studioWebPortalSettings"]["hiddenAppTypes"] == ["JupyterServer"]


def test_home_volume_is_encrypted_with_a_rotating_customer_key(default_domain):
    graph, domain = default_domain
    key = _one(graph, "aws:kms/key:Key")
    assert key.inputs["enableKeyRotation"] is True
    assert domain.inputs["kmsKeyId"] == key.outputs["keyId"]
    assert key.retain_on_delete is True


def test_a_given_key_is_used_instead_of_a_new_one(run, governance):
    graph, domain = _domain(run, governance, kms_key_id="1234abcd-12ab-34cd-56ef-1234567890ab")
    assert graph.of_type("aws:kms/key:Key") == []
    assert domain.inputs["kmsKeyId"] == "1234abcd-12ab-34cd-56ef-1234567890ab"


def test_home_efs_is_retained_when_the_domain_is_deleted(run, governance, default_domain):
    _, domain = default_domain
    assert domain.inputs["retentionPolicy"] == {"homeEfsFileSystem": "Retain"}
    assert domain.retain_on_delete is True
    assert domain.protect is False  # dev: retained, not protected
    _, prod = _domain(run, {**governance, "environment": "prod"})
    assert prod.protect is True


def test_deleting_the_home_volume_is_an_explicit_opt_out(run, governance):
    graph, domain = _domain(run, governance, allow_destroy_with_data=True)
    assert domain.inputs["retentionPolicy"] == {"homeEfsFileSystem": "Delete"}
    assert domain.retain_on_delete is False
    assert _one(graph, "aws:kms/key:Key").retain_on_delete is False


def test_one_user_profile_per_user_inheriting_the_domain_settings(run, governance):
    graph, domain = _domain(run, governance, users=["ana", "bo", "data-team"])
    profiles = {p.name: p for p in graph.of_type(PROFILE)}
    assert set(profiles) == {"nb-user-ana", "nb-user-bo", "nb-user-data-team"}
    for user in ("ana", "bo", "data-team"):
        profile = profiles[f"nb-user-{user}"]
        assert profile.inputs["userProfileName"] == user
        assert profile.inputs["domainId"] == domain.id
        # No per-user settings: idle shutdown cannot drift from the domain's.
        assert "userSettings" not in profile.inputs
        assert profile.inputs["tags"]["aistack:notebook-user"] == user


def test_docker_access_is_off_unless_allowed(run, governance, default_domain):
    _, domain = default_domain
    assert domain.get("domainSettings", "dockerSettings", "enableDockerAccess") == "DISABLED"
    _, allowed = _domain(run, governance, allow_docker_access=True)
    assert allowed.get("domainSettings", "dockerSettings", "enableDockerAccess") == "ENABLED"


def test_governance_tags_propagate_to_what_users_launch(default_domain):
    graph, domain = default_domain
    assert domain.inputs["tagPropagation"] == "ENABLED"
    assert domain.inputs["tags"]["aistack:workload"] == "notebook"
    assert domain.inputs["tags"]["aistack:allowed-regions"] == "us-east-1 us-west-2"
    assert domain.inputs["region"] == "us-east-1"
    assert graph.named("nb").type == "aistack:index:AwsNotebook"


def test_outputs_name_the_domain_its_url_and_the_profiles(run, governance):
    seen = {}

    def program():
        notebook = aistack_aws.Notebook("nb", _args(governance))
        seen["names"] = notebook.user_profile_names
        pulumi.export("studio_url", notebook.studio_url)
        pulumi.export("domain_id", notebook.domain_id)

    graph = run(program)
    domain = _one(graph, DOMAIN)
    assert graph.stack_outputs["studio_url"] == domain.outputs["url"]
    assert graph.stack_outputs["studio_url"].startswith("https://d-")
    assert graph.stack_outputs["domain_id"] == domain.id
    assert seen["names"] == ["ana", "bo"]


def test_idle_timeout_outside_sagemakers_range_is_refused(governance):
    with pytest.raises(ConfigError) as caught:
        aistack_aws.NotebookArgs.parse(
            _args(governance, idleTimeoutMinutes=30, maxIdleTimeoutMinutes=2000), where="nb"
        )
    assert set(caught.value.fields) == {"nb.idleTimeoutMinutes", "nb.maxIdleTimeoutMinutes"}


def test_idle_timeout_above_the_users_ceiling_is_refused(run, governance):
    error = _refused(
        run,
        lambda: aistack_aws.Notebook(
            "nb", _args(governance, idle_timeout_minutes=300, max_idle_timeout_minutes=240)
        ),
    )
    assert error.fields == ["nb.idleTimeoutMinutes"]


def test_region_outside_allowed_regions_is_refused_before_anything_registers(run, governance):
    error = _refused(run, lambda: aistack_aws.Notebook("nb", _args(governance, region="eu-west-1")))
    assert error.fields == ["nb.region"]
    assert "C4" in str(error)


def test_duplicate_users_are_refused(governance):
    with pytest.raises(ConfigError, match="more than once") as caught:
        aistack_aws.NotebookArgs.parse(_args(governance, users=["ana", "bo", "ana"]), where="nb")
    assert caught.value.fields == ["nb.users"]


def test_users_must_be_slugs(governance):
    with pytest.raises(ConfigError, match="not user slugs"):
        aistack_aws.NotebookArgs.parse(_args(governance, users=["Ana Smith"]))


def test_missing_network_and_role_are_all_reported_at_once(run, governance):
    error = _refused(
        run,
        lambda: aistack_aws.Notebook(
            "nb", {"governance": governance, "region": "us-east-1", "users": ["ana"]}
        ),
    )
    assert set(error.fields) == {
        "nb.vpcId",
        "nb.subnetIds",
        "nb.securityGroupIds",
        "nb.executionRoleArn",
    }
    assert "execution_role_arn=" in str(error)


def test_wiring_given_twice_is_refused(run, governance):
    error = _refused(
        run, lambda: aistack_aws.Notebook("nb", _args(governance), vpc_id="vpc-0fedcba987654321")
    )
    assert error.fields == ["nb.vpcId"]


def test_literal_ids_that_are_not_ids_are_refused(run, governance):
    error = _refused(
        run,
        lambda: aistack_aws.Notebook(
            "nb",
            _args(
                governance,
                vpcId="my-vpc",
                securityGroupIds=["notebook"],
                executionRoleArn="notebook",
            ),
        ),
    )
    assert set(error.fields) == {"nb.vpcId", "nb.securityGroupIds", "nb.executionRoleArn"}


def test_cost_counts_worked_hours_plus_idle_tails_against_a_notebook_left_on(default_domain):
    graph, _ = default_domain
    profile = cost.WorkloadProfile(notebook_hours_per_month=160)
    item = next(i for i in cost.estimate(graph, profile).items if i.resource == "nb-domain")
    # 2 users x (160 h + 20 sessions x 1 h idle tail) x $0.05; naive: 2 x 730 h x $0.05.
    assert item.monthly_usd == pytest.approx(2 * 180 * 0.05)
    assert item.naive_monthly_usd == pytest.approx(2 * 730 * 0.05)
    assert "24x7" in item.basis


# ---- the execution role's Studio permissions (audit 11) ---------------------------------------
#
# The shape follows the SageMaker developer guide, "Give your users access to private spaces":
# CreateSpace/UpdateSpace/DeleteSpace on space/<domain-id>/* conditioned on
# sagemaker:OwnerUserProfileArn and sagemaker:SpaceSharingType; CreateApp/DeleteApp on
# app/<domain-id>/*; AddTags only with sagemaker:TaggingAction (Studio tags what it creates).
# The service authorization reference gives the resource ARNs space/${DomainId}/${SpaceName}
# and app/${DomainId}/${UserProfileName}/..., and sagemaker:InstanceTypes on CreateApp. With
# ExecutionRoleIdentityConfig USER_PROFILE_NAME, Studio sets the user profile name as the
# execution role's sts:SourceIdentity (CreateDomain API, DomainSettings).


def _studio_policy(graph):
    import json

    return {
        s["Sid"]: s
        for s in json.loads(graph.named("nb-studio-access").inputs["policy"])["Statement"]
    }


def test_the_execution_role_may_manage_only_this_domains_spaces_and_apps_in_its_region(
    default_domain,
):
    graph, domain = default_domain
    access = graph.named("nb-studio-access")
    assert access.inputs["role"] == "notebook"  # the role name, from ROLE_ARN
    prefix = "arn:aws:sagemaker:us-east-1:123456789012:"
    domain_id = domain.id
    statements = _studio_policy(graph)
    for sid, statement in statements.items():
        resources = statement["Resource"]
        resources = resources if isinstance(resources, list) else [resources]
        if sid == "ListForTheStudioUi":
            # The only "*": ListSpaces and ListApps support no resource-level permissions.
            assert statement["Action"] == ["sagemaker:ListSpaces", "sagemaker:ListApps"]
            assert resources == ["*"]
            continue
        for resource in resources:
            assert resource.startswith(prefix), (sid, resource)
            assert domain_id in resource, (sid, resource)
            assert ":sagemaker:*:" not in resource
    assert "sagemaker:ListTags" in statements["DescribeThisDomain"]["Action"]


def test_private_spaces_and_their_apps_belong_to_their_owner(default_domain):
    graph, domain = default_domain
    statements = _studio_policy(graph)
    owner = (
        f"arn:aws:sagemaker:us-east-1:123456789012:user-profile/{domain.id}/${{aws:SourceIdentity}}"
    )
    for sid in ("OwnSpaces", "AppsInOwnPrivateSpaces", "StopAppsInOwnPrivateSpaces"):
        assert statements[sid]["Condition"]["ArnLike"] == {"sagemaker:OwnerUserProfileArn": owner}
    assert statements["OwnSpaces"]["Action"] == [
        "sagemaker:CreateSpace",
        "sagemaker:UpdateSpace",
        "sagemaker:DeleteSpace",
    ]
    settings = domain.inputs["domainSettings"]
    assert settings["executionRoleIdentityConfig"] == "USER_PROFILE_NAME"


def test_apps_start_only_on_the_configured_instance_types(run, governance):
    graph, _ = _domain(run, governance, instanceTypes=["ml.t3.medium", "ml.g5.2xlarge"])
    statements = _studio_policy(graph)
    creates = [s for s in statements.values() if s["Action"] == "sagemaker:CreateApp"]
    assert len(creates) == 2
    for statement in creates:
        assert statement["Condition"]["ForAllValues:StringEquals"] == {
            "sagemaker:InstanceTypes": ["ml.t3.medium", "ml.g5.2xlarge"]
        }


def test_a_default_instance_type_outside_the_allowed_types_is_refused(run, governance):
    error = _refused(
        run, lambda: aistack_aws.Notebook("nb", _args(governance, instanceTypes=["ml.m5.xlarge"]))
    )
    assert error.fields == ["nb.defaultInstanceType"]


def test_the_studio_grant_can_be_left_to_the_roles_owner(run, governance):
    graph, _ = _domain(run, governance, grantStudioPermissions=False)
    assert graph.of_type("aws:iam/rolePolicy:RolePolicy") == []

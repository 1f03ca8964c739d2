"""Rules for C6 (workload identity): each with a compliant and a violating stack."""

import json

import pulumi_aws as aws

from aistack import aws as aistack_aws

GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "research-1234",
    "allowedRegions": ["us-east-1"],
}
GITHUB_PROVIDER = "arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com"


def _identity(**overrides):
    return aistack_aws.WorkloadIdentity("ids", {"governance": GOVERNANCE, **overrides})


def _policy(*statements):
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def _github_role(name, condition):
    return aws.iam.Role(
        name,
        assume_role_policy=_policy(
            {
                "Effect": "Allow",
                "Principal": {"Federated": GITHUB_PROVIDER},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": condition,
            }
        ),
    )


AUD = {"token.actions.githubusercontent.com:aud": "sts.amazonaws.com"}


def _sub(*subjects):
    return {"token.actions.githubusercontent.com:sub": list(subjects)}


# ---- AIS-C6-01 -------------------------------------------------------------------------------


def test_c6_01_workload_roles_comply(verdicts):
    result = verdicts("AIS-C6-01", _identity)
    assert result == {
        "ids-training": "compliant",
        "ids-inference": "compliant",
        "ids-notebook": "compliant",
    }


def test_c6_01_users_access_keys_and_passwords_violate(verdicts):
    def program():
        user = aws.iam.User("deployer")
        aws.iam.AccessKey("deployer-key", user=user.name)
        aws.iam.UserLoginProfile("deployer-console", user=user.name)

    assert verdicts("AIS-C6-01", program) == {
        "deployer": "non-compliant",
        "deployer-key": "non-compliant",
        "deployer-console": "non-compliant",
    }


def test_c6_01_aws_keys_stored_in_parameters_or_environment_violate(verdicts):
    def program():
        aws.ssm.Parameter("creds", type="SecureString", value="AKIAIOSFODNN7EXAMPLE")
        aws.lambda_.Function(
            "sync",
            role="arn:aws:iam::123456789012:role/sync",
            runtime="python3.12",
            handler="index.handler",
            environment={"variables": {"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG"}},
        )
        aws.ssm.Parameter("setting", type="String", value="batch-size=32")

    assert verdicts("AIS-C6-01", program) == {
        "creds": "non-compliant",
        "sync": "non-compliant",
    }


# ---- AIS-C6-02 -------------------------------------------------------------------------------


def test_c6_02_bucket_grant_to_a_workload_role_complies(verdicts):
    def program():
        identity = _identity()
        data = aistack_aws.DatasetBucket(
            "ckpt", {"kind": "checkpoints", "region": "us-east-1", "governance": GOVERNANCE}
        )
        data.grant_write(identity.role("training"), name="training")
        # A whole service on one bucket is bounded by its resource.
        aws.iam.RolePolicy(
            "scoped",
            role=identity.role("training").id,
            policy=_policy(
                {"Effect": "Allow", "Action": "s3:*", "Resource": "arn:aws:s3:::scratch/*"}
            ),
        )

    assert verdicts("AIS-C6-02", program) == {
        "ckpt-write-training": "compliant",
        "scoped": "compliant",
        "ids-notebook-studio": "compliant",
    }


def test_c6_02_star_actions_service_wildcards_and_not_action_violate(verdicts):
    def program():
        role = aws.iam.Role(
            "broad",
            assume_role_policy=_policy(
                {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}}
            ),
            inline_policies=[
                {
                    "name": "everything-but-iam",
                    "policy": _policy({"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}),
                }
            ],
        )
        aws.iam.RolePolicy(
            "admin",
            role=role.id,
            policy=_policy({"Effect": "Allow", "Action": "*", "Resource": "*"}),
        )
        aws.iam.Policy(
            "all-of-s3",
            policy=_policy({"Effect": "Allow", "Action": ["s3:*"], "Resource": ["*"]}),
        )
        # A Deny of everything is a guardrail, not a grant.
        aws.iam.Policy(
            "guardrail",
            policy=_policy({"Effect": "Deny", "Action": "*", "Resource": "*"}),
        )

    assert verdicts("AIS-C6-02", program) == {
        "broad": "non-compliant",
        "admin": "non-compliant",
        "all-of-s3": "non-compliant",
        "guardrail": "compliant",
    }


# ---- AIS-C6-03 -------------------------------------------------------------------------------


def test_c6_03_workload_identity_attachments_comply(verdicts):
    result = verdicts("AIS-C6-03", _identity)
    assert result and set(result.values()) == {"compliant"}
    assert "ids-training-ecs-instance" in result


def test_c6_03_full_access_admin_and_power_user_violate(verdicts):
    def program():
        role = aws.iam.Role(
            "lazy",
            assume_role_policy=_policy(
                {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}}
            ),
            managed_policy_arns=["arn:aws:iam::aws:policy/AmazonS3FullAccess"],
        )
        aws.iam.RolePolicyAttachment(
            "admin",
            role=role.name,
            policy_arn="arn:aws:iam::aws:policy/AdministratorAccess",
        )
        aws.iam.RolePolicyAttachment(
            "power",
            role=role.name,
            policy_arn="arn:aws:iam::aws:policy/PowerUserAccess",
        )
        # A customer policy is judged by its content (AIS-C6-02), not its name.
        aws.iam.RolePolicyAttachment(
            "own",
            role=role.name,
            policy_arn="arn:aws:iam::123456789012:policy/TeamFullAccess",
        )

    assert verdicts("AIS-C6-03", program) == {
        "lazy": "non-compliant",
        "admin": "non-compliant",
        "power": "non-compliant",
        "own": "compliant",
    }


# ---- AIS-C6-04 -------------------------------------------------------------------------------


def test_c6_04_workload_identity_ci_role_complies(verdicts):
    def program():
        _identity(github={"repository": "acme/ml", "branches": ["main"], "environments": ["prod"]})

    assert verdicts("AIS-C6-04", program) == {"ids-ci": "compliant"}


def test_c6_04_unpinned_or_wildcard_github_trust_violates(verdicts):
    def program():
        _github_role("any-repo", {"StringLike": {**AUD, **_sub("repo:acme/*")}})
        _github_role("any-branch", {"StringLike": {**AUD, **_sub("repo:acme/ml:*")}})
        _github_role("no-aud", {"StringEquals": _sub("repo:acme/ml:ref:refs/heads/main")})
        _github_role("no-sub", {"StringEquals": AUD})
        _github_role(
            "if-exists",
            {"StringEquals": AUD, "StringLikeIfExists": _sub("repo:acme/ml:environment:prod")},
        )
        _github_role(
            "pinned",
            {
                "StringEquals": AUD,
                "StringLike": _sub("repo:acme/ml:ref:refs/heads/release-*"),
            },
        )

    assert verdicts("AIS-C6-04", program) == {
        "any-repo": "non-compliant",
        "any-branch": "non-compliant",
        "no-aud": "non-compliant",
        "no-sub": "non-compliant",
        "if-exists": "non-compliant",
        "pinned": "compliant",
    }


def test_c6_04_does_not_apply_to_service_roles(verdicts):
    assert verdicts("AIS-C6-04", _identity) == {"": "not-applicable"}

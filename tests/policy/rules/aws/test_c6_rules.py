"""Rules for C6 (workload identity): each with a compliant and a violating stack."""

import json

import pulumi_aws as aws

from aistack import aws as aistack_aws
from tests.aws.training_platform import training_platform as _platform

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
        "ids-training-job": "compliant",
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
        # ec2:DescribeTags on "*": the action has no resource-level permissions.
        "ids-training-cloudwatch-agent": "compliant",
        "ids-inference-cloudwatch-agent": "compliant",
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


# ---- AIS-C6-05 -------------------------------------------------------------------------------
#
# Platform facts: AmazonEC2ContainerServiceforEC2Role allows ECR pulls of every repository and
# AmazonSSMManagedInstanceCore ssm:GetParameter(s) on "*" (AWS managed policy reference). A
# Batch job gets a role of its own only through jobRoleArn, from the ECS agent at
# 169.254.170.2; and AWS Batch runs ECS-EC2 jobs in `host` network mode (Batch user guide,
# "Networking modes for AWS Batch jobs"), so a job reaches the metadata service, and the
# instance role, whatever the hop limit: the rule judges what the instance role may do, and
# never reports the hop limit as isolation.


def test_c6_05_a_training_pool_job_runs_as_its_own_role_and_its_host_role_writes_nothing(
    verdicts,
):
    result = verdicts("AIS-C6-05", lambda: _platform(GOVERNANCE))
    assert result == {"train-job": "compliant", "train-compute": "compliant"}


def test_c6_05_a_job_role_the_instance_may_also_assume_violates(verdicts):
    def program():
        identity = aistack_aws.WorkloadIdentity(
            "id",
            {
                "governance": GOVERNANCE,
                "workloads": [
                    {"name": "training", "services": ["ec2.amazonaws.com"]},
                    {"name": "training-job", "services": ["ec2.amazonaws.com"]},
                ],
            },
        )
        _raw_batch_job(identity.role_arn("training-job"), hop_limit=1)

    assert verdicts("AIS-C6-05", program) == {"raw-job": "non-compliant"}


def test_c6_05_a_job_without_a_role_violates_and_no_hop_limit_is_judged(verdicts):
    assert verdicts("AIS-C6-05", lambda: _raw_batch_job(None, hop_limit=2)) == {
        "raw-job": "non-compliant",
    }


def test_c6_05_an_instance_role_that_writes_to_s3_violates_even_behind_one_hop(verdicts):
    def program():
        identity = _identity()
        role = identity.role("training")
        aws.iam.RolePolicy(
            "host-writes",
            role=role.id,
            policy=_policy(
                {"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"], "Resource": "*"}
            ),
        )
        _raw_batch_job(
            identity.role_arn("training-job"),
            hop_limit=1,
            instance_profile=identity.instance_profile("training").arn,
        )

    assert verdicts("AIS-C6-05", program) == {"raw-job": "compliant", "raw-ce": "non-compliant"}


def _raw_batch_job(
    job_role_arn, *, hop_limit, instance_profile="arn:aws:iam::123456789012:instance-profile/raw"
):
    template = aws.ec2.LaunchTemplate(
        "raw-lt",
        metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
            http_tokens="required", http_put_response_hop_limit=hop_limit
        ),
    )
    aws.batch.ComputeEnvironment(
        "raw-ce",
        type="MANAGED",
        compute_resources=aws.batch.ComputeEnvironmentComputeResourcesArgs(
            type="SPOT",
            max_vcpus=16,
            subnets=["subnet-1"],
            security_group_ids=["sg-1"],
            instance_role=instance_profile,
            instance_types=["g5.xlarge"],
            launch_template=aws.batch.ComputeEnvironmentComputeResourcesLaunchTemplateArgs(
                launch_template_id=template.id
            ),
        ),
    )
    properties = {"image": "trainer@sha256:" + "ab" * 32, "command": ["python", "train.py"]}
    if job_role_arn is None:
        aws.batch.JobDefinition(
            "raw-job", type="container", container_properties=json.dumps(properties)
        )
    else:
        aws.batch.JobDefinition(
            "raw-job",
            type="container",
            container_properties=job_role_arn.apply(
                lambda arn: json.dumps({**properties, "jobRoleArn": arn})
            ),
        )

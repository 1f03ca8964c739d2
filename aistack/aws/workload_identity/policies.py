"""The policy documents of `aws.WorkloadIdentity`'s roles: who may assume each role (a
service, a Kubernetes service account through IRSA or EKS Pod Identity, GitHub Actions),
and what a Studio domain's execution role may do.

Pure builders, usable without the component: `irsa_trust` and `eks_pod_identity_trust`
for a role made elsewhere, `studio_execution_policy` for `aws.Notebook`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi

from aistack.aws._base import policy_document, policy_output
from aistack.aws.workload_identity.args import (
    EKS_PODS,
    GITHUB_ISSUER,
    SOURCE_ACCOUNT_SERVICES,
    STS_AUDIENCE,
    GithubOidc,
    _irsa_problems,
)
from aistack.errors import ConfigError

__all__ = ["eks_pod_identity_trust", "irsa_trust", "studio_execution_policy"]


def irsa_trust(
    oidc_provider_arn: str, oidc_issuer_url: str, namespace: str, service_account: str
) -> str:
    """Trust-policy JSON letting one Kubernetes service account assume a role through IRSA.

    Pins both the subject (`system:serviceaccount:<namespace>:<service_account>`) and the
    audience (`sts.amazonaws.com`); raises ConfigError on malformed or mismatched inputs.
    For Output arguments: `Output.all(...).apply(lambda a: irsa_trust(*a))`.
    """
    problems = _irsa_problems(
        oidc_provider_arn,
        oidc_issuer_url,
        namespace,
        service_account,
        fields={
            "oidc_provider_arn": "oidc_provider_arn",
            "oidc_issuer_url": "oidc_issuer_url",
            "namespace": "namespace",
            "service_account": "service_account",
        },
    )
    if problems:
        raise ConfigError(problems)
    issuer = oidc_issuer_url.removeprefix("https://").rstrip("/")
    return policy_document(
        {
            "Sid": "KubernetesServiceAccount",
            "Effect": "Allow",
            "Principal": {"Federated": oidc_provider_arn},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {
                "StringEquals": {
                    f"{issuer}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                    f"{issuer}:aud": STS_AUDIENCE,
                }
            },
        }
    )


def _pod_identity_statement(
    namespace: str | None, service_account: str | None, cluster_name: str | None
) -> dict[str, Any]:
    statement: dict[str, Any] = {
        "Sid": "EksPodIdentity",
        "Effect": "Allow",
        "Principal": {"Service": EKS_PODS},
        # TagSession: Pod Identity passes the cluster, namespace and service account as
        # session tags, which the conditions below match.
        "Action": ["sts:AssumeRole", "sts:TagSession"],
    }
    pins = {
        "aws:RequestTag/eks-cluster-name": cluster_name,
        "aws:RequestTag/kubernetes-namespace": namespace,
        "aws:RequestTag/kubernetes-service-account": service_account,
    }
    pinned = {key: value for key, value in pins.items() if value}
    if pinned:
        statement["Condition"] = {"StringEquals": pinned}
    return statement


def eks_pod_identity_trust(
    *,
    namespace: str | None = None,
    service_account: str | None = None,
    cluster_name: str | None = None,
) -> str:
    """Trust-policy JSON for EKS Pod Identity (`pods.eks.amazonaws.com`).

    Without arguments, any Pod Identity association in the account may use the role (only
    principals allowed iam:PassRole on it can create one). Naming the namespace, service
    account and cluster pins it further through the session tags Pod Identity sets.
    """
    return policy_document(_pod_identity_statement(namespace, service_account, cluster_name))


def _github_actions_statement(provider_arn: Any, github: GithubOidc) -> dict[str, Any]:
    """The trust statement for GitHub Actions: audience and subjects pinned, no wildcards."""
    return {
        "Sid": "GithubActions",
        "Effect": "Allow",
        "Principal": {"Federated": provider_arn},
        "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {
            # StringEquals rather than StringLike: the subjects hold no wildcards, so an
            # accidental '*' in a branch name can never widen the match.
            "StringEquals": {
                f"{GITHUB_ISSUER}:aud": STS_AUDIENCE,
                f"{GITHUB_ISSUER}:sub": github.subjects(),
            }
        },
    }


def _service_statements(
    services: Sequence[str], account_id: Any, *, conditioned: bool
) -> list[dict[str, Any]]:
    statements = []
    for service in services:
        statement: dict[str, Any] = {
            # "ecs-tasks.amazonaws.com" -> "TrustEcsTasks"
            "Sid": "Trust" + service.split(".")[0].title().replace("-", ""),
            "Effect": "Allow",
            "Principal": {"Service": service},
            "Action": "sts:AssumeRole",
        }
        if conditioned and service in SOURCE_ACCOUNT_SERVICES:
            statement["Condition"] = {"StringEquals": {"aws:SourceAccount": account_id}}
        statements.append(statement)
    return statements


def studio_execution_policy(
    partition: pulumi.Input[str],
    account_id: pulumi.Input[str],
    region: str,
    domain_id: pulumi.Input[str],
    instance_types: Sequence[str],
) -> pulumi.Output[str]:
    """What a Studio domain's execution role needs: each user's own spaces and apps, in one
    domain of one region, on the allowed instance types only.

    Follows the SageMaker developer guide's policy for private spaces ("Give your users
    access to private spaces"), pinned further: every ARN names `region` and `domain_id`
    (`space/<domain>/*`, `app/<domain>/*`), never `*`; a private space and its apps are
    managed only by their owner, `user-profile/<domain>/${aws:SourceIdentity}` (the domain
    sets the user profile name as the execution role's source identity,
    ExecutionRoleIdentityConfig USER_PROFILE_NAME); CreateApp takes only `instance_types`
    (`sagemaker:InstanceTypes`); ListTags is limited to this domain's resources. Only
    ListSpaces and ListApps, which support no resource-level permissions, take `*`.
    `aws.Notebook` attaches it to its execution role.
    """

    def arn(*resource: pulumi.Input[str]) -> pulumi.Output[str]:
        return pulumi.Output.concat(
            "arn:", partition, ":sagemaker:", region, ":", account_id, ":", *resource
        )

    spaces = arn("space/", domain_id, "/*")
    apps = arn("app/", domain_id, "/*")
    profiles = arn("user-profile/", domain_id, "/*")
    # IAM substitutes the policy variable at request time; "$" is not a Pulumi placeholder.
    own_profile = arn("user-profile/", domain_id, "/${aws:SourceIdentity}")
    in_domain = [arn("domain/", domain_id), profiles, spaces, apps]
    instance_types_allowed = {
        "ForAllValues:StringEquals": {"sagemaker:InstanceTypes": list(instance_types)}
    }
    # Apps in a private space are its owner's; apps in a shared space (no owner) anyone's in
    # the domain. Starting one takes an allowed instance type; stopping one does not.
    app_statements: list[dict[str, Any]] = []
    for where, ownership in (
        (
            "InOwnPrivateSpaces",
            {
                "ArnLike": {"sagemaker:OwnerUserProfileArn": own_profile},
                "StringEquals": {"sagemaker:SpaceSharingType": "Private"},
            },
        ),
        ("InSharedSpaces", {"Null": {"sagemaker:OwnerUserProfileArn": "true"}}),
    ):
        for sid, action, extra in (
            (f"Apps{where}", "sagemaker:CreateApp", instance_types_allowed),
            (f"StopApps{where}", "sagemaker:DeleteApp", {}),
        ):
            app_statements.append(
                {
                    "Sid": sid,
                    "Effect": "Allow",
                    "Action": action,
                    "Resource": apps,
                    "Condition": {**ownership, **extra},
                }
            )
    return policy_output(
        {
            "Sid": "DescribeThisDomain",
            "Effect": "Allow",
            "Action": [
                "sagemaker:DescribeDomain",
                "sagemaker:DescribeUserProfile",
                "sagemaker:DescribeSpace",
                "sagemaker:DescribeApp",
                "sagemaker:ListTags",
            ],
            "Resource": in_domain,
        },
        {
            "Sid": "ListForTheStudioUi",
            "Effect": "Allow",
            # ListSpaces and ListApps support no resource-level permissions: AWS requires "*".
            "Action": ["sagemaker:ListSpaces", "sagemaker:ListApps"],
            "Resource": "*",
        },
        {
            "Sid": "OwnSpaces",
            "Effect": "Allow",
            "Action": ["sagemaker:CreateSpace", "sagemaker:UpdateSpace", "sagemaker:DeleteSpace"],
            "Resource": spaces,
            "Condition": {
                "ArnLike": {"sagemaker:OwnerUserProfileArn": own_profile},
                "StringEquals": {"sagemaker:SpaceSharingType": ["Private", "Shared"]},
            },
        },
        *app_statements,
        {
            "Sid": "TagWhatStudioCreates",
            "Effect": "Allow",
            # Studio tags every space and app it creates; without this CreateSpace fails.
            "Action": "sagemaker:AddTags",
            "Resource": [spaces, apps],
            "Condition": {"Null": {"sagemaker:TaggingAction": "false"}},
        },
    )

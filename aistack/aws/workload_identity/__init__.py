"""`aws.WorkloadIdentity`: one IAM role per workload, so nothing runs on stored keys (C6).

`args` holds the arguments and their problems, `policies` the trust policies (and the
Studio execution policy), `component` the roles. docs/components/aws/workload-identity.md
says why.
"""

from aistack.aws.workload_identity.args import (
    CLOUDWATCH_AGENT_ACTIONS,
    DEFAULT_WORKLOADS,
    EC2,
    ECS_TASKS,
    EKS_PODS,
    GITHUB_ISSUER,
    GITHUB_URL,
    MANAGED_POLICIES,
    MAX_SESSION_SECONDS,
    MIN_SESSION_SECONDS,
    SAGEMAKER,
    SOURCE_ACCOUNT_SERVICES,
    STS_AUDIENCE,
    GithubOidc,
    KubernetesServiceAccount,
    Service,
    Workload,
    WorkloadIdentityArgs,
)
from aistack.aws.workload_identity.component import TOKEN, WorkloadIdentity
from aistack.aws.workload_identity.policies import (
    eks_pod_identity_trust,
    irsa_trust,
    studio_execution_policy,
)

__all__ = [
    "CLOUDWATCH_AGENT_ACTIONS",
    "DEFAULT_WORKLOADS",
    "EC2",
    "ECS_TASKS",
    "EKS_PODS",
    "GITHUB_ISSUER",
    "GITHUB_URL",
    "MANAGED_POLICIES",
    "MAX_SESSION_SECONDS",
    "MIN_SESSION_SECONDS",
    "SAGEMAKER",
    "SOURCE_ACCOUNT_SERVICES",
    "STS_AUDIENCE",
    "TOKEN",
    "GithubOidc",
    "KubernetesServiceAccount",
    "Service",
    "Workload",
    "WorkloadIdentity",
    "WorkloadIdentityArgs",
    "eks_pod_identity_trust",
    "irsa_trust",
    "studio_execution_policy",
]

"""The arguments of `aws.WorkloadIdentity`, and every problem they can have.

Which workloads get roles and who may assume them: services (`Workload`), Kubernetes service
accounts through EKS Pod Identity or IRSA (`KubernetesServiceAccount`) and GitHub Actions
(`GithubOidc`). `WorkloadIdentityArgs.parse` runs the cross-field checks too, each at its
exact field path, so one ConfigError names every bad field before anything is created.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from aistack import _github
from aistack.config import AistackModel, Governance
from aistack.errors import Problem, Problems

__all__ = [
    "CLOUDWATCH_AGENT_ACTIONS",
    "DEFAULT_WORKLOADS",
    "MANAGED_POLICIES",
    "GithubOidc",
    "KubernetesServiceAccount",
    "Workload",
    "WorkloadIdentityArgs",
]

EC2 = "ec2.amazonaws.com"
ECS_TASKS = "ecs-tasks.amazonaws.com"
SAGEMAKER = "sagemaker.amazonaws.com"
EKS_PODS = "pods.eks.amazonaws.com"
STS_AUDIENCE = "sts.amazonaws.com"
GITHUB_ISSUER = "token.actions.githubusercontent.com"
GITHUB_URL = f"https://{GITHUB_ISSUER}"

Service = Literal["ec2.amazonaws.com", "ecs-tasks.amazonaws.com", "sagemaker.amazonaws.com"]

#: Service principals that send `aws:SourceAccount` when they assume a role, so a trust
#: condition on it stops another account's job from borrowing the role (confused deputy).
#: EC2 is absent on purpose: instance-profile credentials are issued without that key, so the
#: condition would lock every instance out; for EC2 the guard is iam:PassRole, which cannot
#: cross accounts.
SOURCE_ACCOUNT_SERVICES = frozenset({ECS_TASKS, SAGEMAKER})

#: Every AWS-managed policy this component can attach, by the switch that attaches it. Each is
#: scoped to running the node, not to data, and goes on instance roles only;
#: docs/components/aws/workload-identity.md says why. CloudWatchAgentServerPolicy is not among
#: them: it allows logs:PutRetentionPolicy and logs:CreateLogGroup on every log group, so a
#: job could shorten the retention of the audit logs. The agent gets CLOUDWATCH_AGENT_ACTIONS
#: instead, and the component that owns a log group grants writing to it.
MANAGED_POLICIES: dict[str, str] = {
    "ssm": "AmazonSSMManagedInstanceCore",
    "ecs-instance": "service-role/AmazonEC2ContainerServiceforEC2Role",
}
#: What the CloudWatch agent itself needs beyond the log group and namespace it writes to:
#: reading the instance's tags for the AutoScalingGroupName dimension (append_dimensions).
#: ec2:DescribeTags supports no resource-level permissions, so its resource is "*".
CLOUDWATCH_AGENT_ACTIONS = ("ec2:DescribeTags",)

#: AWS accepts 1 to 12 hours for a role's maximum session.
MIN_SESSION_SECONDS = 3600
MAX_SESSION_SECONDS = 43200

# Pulumi appends "-" and 7 random characters to a logical name; IAM role names stop at 64.
_MAX_ROLE_LOGICAL_NAME = 64 - 8
_SLUG = r"^[a-z](?:[a-z0-9-]{0,30}[a-z0-9])?$"
_K8S_LABEL = r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$"
_K8S_SUBDOMAIN = r"^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$"
_GITHUB_PROVIDER_ARN = re.compile(
    r"^arn:aws[a-z-]*:iam::\d{12}:oidc-provider/" + re.escape(GITHUB_ISSUER) + "$"
)
_OIDC_PROVIDER_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:oidc-provider/(?P<issuer>\S+)$")
_POLICY_ARN = re.compile(r"^arn:aws[a-z-]*:iam::(?:\d{12}|aws):policy/\S+$")
_ROLE_PATH = r"^/(?:[\w+=,.@-]+/)*$"
_RESERVED_NAMES = frozenset({"ci"})


class Workload(AistackModel):
    """One role, trusted by the services that run one kind of work."""

    name: str = Field(
        pattern=_SLUG,
        description="The workload: a lowercase DNS-style slug (e.g. 'training'), unique in the "
        "component. Becomes the role's name and its aistack:workload tag, which the budget "
        "kill switch acts on.",
    )
    services: tuple[Service, ...] = Field(
        description="Service principals that may assume the role: ec2.amazonaws.com "
        "(instances, including Batch compute environments; gets an instance profile), "
        "ecs-tasks.amazonaws.com (Batch job containers), sagemaker.amazonaws.com (notebooks). "
        "Not ec2 and ecs-tasks together: a job would run with the instance role.",
    )
    session_manager: bool = Field(
        True,
        description="EC2-trusted roles only: attach AmazonSSMManagedInstanceCore so operators "
        "reach instances through Session Manager instead of SSH keys (C6). Default on.",
    )
    cloudwatch_agent: bool = Field(
        True,
        description="EC2-trusted roles only: an inline policy with what the node's CloudWatch "
        "agent needs beyond its log group and namespace (ec2:DescribeTags, for the "
        "AutoScalingGroupName dimension). Writing logs and metrics is granted by the "
        "component that owns the group and namespace (T3, T6). Default on.",
    )
    batch_instance_role: bool = Field(
        False,
        description="EC2-trusted roles only: attach AmazonEC2ContainerServiceforEC2Role, which "
        "AWS Batch instances need to join their ECS cluster. Default off; on for the default "
        "'training' workload.",
    )
    allow_unconditioned_trust: bool = Field(
        False,
        description="Drop the aws:SourceAccount condition from the trust of ecs-tasks and "
        "SageMaker. Off: only this account's tasks and notebooks can assume the role. Turn on "
        "only for a feature that does not send the key.",
    )
    description: str = Field("", max_length=900, description="Added to the role's description.")

    @field_validator("services")
    @classmethod
    def _some_service(cls, services: tuple[str, ...]) -> tuple[str, ...]:
        # Checked here rather than with min_length, which would also fire when an entry is
        # merely misspelt.
        if not services:
            raise ValueError(
                "a role nobody can assume is dead weight. Fix: list the service principals "
                "that run this workload."
            )
        return services

    @property
    def trusts_ec2(self) -> bool:
        return EC2 in self.services

    def managed_policies(self) -> list[str]:
        """Keys into MANAGED_POLICIES this workload's role gets (EC2-trusted roles only)."""
        if not self.trusts_ec2:
            return []
        wanted = {"ssm": self.session_manager, "ecs-instance": self.batch_instance_role}
        return [key for key, on in wanted.items() if on]


#: Training runs on EC2 (ASG nodes and Batch hosts: the instance role) and in Batch job
#: containers (`training-job`, its own role); inference on EC2; notebooks on SageMaker.
DEFAULT_WORKLOADS: tuple[Workload, ...] = (
    Workload(name="training", services=(EC2,), batch_instance_role=True),
    Workload(name="training-job", services=(ECS_TASKS,)),
    Workload(name="inference", services=(EC2,)),
    Workload(name="notebook", services=(SAGEMAKER,)),
)


class GithubOidc(_github.GithubRepoRef):
    """A CI role GitHub Actions can assume for one repository's branches and environments."""

    repository: str = Field(
        description="'owner/name' of the one repository whose workflows may assume the role. "
        "No wildcards: 'org/*' would hand the role to every repository in the organisation."
    )
    branches: tuple[str, ...] = Field(
        (),
        description="Branch names (e.g. 'main') whose workflow runs may assume the role; "
        "matched as sub 'repo:<repository>:ref:refs/heads/<branch>'. No wildcards.",
    )
    environments: tuple[str, ...] = Field(
        (),
        description="GitHub environments (e.g. 'prod') whose jobs may assume the role; matched "
        "as sub 'repo:<repository>:environment:<env>'. A job that names an environment gets "
        "this subject instead of the branch one. No wildcards.",
    )
    create_provider: bool = Field(
        True,
        description="Create the account's GitHub OIDC identity provider. An account holds one "
        "per URL: in a second stack set providerArn instead.",
    )
    provider_arn: str | None = Field(
        None,
        description="ARN of an existing token.actions.githubusercontent.com provider; when set "
        "no provider is created.",
    )


class KubernetesServiceAccount(AistackModel):
    """A workload role for one Kubernetes service account, via EKS Pod Identity or IRSA."""

    name: str = Field(
        pattern=_SLUG,
        description="The workload (role) name, a slug unique among all workloads.",
    )
    namespace: str = Field(pattern=_K8S_LABEL, description="Namespace of the service account.")
    service_account: str = Field(pattern=_K8S_SUBDOMAIN, description="Name of the service account.")
    mechanism: Literal["pod-identity", "irsa"] = Field(
        "pod-identity",
        description="'pod-identity' (default: EKS Pod Identity; no per-cluster OIDC provider "
        "to manage) or 'irsa' (IAM roles for service accounts, for clusters without the Pod "
        "Identity agent).",
    )
    cluster_name: str | None = Field(
        None,
        pattern=r"^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$",
        description="pod-identity: pins the trust to this cluster's session tag and, with "
        "region, creates the Pod Identity association.",
    )
    region: str | None = Field(
        None,
        description="pod-identity: the cluster's region, where the association is created; "
        "must be in governance.allowedRegions (C4).",
    )
    oidc_provider_arn: str | None = Field(
        None, description="irsa: ARN of the cluster's IAM OIDC provider. Required for irsa."
    )
    oidc_issuer_url: str | None = Field(
        None,
        description="irsa: the cluster's OIDC issuer URL (https://oidc.eks.<region>."
        "amazonaws.com/id/<id>). Required for irsa.",
    )


class WorkloadIdentityArgs(AistackModel):
    """Which workloads get roles, who else may assume roles (Kubernetes, CI), and limits."""

    governance: Governance = Field(
        description="Owner, cost centre and allowed regions; required. Tags every role and "
        "profile, and bounds where Pod Identity associations may be created (C4)."
    )
    workloads: tuple[Workload, ...] = Field(
        DEFAULT_WORKLOADS,
        description="The roles to create, one per workload. Default: training (EC2: ASG "
        "nodes and Batch hosts), training-job (ecs-tasks: Batch job containers), inference "
        "(EC2), notebook (SageMaker).",
    )
    kubernetes_service_accounts: tuple[KubernetesServiceAccount, ...] = Field(
        (),
        description="Extra workload roles for Kubernetes service accounts (Pod Identity or "
        "IRSA). Default: none.",
    )
    github: GithubOidc | None = Field(
        None,
        description="A CI role for GitHub Actions via OIDC, with no permissions until the "
        "caller grants them. Default: none.",
    )
    max_session_duration: int = Field(
        MIN_SESSION_SECONDS,
        ge=MIN_SESSION_SECONDS,
        le=MAX_SESSION_SECONDS,
        description="Longest session, in seconds, a role's credentials last (AWS allows "
        "3600-43200). Default 3600: services refresh credentials before they expire; raise it "
        "only for CI runs of `pulumi up` longer than an hour.",
    )
    role_path: str = Field(
        "/",
        pattern=_ROLE_PATH,
        description="IAM path of the roles and instance profiles. Default '/': some "
        "consumers (EKS aws-auth mappings) mishandle paths.",
    )
    permissions_boundary_arn: str | None = Field(
        None,
        description="Managed policy set as every role's permissions boundary, when the "
        "organisation requires one. Default: none.",
    )

    @field_validator("permissions_boundary_arn")
    @classmethod
    def _boundary_is_a_policy(cls, arn: str | None) -> str | None:
        if arn is not None and not _POLICY_ARN.fullmatch(arn):
            raise ValueError(
                f"{arn!r} is not a managed policy ARN. Fix: use "
                "'arn:aws:iam::<account>:policy/<name>'."
            )
        return arn

    @classmethod
    def parse(cls, data: Any, *, where: str = "") -> WorkloadIdentityArgs:
        args = super().parse(data, where=where)
        problems = args.problems(where)
        problems.raise_if_any()
        return args

    def all_workload_names(self) -> list[str]:
        return [w.name for w in self.workloads] + [k.name for k in self.kubernetes_service_accounts]

    def problems(self, where: str) -> Problems:
        """Cross-field problems, each at its exact field path under `where`.

        `where` is the component's name when a component parses its arguments, so role
        names (`<where>-<workload>`) are checked against IAM's length limit too.
        """
        problems = Problems()

        def at(*path: str | int) -> str:
            return ".".join(str(p) for p in (where, *path) if p != "")

        seen: dict[str, str] = {}
        named: list[tuple[str, str]] = [
            (w.name, at("workloads", i, "name")) for i, w in enumerate(self.workloads)
        ] + [
            (k.name, at("kubernetesServiceAccounts", i, "name"))
            for i, k in enumerate(self.kubernetes_service_accounts)
        ]
        for workload, path in named:
            if workload in _RESERVED_NAMES:
                problems.add(
                    path,
                    f"{workload!r} is reserved for the GitHub Actions CI role.",
                    "choose another workload name.",
                )
            if workload in seen:
                problems.add(
                    path,
                    f"workload {workload!r} is also defined at {seen[workload]}; each workload "
                    "gets exactly one role.",
                    "give every workload a unique name.",
                )
            seen.setdefault(workload, path)
            if where and len(f"{where}-{workload}") > _MAX_ROLE_LOGICAL_NAME:
                problems.add(
                    path,
                    f"role name '{where}-{workload}' plus Pulumi's 8-character suffix exceeds "
                    "IAM's 64-character limit.",
                    "shorten the component name or the workload name to at most "
                    f"{_MAX_ROLE_LOGICAL_NAME} characters together (including the '-').",
                )

        for i, spec in enumerate(self.workloads):
            if len(set(spec.services)) != len(spec.services):
                problems.add(
                    at("workloads", i, "services"),
                    "a service is listed twice.",
                    "list each service principal once.",
                )
            if spec.trusts_ec2 and ECS_TASKS in spec.services:
                problems.add(
                    at("workloads", i, "services"),
                    f"one role trusted by both {EC2} and {ECS_TASKS} makes a Batch job run "
                    "with the instance role and its ECS and SSM managed policies (every ECR "
                    "repository, every SSM parameter).",
                    f"make two workloads: one trusted by {EC2} (the instance role, e.g. "
                    f"'training') and one by {ECS_TASKS} (the job role, e.g. 'training-job').",
                )
            if not spec.trusts_ec2:
                for field, alias in (
                    ("session_manager", "sessionManager"),
                    ("cloudwatch_agent", "cloudwatchAgent"),
                    ("batch_instance_role", "batchInstanceRole"),
                ):
                    if field in spec.model_fields_set and getattr(spec, field):
                        problems.add(
                            at("workloads", i, alias),
                            f"{alias} attaches an EC2 instance policy, but workload "
                            f"{spec.name!r} is not trusted by {EC2}.",
                            f"remove {alias}, or add {EC2} to services.",
                        )
            if spec.allow_unconditioned_trust and not (
                SOURCE_ACCOUNT_SERVICES & set(spec.services)
            ):
                problems.add(
                    at("workloads", i, "allowUnconditionedTrust"),
                    "none of this workload's services carries an aws:SourceAccount condition.",
                    "remove allowUnconditionedTrust.",
                )

        for i, account in enumerate(self.kubernetes_service_accounts):
            problems.items.extend(
                self._kubernetes_problems(account, at("kubernetesServiceAccounts", i))
            )

        if self.github is not None:
            github = self.github
            if not github.branches and not github.environments:
                problems.add(
                    at("github", "branches"),
                    "the CI role would trust no workflow: neither branches nor environments "
                    "are listed.",
                    "list the protected branches (e.g. ['main']) and/or GitHub environments "
                    "(e.g. ['prod']) allowed to deploy.",
                )
            if github.provider_arn is not None:
                if not _GITHUB_PROVIDER_ARN.fullmatch(github.provider_arn):
                    problems.add(
                        at("github", "providerArn"),
                        f"{github.provider_arn!r} is not the ARN of a GitHub Actions OIDC "
                        "provider.",
                        "use 'arn:aws:iam::<account>:oidc-provider/"
                        "token.actions.githubusercontent.com'.",
                    )
                if "create_provider" in github.model_fields_set and github.create_provider:
                    problems.add(
                        at("github", "createProvider"),
                        "createProvider is true but providerArn names an existing provider.",
                        "drop createProvider to reuse the existing provider, or drop "
                        "providerArn to create one.",
                    )
            elif not github.create_provider:
                problems.add(
                    at("github", "providerArn"),
                    "createProvider is false, so the role needs an existing provider.",
                    "set providerArn to the account's token.actions.githubusercontent.com "
                    "provider, or set createProvider: true.",
                )
        return problems

    def _kubernetes_problems(self, account: KubernetesServiceAccount, prefix: str) -> list[Problem]:
        def at(field: str) -> str:
            return f"{prefix}.{field}"

        problems: list[Problem] = []
        if account.mechanism == "irsa":
            for field, alias in (("cluster_name", "clusterName"), ("region", "region")):
                if getattr(account, field) is not None:
                    problems.append(
                        Problem(
                            at(alias),
                            f"{alias} is for pod-identity; IRSA binds the role through the "
                            "service account's eks.amazonaws.com/role-arn annotation.",
                            f"remove {alias}, or use mechanism: pod-identity.",
                        )
                    )
            for field, alias in (
                ("oidc_provider_arn", "oidcProviderArn"),
                ("oidc_issuer_url", "oidcIssuerUrl"),
            ):
                if not getattr(account, field):
                    problems.append(
                        Problem(
                            at(alias),
                            "IRSA needs the cluster's OIDC provider ARN and issuer URL.",
                            f"set {alias} (from the EKS cluster's identity.oidc).",
                        )
                    )
            eks_region = re.match(
                r"^https://oidc\.eks\.([a-z0-9-]+)\.", account.oidc_issuer_url or ""
            )
            if eks_region:
                region_problem = self.governance.region_problem(
                    eks_region.group(1), at("oidcIssuerUrl")
                )
                if region_problem:
                    problems.append(region_problem)
            if account.oidc_provider_arn and account.oidc_issuer_url:
                problems += _irsa_problems(
                    account.oidc_provider_arn,
                    account.oidc_issuer_url,
                    account.namespace,
                    account.service_account,
                    fields={
                        "oidc_provider_arn": at("oidcProviderArn"),
                        "oidc_issuer_url": at("oidcIssuerUrl"),
                        "namespace": at("namespace"),
                        "service_account": at("serviceAccount"),
                    },
                )
            return problems
        for field, alias in (
            ("oidc_provider_arn", "oidcProviderArn"),
            ("oidc_issuer_url", "oidcIssuerUrl"),
        ):
            if getattr(account, field) is not None:
                problems.append(
                    Problem(
                        at(alias),
                        f"{alias} is for irsa; Pod Identity needs no OIDC provider.",
                        f"remove {alias}, or use mechanism: irsa.",
                    )
                )
        if account.region is not None:
            if account.cluster_name is None:
                problems.append(
                    Problem(
                        at("region"),
                        "region only places the Pod Identity association, which needs clusterName.",
                        "set clusterName, or remove region.",
                    )
                )
            region_problem = self.governance.region_problem(account.region, at("region"))
            if region_problem:
                problems.append(region_problem)
        return problems


def _irsa_problems(
    oidc_provider_arn: str,
    oidc_issuer_url: str,
    namespace: str,
    service_account: str,
    *,
    fields: dict[str, str],
) -> list[Problem]:
    problems = []
    match = _OIDC_PROVIDER_ARN.fullmatch(oidc_provider_arn)
    issuer = oidc_issuer_url.removeprefix("https://").rstrip("/")
    if not match:
        problems.append(
            Problem(
                fields["oidc_provider_arn"],
                f"{oidc_provider_arn!r} is not an IAM OIDC provider ARN.",
                "use 'arn:aws:iam::<account>:oidc-provider/oidc.eks.<region>.amazonaws.com/"
                "id/<id>'.",
            )
        )
    if not oidc_issuer_url.startswith("https://") or not issuer or _github.has_wildcard(issuer):
        problems.append(
            Problem(
                fields["oidc_issuer_url"],
                f"{oidc_issuer_url!r} is not an https OIDC issuer URL.",
                "use the cluster's identity.oidc.issuer, e.g. "
                "'https://oidc.eks.us-east-1.amazonaws.com/id/EXAMPLE'.",
            )
        )
    elif match and match.group("issuer") != issuer:
        problems.append(
            Problem(
                fields["oidc_provider_arn"],
                f"the provider is for {match.group('issuer')!r} but the issuer is {issuer!r}; "
                "tokens from this issuer would never match.",
                "use the provider and issuer of the same cluster.",
            )
        )
    if not re.fullmatch(_K8S_LABEL, namespace):
        problems.append(
            Problem(
                fields["namespace"],
                f"{namespace!r} is not a Kubernetes namespace name.",
                "use lowercase letters, digits and '-'; no wildcards.",
            )
        )
    if not re.fullmatch(_K8S_SUBDOMAIN, service_account):
        problems.append(
            Problem(
                fields["service_account"],
                f"{service_account!r} is not a Kubernetes service account name.",
                "use lowercase letters, digits, '-' and '.'; no wildcards.",
            )
        )
    return problems

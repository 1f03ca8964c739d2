"""`aws.WorkloadIdentity`: one IAM role per workload, so nothing runs on stored keys (C6).

Training instances, inference hosts, notebooks, Batch containers, Kubernetes pods and the
deploy pipeline each get a role that only the service running them can assume, and so get
short-lived credentials from that service. No IAM user, access key or password is created,
and the roles start with nothing but the few AWS-managed policies a GPU node needs to be
reachable without SSH (Session Manager) and, for Batch, to join its ECS cluster, plus a small
inline policy for the CloudWatch agent. Everything else is granted deliberately by the
components that own the data, the log groups and the metric namespaces (e.g.
`DatasetBucket.grant_read(identity.role("training"))`).

An AWS Batch job runs as its own role (`training-job`, trusted only by ecs-tasks), never as
the instance role: the instance role carries the ECS and SSM managed policies (every ECR
repository, every SSM parameter), which user training code must not hold.

Kubernetes workloads get roles trusted through EKS Pod Identity or IRSA, and CI gets a role
trusted through GitHub Actions OIDC, pinned to one repository's branches and environments.
Why each choice: docs/components/aws/workload-identity.md.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws

from aistack.aws._base import child_opts, policy_document, policy_output, tags_for
from aistack.aws.workload_identity.args import (
    CLOUDWATCH_AGENT_ACTIONS,
    EC2,
    GITHUB_URL,
    MANAGED_POLICIES,
    STS_AUDIENCE,
    KubernetesServiceAccount,
    Workload,
    WorkloadIdentityArgs,
)
from aistack.aws.workload_identity.policies import (
    _github_actions_statement,
    _pod_identity_statement,
    _service_statements,
    irsa_trust,
)
from aistack.errors import ConfigError

__all__ = ["TOKEN", "WorkloadIdentity"]

TOKEN = "aistack:index:AwsWorkloadIdentity"


class WorkloadIdentity(pulumi.ComponentResource):
    """IAM roles per workload, instance profiles for EC2, an optional GitHub Actions CI role."""

    roles: dict[str, aws.iam.Role]
    role_arns: dict[str, pulumi.Output[str]]
    instance_profiles: dict[str, aws.iam.InstanceProfile]
    instance_profile_arns: dict[str, pulumi.Output[str]]
    instance_profile_names: dict[str, pulumi.Output[str]]
    policy_attachments: dict[str, list[pulumi.CustomResource]]
    pod_identity_associations: dict[str, aws.eks.PodIdentityAssociation]
    github_provider: aws.iam.OpenIdConnectProvider | None
    github_provider_arn: pulumi.Output[str] | None
    ci_role: aws.iam.Role | None
    ci_role_arn: pulumi.Output[str] | None

    def __init__(
        self,
        name: str,
        args: WorkloadIdentityArgs | dict,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        # Parsing also runs the cross-field checks; `where=name` makes it check role-name
        # lengths against this component's name.
        args = WorkloadIdentityArgs.parse(args, where=name)
        super().__init__(
            TOKEN,
            name,
            {
                "workloads": args.all_workload_names(),
                "ci": args.github.repository if args.github else None,
            },
            opts,
        )
        self.args = args
        self._name = name
        invoke = pulumi.InvokeOptions(parent=self)
        account_id = aws.get_caller_identity_output(opts=invoke).account_id
        partition = aws.get_partition_output(opts=invoke).partition

        self.roles = {}
        self.instance_profiles = {}
        self.policy_attachments = {}
        self.pod_identity_associations = {}
        # Service roles first, then Kubernetes roles, then CI: the order of the roles map.
        for workload in args.workloads:
            self._service_role(workload, account_id, partition)
        for account in args.kubernetes_service_accounts:
            self._kubernetes_role(account)
        self._ci_role()
        self._outputs()

    # ---- the steps -------------------------------------------------------------------------

    def _service_role(
        self, workload: Workload, account_id: pulumi.Output[str], partition: pulumi.Output[str]
    ) -> None:
        """A role trusted by the workload's services, with the node policies an EC2 role
        needs, and its instance profile."""
        name, here = self._name, child_opts(self)
        role = self._role(
            workload.name,
            policy_output(
                *_service_statements(
                    workload.services,
                    account_id,
                    conditioned=not workload.allow_unconditioned_trust,
                )
            ),
            f"aistack {workload.name} workload ({', '.join(workload.services)})"
            + (f": {workload.description}" if workload.description else ""),
        )
        self.policy_attachments[workload.name] = [
            aws.iam.RolePolicyAttachment(
                f"{name}-{workload.name}-{key}",
                role=role.name,
                policy_arn=pulumi.Output.concat(
                    "arn:", partition, ":iam::aws:policy/", MANAGED_POLICIES[key]
                ),
                opts=here,
            )
            for key in workload.managed_policies()
        ]
        if workload.trusts_ec2 and workload.cloudwatch_agent:
            self.policy_attachments[workload.name].append(
                aws.iam.RolePolicy(
                    f"{name}-{workload.name}-cloudwatch-agent",
                    role=role.id,
                    policy=policy_output(
                        {
                            "Sid": "AgentReadsInstanceTags",
                            "Effect": "Allow",
                            "Action": list(CLOUDWATCH_AGENT_ACTIONS),
                            "Resource": "*",
                        }
                    ),
                    opts=here,
                )
            )
        if workload.trusts_ec2:
            # EC2 takes a role only through an instance profile; nothing else gets one.
            self.instance_profiles[workload.name] = aws.iam.InstanceProfile(
                f"{name}-{workload.name}-profile",
                role=role.name,
                path=self.args.role_path,
                tags=tags_for(self.args.governance, workload=workload.name),
                opts=here,
            )

    def _kubernetes_role(self, account: KubernetesServiceAccount) -> None:
        """A role one Kubernetes service account assumes (IRSA or Pod Identity), and its
        Pod Identity association when the cluster and region are known."""
        if account.mechanism == "irsa":
            trust: Any = irsa_trust(
                account.oidc_provider_arn or "",
                account.oidc_issuer_url or "",
                account.namespace,
                account.service_account,
            )
        else:
            trust = policy_document(
                _pod_identity_statement(
                    account.namespace, account.service_account, account.cluster_name
                )
            )
        role = self._role(
            account.name,
            trust,
            f"aistack {account.name} workload (Kubernetes "
            f"{account.namespace}/{account.service_account}, {account.mechanism})",
        )
        self.policy_attachments[account.name] = []
        if account.mechanism == "pod-identity" and account.cluster_name and account.region:
            self.pod_identity_associations[account.name] = aws.eks.PodIdentityAssociation(
                f"{self._name}-{account.name}-pod-identity",
                cluster_name=account.cluster_name,
                namespace=account.namespace,
                service_account=account.service_account,
                role_arn=role.arn,
                region=account.region,
                tags=tags_for(self.args.governance, workload=account.name),
                opts=child_opts(self),
            )

    def _ci_role(self) -> None:
        """With `github`: the CI role GitHub Actions assumes, and the account's OIDC
        provider unless an existing one is named."""
        args, name, here = self.args, self._name, child_opts(self)
        self.github_provider = None
        self.github_provider_arn = None
        self.ci_role = None
        self.ci_role_arn = None
        if args.github is None:
            return
        github = args.github
        if github.provider_arn:
            self.github_provider_arn = pulumi.Output.from_input(github.provider_arn)
        else:
            # No thumbprint_lists: for GitHub, IAM validates the issuer against its own
            # trusted CA library and ignores thumbprints; the 7.x SDK makes them optional.
            self.github_provider = aws.iam.OpenIdConnectProvider(
                f"{name}-github-oidc",
                url=GITHUB_URL,
                client_id_lists=[STS_AUDIENCE],
                tags=tags_for(args.governance, workload="ci"),
                opts=here,
            )
            self.github_provider_arn = self.github_provider.arn
        # No policies: what CI may change is the caller's decision, granted deliberately.
        self.ci_role = aws.iam.Role(
            f"{name}-ci",
            assume_role_policy=policy_output(
                _github_actions_statement(self.github_provider_arn, github)
            ),
            description=f"aistack CI: GitHub Actions in {github.repository} "
            "(no permissions unless granted)",
            max_session_duration=args.max_session_duration,
            path=args.role_path,
            permissions_boundary=args.permissions_boundary_arn,
            tags=tags_for(args.governance, workload="ci"),
            opts=here,
        )
        self.ci_role_arn = self.ci_role.arn

    def _outputs(self) -> None:
        self.role_arns = {key: role.arn for key, role in self.roles.items()}
        self.instance_profile_arns = {k: p.arn for k, p in self.instance_profiles.items()}
        self.instance_profile_names = {k: p.name for k, p in self.instance_profiles.items()}
        self.register_outputs(
            {
                "role_arns": self.role_arns,
                "instance_profile_arns": self.instance_profile_arns,
                "instance_profile_names": self.instance_profile_names,
                "ci_role_arn": self.ci_role_arn,
                "github_provider_arn": self.github_provider_arn,
            }
        )

    def _role(self, workload: str, trust: Any, description: str) -> aws.iam.Role:
        role = aws.iam.Role(
            f"{self._name}-{workload}",
            assume_role_policy=trust,
            description=description[:1000],
            max_session_duration=self.args.max_session_duration,
            path=self.args.role_path,
            permissions_boundary=self.args.permissions_boundary_arn,
            tags=tags_for(self.args.governance, workload=workload),
            opts=child_opts(self),
        )
        self.roles[workload] = role
        return role

    # ---- lookups ---------------------------------------------------------------------------

    @property
    def workloads(self) -> tuple[str, ...]:
        return tuple(self.roles)

    def role(self, workload: str) -> aws.iam.Role:
        """The role of `workload`; ConfigError naming the known workloads otherwise."""
        if workload not in self.roles:
            raise ConfigError(
                f"no workload {workload!r} in WorkloadIdentity {self._name!r}",
                field=f"{self._name}.workloads",
                fix=f"use one of {sorted(self.roles)}, or add the workload.",
            )
        return self.roles[workload]

    def role_arn(self, workload: str) -> pulumi.Output[str]:
        return self.role(workload).arn

    def instance_profile(self, workload: str) -> aws.iam.InstanceProfile:
        """The instance profile of an EC2-trusted workload."""
        self.role(workload)
        if workload not in self.instance_profiles:
            raise ConfigError(
                f"workload {workload!r} has no instance profile: its role is not trusted by {EC2}",
                field=f"{self._name}.workloads",
                fix=f"use one of {sorted(self.instance_profiles)}, or add {EC2} to the "
                "workload's services.",
            )
        return self.instance_profiles[workload]

"""The flow logs of `aws.Network`'s VPC: the audit trail of who talked to whom.

Every flow goes to a CloudWatch log group kept on `pulumi destroy` (protected in prod)
with bounded retention, encrypted with a key of its own that only this network's flow-log
groups may use; the delivery role is trusted only by this account's flow logs.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from aistack.aws import _perms
from aistack.aws._base import child_opts, policy_output, stack_id, stateful_opts
from aistack.aws._kms import customer_key
from aistack.aws.network.args import NetworkArgs

__all__ = ["FlowLogs", "flow_logs"]


@dataclass(frozen=True)
class FlowLogs:
    """The key, the log group, the delivery role and the flow log."""

    key: aws.kms.Key
    group: aws.cloudwatch.LogGroup
    role: aws.iam.Role
    flow_log: aws.ec2.FlowLog


def flow_logs(
    network: pulumi.Resource,
    name: str,
    args: NetworkArgs,
    *,
    vpc: aws.ec2.Vpc,
    tags: dict[str, str],
    flow_log_tags: dict[str, str],
) -> FlowLogs:
    """Every flow of `vpc`, into a log group kept on `pulumi destroy` (protected in prod),
    encrypted with its own key; `tags` go on the key, group and role, `flow_log_tags` on
    the flow log."""
    region = args.region
    governance = args.governance
    retained = stateful_opts(network, governance, allow_destroy=args.allow_destroy_flow_logs)
    account = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=network))
    partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=network))
    account_id, arn_partition = account.account_id, partition.partition
    # The service domain differs by partition too (amazonaws.com.cn in aws-cn).
    logs_principal = pulumi.Output.format("logs.{0}.{1}", region, partition.dns_suffix)

    def arn(service: str, resource: str, *, regional: bool = True) -> pulumi.Output[str]:
        where = region if regional else ""
        return pulumi.Output.format(
            "arn:{0}:{1}:{2}:{3}:{4}", arn_partition, service, where, account_id, resource
        )

    # A prefix, not a fixed name: the group is kept on `pulumi destroy`, and a fixed name
    # would make the next `pulumi up` fail with ResourceAlreadyExistsException. The key
    # policy exists before the group, so it names the prefix.
    log_group_prefix = f"/aistack/{stack_id()}/{name}/vpc-flow-logs-"
    log_group_arns = arn("logs", f"log-group:{log_group_prefix}*")
    key_policy = policy_output(
        {
            # AWS's default key policy statement: without it IAM cannot govern the key
            # at all, and KMS refuses a policy that would lock the account out.
            "Sid": "AccountAdministersKey",
            "Effect": "Allow",
            "Principal": {"AWS": arn("iam", "root", regional=False)},
            "Action": "kms:*",
            "Resource": "*",
        },
        {
            "Sid": "CloudWatchLogsUseForFlowLogGroup",
            "Effect": "Allow",
            "Principal": {"Service": logs_principal},
            "Action": [
                "kms:Encrypt",
                "kms:Decrypt",
                "kms:ReEncryptFrom",
                "kms:ReEncryptTo",
                "kms:GenerateDataKey",
                "kms:GenerateDataKeyWithoutPlaintext",
                "kms:DescribeKey",
            ],
            # In a key policy "*" means this key; the condition narrows it to the
            # flow-log groups of this network.
            "Resource": "*",
            "Condition": {"ArnLike": {"kms:EncryptionContext:aws:logs:arn": log_group_arns}},
        },
    )
    key = customer_key(
        f"{name}-flow-log-key",
        description=f"aistack {name}: VPC flow logs",
        policy=key_policy,
        region=region,
        tags=tags,
        opts=retained,
    )
    group = aws.cloudwatch.LogGroup(
        f"{name}-flow-logs",
        name_prefix=log_group_prefix,
        retention_in_days=args.flow_log_retention_days,
        kms_key_id=key.arn,
        skip_destroy=not args.allow_destroy_flow_logs,
        region=region,
        tags=tags,
        opts=stateful_opts(
            network,
            governance,
            allow_destroy=args.allow_destroy_flow_logs,
            depends_on=[key],
        ),
    )
    trust = policy_output(
        {
            "Effect": "Allow",
            "Principal": {"Service": "vpc-flow-logs.amazonaws.com"},
            "Action": "sts:AssumeRole",
            # Only flow logs of this account may use the role (confused deputy).
            "Condition": {
                "StringEquals": {"aws:SourceAccount": account_id},
                "ArnLike": {"aws:SourceArn": arn("ec2", "vpc-flow-log/*")},
            },
        }
    )
    role = aws.iam.Role(
        f"{name}-flow-logs-role",
        description=f"aistack {name}: VPC flow logs deliver to their log group",
        assume_role_policy=trust,
        tags=tags,
        opts=child_opts(network),
    )
    group_arn = group.arn
    delivery = aws.iam.RolePolicy(
        f"{name}-flow-logs-delivery",
        role=role.id,
        policy=policy_output(
            {
                "Sid": "WriteFlowLogGroup",
                "Effect": "Allow",
                "Action": list(_perms.LOGS_WRITE),
                "Resource": [group_arn, pulumi.Output.concat(group_arn, ":*")],
            },
            {
                # The service lists groups before writing; a list call is authorised
                # against the account's log-group pattern, not one group.
                "Sid": "FindLogGroup",
                "Effect": "Allow",
                "Action": ["logs:DescribeLogGroups"],
                "Resource": arn("logs", "log-group:*"),
            },
        ),
        opts=child_opts(network),
    )
    flow_log = aws.ec2.FlowLog(
        f"{name}-flow-log",
        vpc_id=vpc.id,
        traffic_type="ALL",
        log_destination_type="cloud-watch-logs",
        log_destination=group_arn,
        iam_role_arn=role.arn,
        region=region,
        tags=flow_log_tags,
        # Created before its role may write, a flow log reports delivery errors.
        opts=child_opts(network, depends_on=[delivery]),
    )
    return FlowLogs(key, group, role, flow_log)

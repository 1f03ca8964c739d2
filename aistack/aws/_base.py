"""What every AWS component shares: the stack tag, tagging, child options, policy JSON."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pulumi

with warnings.catch_warnings():
    # pulumi-aws warns, when its s3, ec2 and lambda modules are imported, about deprecated
    # classes (BucketV2, EncryptionControl, MicrovmsImage) that aistack never uses; silenced
    # here, once, so a team's test run shows only warnings about its own code.
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"pulumi_aws(\.|$)")
    import pulumi_aws

    # pulumi-aws loads its modules lazily: touching a class runs the module's import here.
    _ = pulumi_aws.ec2.Vpc, pulumi_aws.s3.Bucket, pulumi_aws.lambda_.Function

from aistack._options import child_opts, stateful_opts
from aistack.config import WORKLOAD_TAG, Governance

__all__ = ["stack_id", "tags_for", "child_opts", "policy_document", "stateful_opts"]


def stack_id() -> str:
    """This stack's identity in tags: budgets filter on it, the kill switch acts on it."""
    return f"{pulumi.get_project()}-{pulumi.get_stack()}"


def tags_for(governance: Governance, workload: str | None = None, **extra: str) -> dict[str, str]:
    if workload:
        extra[WORKLOAD_TAG] = workload
    return governance.aws_tags(stack_id(), **extra)


def policy_document(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def policy_output(*statements: Any) -> pulumi.Output[str]:
    """A policy document whose statements may hold Outputs (ARNs not yet known)."""
    return pulumi.Output.from_input(list(statements)).apply(
        lambda resolved: policy_document(*resolved)
    )

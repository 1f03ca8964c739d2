"""The kill switch's Lambda: its code (`aistack/aws/lambdas/budget_guard.py`, deployed as
the function's only file) and the calls it makes, read from that source."""

from __future__ import annotations

import functools

import pulumi

from aistack.contracts.kill_switch import AWS_KILL_SWITCH_SOURCE, source_constants

#: The kill switch's code, deployed as the Lambda's only file.
KILL_SWITCH_HANDLER = AWS_KILL_SWITCH_SOURCE

# Where each of the handler's mutating calls may land; the tag condition narrows them to
# the stack, except for the actions in _UNTAGGED_RESOURCE_ACTIONS.
_ASG_ARN = "autoscaling:{region}:{account}:autoScalingGroup:*:autoScalingGroupName/*"
_CE_ARN = "batch:{region}:{account}:compute-environment/*"
_QUEUE_ARN = "batch:{region}:{account}:job-queue/*"
_MUTATING_RESOURCES: dict[str, tuple[str, ...]] = {
    "autoscaling:CreateOrUpdateTags": (_ASG_ARN,),
    "autoscaling:UpdateAutoScalingGroup": (_ASG_ARN,),
    "batch:TagResource": (_CE_ARN,),
    "batch:TerminateJob": ("batch:{region}:{account}:job/*",),
    "batch:UpdateComputeEnvironment": (_CE_ARN,),
    "batch:UpdateJobQueue": (_QUEUE_ARN,),
    "ec2:StopInstances": ("ec2:{region}:{account}:instance/*",),
}
#: Actions on resources that do not carry the stack tag, so a tag condition would deny them:
#: Batch jobs are tagged only when submitted with tags (`propagateTags` tags the ECS task, not
#: the job). The handler picks the jobs through the stack's own queues instead.
_UNTAGGED_RESOURCE_ACTIONS = frozenset({"batch:TerminateJob"})


def handler_code() -> pulumi.AssetArchive:
    """The function's code: the handler as its only file."""
    return pulumi.AssetArchive({"budget_guard.py": pulumi.FileAsset(str(KILL_SWITCH_HANDLER))})


@functools.cache
def _handler_permissions() -> tuple[list[str], list[str], str]:
    """(discovery actions, mutating actions, previous-size tag) read from the handler's
    source. Parsed, not imported: the handler needs boto3, which aistack does not."""
    found = source_constants(
        KILL_SWITCH_HANDLER, ("DISCOVERY_ACTIONS", "MUTATING_ACTIONS", "PREVIOUS_SIZE_TAG")
    )
    discovery = [a for actions in found["DISCOVERY_ACTIONS"].values() for a in actions]
    mutating = [a for actions in found["MUTATING_ACTIONS"].values() for a in actions]
    unscoped = set(mutating) - _MUTATING_RESOURCES.keys()
    if unscoped:
        raise RuntimeError(
            f"the kill switch calls {sorted(unscoped)}, which BudgetGuard has no resource "
            "ARNs for; add them to _MUTATING_RESOURCES"
        )
    return discovery, mutating, found["PREVIOUS_SIZE_TAG"]

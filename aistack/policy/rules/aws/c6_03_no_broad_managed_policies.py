"""AIS-C6-03: no AWS-managed *FullAccess, AdministratorAccess or PowerUserAccess attached."""

import re
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import as_list

#: Attachment resources and the input holding their policy ARN(s).
ATTACHMENTS = {
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": "policyArn",
    "aws:iam/policyAttachment:PolicyAttachment": "policyArn",
    "aws:iam/userPolicyAttachment:UserPolicyAttachment": "policyArn",
    "aws:iam/groupPolicyAttachment:GroupPolicyAttachment": "policyArn",
    "aws:iam/role:Role": "managedPolicyArns",
    "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive": "policyArns",
    "aws:iam/userPolicyAttachmentsExclusive:UserPolicyAttachmentsExclusive": "policyArns",
    "aws:iam/groupPolicyAttachmentsExclusive:GroupPolicyAttachmentsExclusive": "policyArns",
}
_AWS_MANAGED = re.compile(r"^arn:aws[a-z-]*:iam::aws:policy/(?P<path>.+)$")


def broad_managed_policy(arn: str) -> bool:
    """True for AWS-managed policies that grant a whole service or the whole account."""
    match = _AWS_MANAGED.match(arn)
    if not match:
        return False
    policy = match.group("path").rsplit("/", 1)[-1]
    return (
        "FullAccess" in policy
        or policy.startswith("AdministratorAccess")
        or policy == "PowerUserAccess"
    )


@rule(
    id="AIS-C6-03",
    checklist=["C6"],
    info="No AWS-managed *FullAccess, AdministratorAccess or PowerUserAccess policy attached.",
    why="These policies grant every action of a service (or of the account) on every "
    "resource: convenient for a demo, and the broadest blast radius a leaked credential has.",
    fix="Attach narrow policies instead: the grant_* helpers of aistack components, or a "
    "customer policy listing the actions and resources the workload needs.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for resource in graph.resources:
        key = ATTACHMENTS.get(resource.type)
        if key is None or resource.inputs.get(key) is None:
            continue
        arns = [str(arn) for arn in as_list(resource.inputs.get(key))]
        broad = [arn for arn in arns if broad_managed_policy(arn)]
        if broad:
            yield fail(resource, "attaches broad AWS-managed " + ", ".join(broad) + ".")
        elif arns:
            yield ok(resource, "attaches only narrow policies: " + ", ".join(arns) + ".")

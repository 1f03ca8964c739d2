"""AIS-T6-02: a retained log group with a fixed name breaks destroy-then-up; a prefix does not.

CloudWatch Logs refuses to create a log group whose name exists in the account and region
(CreateLogGroup: "ResourceAlreadyExistsException: The specified log group already exists",
CloudWatch Logs API Reference). A group kept on `pulumi destroy` (retainOnDelete,
skipDestroy) still exists when the stack is deployed again.
"""

import pulumi
import pulumi_aws as aws

from aistack import aws as aistack_aws
from aistack import engine
from tests.policy.rules.shared_verdicts import findings_of

RULE = "AIS-T6-02"
GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "research-1234",
    "allowedRegions": ["us-east-1"],
}


def _statuses(program):
    graph = engine.run(program, config={"aws:region": "us-east-1"})
    return {f.resource_name: f.status for f in findings_of(RULE, graph)}


def test_retained_log_groups_with_a_fixed_name_violate():
    def program():
        aws.cloudwatch.LogGroup(
            "kept-fixed",
            name="/team/kept",
            opts=pulumi.ResourceOptions(retain_on_delete=True),
        )
        aws.cloudwatch.LogGroup("skip-fixed", name="/team/skip", skip_destroy=True)

    assert _statuses(program) == {"kept-fixed": "non-compliant", "skip-fixed": "non-compliant"}


def test_retained_prefixed_and_deletable_fixed_log_groups_comply():
    def program():
        aws.cloudwatch.LogGroup(
            "kept-prefixed",
            name_prefix="/team/kept-",
            opts=pulumi.ResourceOptions(retain_on_delete=True),
        )
        # Deleted with the stack, so its name is free again for the next deployment.
        aws.cloudwatch.LogGroup("scratch", name="/team/scratch")

    assert _statuses(program) == {"kept-prefixed": "compliant"}


def test_every_retained_log_group_of_the_components_is_prefixed():
    # The two the audit found with fixed names: the network's flow logs and the kill switch's.
    def program():
        aistack_aws.Network(
            "net",
            {
                "governance": GOVERNANCE,
                "region": "us-east-1",
                "cidrBlock": "10.0.0.0/16",
                "trainingInstanceTypes": ["g5.xlarge"],
            },
        )
        aistack_aws.BudgetGuard(
            "guard",
            {
                "governance": GOVERNANCE,
                "region": "us-east-1",
                "monthlyLimit": 1000,
                "alertEmails": ["ml-team@example.com"],
                "killSwitch": True,
            },
        )

    statuses = _statuses(program)
    assert statuses == {"net-flow-logs": "compliant", "guard-kill-switch-logs": "compliant"}

"""A team's own test, written the way the README tells them to: the plugin's fixture only."""

import pulumi
import pulumi_aws as aws
import pytest

from aistack import aws as aistack_aws

GOVERNANCE = {"owner": "team-a", "costCenter": "cc-1", "allowedRegions": ["us-east-1"]}


def team_program():
    """What a team writes: an aistack component beside its own resources."""
    checkpoints = aistack_aws.DatasetBucket(
        "ckpt", {"kind": "checkpoints", "region": "us-east-1", "governance": GOVERNANCE}
    )
    role = aws.iam.Role("trainer", assume_role_policy="{}")
    checkpoints.grant_write(role, prefix="runs")
    pulumi.export("checkpoints", checkpoints.uri)


def test_the_fixture_runs_a_program_in_one_line(aistack_stack):
    graph = aistack_stack.run(team_program, config={"aws:region": "us-east-1"})
    assert graph.stack_outputs["checkpoints"].startswith("s3://ckpt-bucket-")
    assert graph.named("ckpt-write-trainer").type == "aws:iam/rolePolicy:RolePolicy"


def test_check_passes_for_compliant_parts(aistack_stack):
    graph = aistack_stack.run(team_program, config={"aws:region": "us-east-1"})
    aistack_stack.check(graph, "D1", "C4")


def test_check_fails_listing_the_violation_and_fix(aistack_stack):
    graph = aistack_stack.run(lambda: aws.s3.Bucket("loose"))
    with pytest.raises(AssertionError, match="AIS-D1-01 loose") as caught:
        aistack_stack.check(graph)
    assert "Fix:" in str(caught.value)

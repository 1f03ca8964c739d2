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


def test_kept_passes_items_the_stack_keeps_and_documented_ones(aistack_stack):
    graph = aistack_stack.run(team_program, config={"aws:region": "us-east-1"})
    aistack_stack.kept(graph, "D1", "C4", "E2")


def test_kept_fails_an_item_nothing_in_the_stack_keeps_where_check_passes(aistack_stack):
    graph = aistack_stack.run(team_program, config={"aws:region": "us-east-1"})
    aistack_stack.check(graph, "C5")  # nothing violates idle shutdown: no instance at all
    with pytest.raises(AssertionError, match="C5 .*: not-applicable"):
        aistack_stack.kept(graph, "C5")


def test_kept_fails_a_violated_item_naming_the_rule(aistack_stack):
    graph = aistack_stack.run(lambda: aws.s3.Bucket("loose"))
    with pytest.raises(AssertionError, match=r"D1 .*: failing \(AIS-D1-01 loose"):
        aistack_stack.kept(graph, "D1")
    with pytest.raises(AssertionError, match="not checklist items"):
        aistack_stack.kept(graph, "Z9")


def _project(tmp_path, program: str):
    (tmp_path / "Pulumi.yaml").write_text("name: team\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(
        "config:\n  aws:region: us-east-1\n  team:maxNodes: 2\n"
    )
    (tmp_path / "__main__.py").write_text(program)
    return tmp_path


CHECKED = """
import pulumi
import pulumi_aws as aws
from aistack.errors import ConfigError
nodes = pulumi.Config().require_int("maxNodes")
if nodes < 1:
    raise ConfigError("must be at least 1.", field="maxNodes", fix="give 1 or more.")
aws.s3.Bucket("data")
"""


def test_config_error_returns_the_error_raised_before_any_resource(aistack_stack, tmp_path):
    project = _project(tmp_path, CHECKED)
    error = aistack_stack.config_error(project, {"team:maxNodes": 0})
    assert error.fields == ["maxNodes"]
    # The project itself is untouched: its stack file still has the good value.
    assert "maxNodes: 2" in (project / "Pulumi.dev.yaml").read_text()


def test_config_error_fails_when_a_resource_was_registered_first(aistack_stack, tmp_path):
    late = CHECKED.replace('aws.s3.Bucket("data")\n', "").replace(
        "nodes = pulumi", 'aws.s3.Bucket("early")\nnodes = pulumi'
    )
    with pytest.raises(AssertionError, match="registered before the ConfigError"):
        aistack_stack.config_error(_project(tmp_path, late), {"team:maxNodes": 0})


def test_config_error_fails_when_the_bad_config_is_accepted(aistack_stack, tmp_path):
    with pytest.raises(AssertionError, match="raised no ConfigError"):
        aistack_stack.config_error(_project(tmp_path, CHECKED), {"team:maxNodes": 3})

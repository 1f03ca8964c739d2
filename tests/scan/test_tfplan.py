"""The StackGraph -> Terraform plan converter, asserted on the example stacks' real resources.

Terraform's JSON plan format: https://developer.hashicorp.com/terraform/internals/json-format
(blocks are arrays of objects, maps are objects, `configuration...expressions` carry
`references` such as ["aws_s3_bucket.b.id", "aws_s3_bucket.b"]). Whether each emitted type
is a real Terraform type is checked against checkov's own list in test_checkov.py.
"""

from __future__ import annotations

import json
import re

import pytest

from aistack.scan import to_terraform_plan
from aistack.scan.tfplan import (
    BLOCK_RENAMES,
    TERRAFORM_PLURAL_NAMES,
    list_attributes,
    terraform_type,
)


@pytest.fixture(scope="module")
def plan(reference_graph):
    return to_terraform_plan(reference_graph)


def _values(plan, address):
    for resource in plan["planned_values"]["root_module"]["resources"]:
        if resource["address"] == address:
            return resource["values"]
    raise KeyError(address)


def _expressions(plan, address):
    for resource in plan["configuration"]["root_module"]["resources"]:
        if resource["address"] == address:
            return resource["expressions"]
    raise KeyError(address)


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        # The generic rule: provider, module, snake_cased type name.
        ("aws:s3/bucket:Bucket", "aws_s3_bucket"),
        (
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
            "aws_s3_bucket_server_side_encryption_configuration",
        ),
        ("aws:cloudwatch/logGroup:LogGroup", "aws_cloudwatch_log_group"),
        (
            "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
            "aws_vpc_security_group_egress_rule",
        ),
        (
            "aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration",
            "aws_wafv2_web_acl_logging_configuration",
        ),
        # Module prefixes Terraform does not use.
        ("aws:ec2/launchTemplate:LaunchTemplate", "aws_launch_template"),
        ("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup", "aws_default_security_group"),
        ("aws:costexplorer/anomalyMonitor:AnomalyMonitor", "aws_ce_anomaly_monitor"),
        # The override table.
        ("aws:lb/loadBalancer:LoadBalancer", "aws_lb"),
        ("aws:s3/bucketV2:BucketV2", "aws_s3_bucket"),
        ("aws:iam/openIdConnectProvider:OpenIdConnectProvider", "aws_iam_openid_connect_provider"),
    ],
)
def test_pulumi_token_maps_to_its_terraform_type(token, expected):
    assert terraform_type(token) == expected


def test_every_custom_aws_resource_is_emitted_and_no_component_or_provider(minimal_graph):
    plan = to_terraform_plan(minimal_graph)
    addresses = [r["address"] for r in plan["planned_values"]["root_module"]["resources"]]
    custom = [r for r in minimal_graph.resources if r.custom and r.type.startswith("aws:")]
    assert len(addresses) == len(custom) == len(set(addresses))
    types = {r["type"] for r in plan["planned_values"]["root_module"]["resources"]}
    # The minimal stack declares its own `aws` provider: a resource in Pulumi, not in Terraform.
    assert any(r.type == "pulumi:providers:aws" for r in minimal_graph.resources)
    assert not any(t.startswith(("aistack", "pulumi")) for t in types)
    assert plan["configuration"]["provider_config"]["aws"]["expressions"]["region"] == {
        "constant_value": minimal_graph.config["aws:region"]
    }


def test_nested_objects_become_one_element_block_lists(plan):
    values = _values(plan, "aws_s3_bucket_versioning.dataset-versioning")
    assert values["versioning_configuration"] == [{"status": "Enabled"}]
    template = _values(plan, "aws_launch_template.training-launch-template")
    assert template["metadata_options"][0]["http_tokens"] == "required"


def test_lists_of_objects_stay_lists_and_keep_their_length(reference_graph, plan):
    lifecycle = reference_graph.named("dataset-lifecycle")
    rules = _values(plan, "aws_s3_bucket_lifecycle_configuration.dataset-lifecycle")["rule"]
    assert len(rules) == len(lifecycle.inputs["rules"]) >= 2
    assert all(isinstance(rule, dict) for rule in rules)
    # A nested block inside a list element is itself a one-element list.
    aborts = [
        r["abort_incomplete_multipart_upload"]
        for r in rules
        if "abort_incomplete_multipart_upload" in r
    ]
    assert aborts and all(isinstance(a, list) and len(a) == 1 for a in aborts)


def test_maps_stay_objects_with_their_keys_untouched(plan):
    tags = _values(plan, "aws_s3_bucket.dataset-bucket")["tags"]
    assert isinstance(tags, dict)
    assert tags["aistack:stack"] == "aistack-dev"
    environment = _values(plan, "aws_lambda_function.budget-kill-switch")["environment"]
    [variables] = environment
    assert isinstance(variables["variables"], dict)
    assert variables["variables"]["AISTACK_STACK"] == "aistack-dev"
    assert variables["variables"]["AISTACK_DRY_RUN"] == "false"


def test_inputs_are_snake_cased(plan):
    role = _values(plan, "aws_iam_role.identity-training")
    assert "assume_role_policy" in role and "assumeRolePolicy" not in role
    json.loads(role["assume_role_policy"])  # JSON documents stay strings, as in Terraform


def test_an_input_equal_to_another_resources_id_becomes_a_reference(plan):
    address = "aws_s3_bucket_server_side_encryption_configuration.dataset-encryption"
    expressions = _expressions(plan, address)
    # The settings resources share the bucket's name as their id; the bucket is the origin.
    assert expressions["bucket"]["references"] == [
        "aws_s3_bucket.dataset-bucket.id",
        "aws_s3_bucket.dataset-bucket",
    ]
    # Known only after apply in a real plan, so absent from planned_values.
    assert "bucket" not in _values(plan, address)
    nested = expressions["rule"][0]["apply_server_side_encryption_by_default"][0]
    assert nested["kms_master_key_id"]["references"][0] == "aws_kms_key.dataset-key.arn"


def test_an_arn_input_references_the_arn_attribute(plan):
    listener = _expressions(plan, "aws_lb_listener.inference-https")
    assert listener["load_balancer_arn"]["references"][0] == "aws_lb.inference-alb.arn"
    groups = listener["default_action"][0]["forward"][0]["target_group"]
    assert {g["arn"]["references"][0] for g in groups} == {
        "aws_lb_target_group.inference-v1-4-0-tg.arn",
        "aws_lb_target_group.inference-v1-3-2-tg.arn",
    }


def test_lists_of_ids_reference_every_element(plan):
    asg = _expressions(plan, "aws_autoscaling_group.inference-v1-4-0-asg")
    subnets = [r for r in asg["vpc_zone_identifier"]["references"] if r.endswith(".id")]
    assert len(subnets) == 3 and all(r.startswith("aws_subnet.network-inference-") for r in subnets)


def test_pulumi_plural_block_names_are_renamed_to_terraforms(plan):
    # The audit's CKV_AWS_136 false positive: checkov reads encryption_configuration.
    repository = _values(plan, "aws_ecr_repository.registry-trainer")
    assert repository["encryption_configuration"] == [{"encryption_type": "KMS"}]
    assert "encryption_configurations" not in repository
    assert "default_action" in _values(plan, "aws_lb_listener.inference-http")
    asg = _values(plan, "aws_autoscaling_group.inference-v1-4-0-asg")
    assert {"key", "value", "propagate_at_launch"} <= set(asg["tag"][0])
    role = _values(plan, "aws_iam_role.identity-training")
    assert "inline_policies" not in role


def test_every_rename_says_why():
    assert all(why.strip() for _, why in BLOCK_RENAMES.values())


def test_every_plural_list_name_in_the_example_stacks_is_decided(reference_graph, minimal_graph):
    """Pulumi pluralises Terraform's repeatable names (`rule` -> `rules`); a plural the
    tables do not know may be one checkov would silently miss."""
    undecided = {
        (tf_type, path)
        for graph in (reference_graph, minimal_graph)
        for tf_type, path, emitted in list_attributes(graph)
        if emitted.endswith("s") and emitted not in TERRAFORM_PLURAL_NAMES
    }
    assert not undecided, "add each to BLOCK_RENAMES or TERRAFORM_PLURAL_NAMES"


def test_every_attribute_and_block_key_is_snake_case(reference_graph, minimal_graph):
    """Blocks are lists of objects, maps bare objects: every key outside a map must be a
    Terraform (snake_case) name, or the SDK's shape of some input was missed."""

    def keys(block: dict, path: str):
        for key, value in block.items():
            yield f"{path}{key}", key
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, dict):
                        yield from keys(item, f"{path}{key}.")

    bad = {
        (resource["address"], path)
        for graph in (reference_graph, minimal_graph)
        for resource in to_terraform_plan(graph)["planned_values"]["root_module"]["resources"]
        for path, key in keys(resource["values"], "")
        if not re.fullmatch(r"[a-z0-9_]+", key)
    }
    assert bad == set()

"""The CrossGuard pack: same rules, same verdicts, reported through pulumi-policy's API.

Constructing a PolicyPack starts a gRPC server and blocks, so these tests call the
validation functions directly with PolicyResources built from a recorded graph.
"""

import pulumi_aws as aws
from pulumi_policy import (
    EnforcementLevel,
    StackValidationArgs,
)

from aistack import aws as aistack_aws
from aistack import engine, policy
from aistack.policy.crossguard import graph_from_policy_resources, policies

from .crossguard_resources import policy_resources as _policy_resources

GOVERNANCE = {"owner": "a", "costCenter": "b", "allowedRegions": ["us-east-1"]}


def _validate(name, graph):
    pack = {p.name: p for p in policies()}
    violations = []
    pack[name].validate(
        StackValidationArgs(_policy_resources(graph)),
        lambda message, urn=None: violations.append((message, urn)),
    )
    return violations


def _bucket_program():
    aistack_aws.DatasetBucket(
        "ckpt", {"kind": "checkpoints", "region": "us-east-1", "governance": GOVERNANCE}
    )
    aws.s3.Bucket("loose")


def test_every_rule_is_a_policy_with_its_enforcement():
    pack = {p.name: p for p in policies()}
    for rule in policy.all_rules():
        expected = (
            EnforcementLevel.MANDATORY
            if rule.severity == "mandatory"
            else EnforcementLevel.ADVISORY
        )
        assert pack[rule.id.lower()].enforcement_level == expected


def test_violations_name_the_resource_and_the_fix():
    graph = engine.run(_bucket_program, config={"aws:region": "us-east-1"})
    violations = _validate("ais-d1-01", graph)
    loose = graph.named("loose")
    assert [urn for _, urn in violations] == [loose.urn]
    assert "Fix:" in violations[0][0]


def test_compliant_stack_reports_nothing():
    graph = engine.run(_bucket_program, config={"aws:region": "us-east-1"})
    graph.resources[:] = [r for r in graph.resources if r.name != "loose"]
    assert _validate("ais-d1-01", graph) == []


def test_the_pack_judges_like_aistack_check():
    graph = engine.run(_bucket_program, config={"aws:region": "us-east-1"})
    rebuilt = graph_from_policy_resources(_policy_resources(graph))
    for rule in policy.all_rules():
        ours = {(f.resource_urn, f.status) for f in rule.evaluate(graph)}
        theirs = {(f.resource_urn, f.status) for f in rule.evaluate(rebuilt)}
        assert ours == theirs, rule.id

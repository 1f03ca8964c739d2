"""Training rules (C5, D2, D3, D4, E3, E4, E5, T1, T2, T3, T5, T6): a TrainingPool complies;
hand-made resources without the safeguards violate."""

import base64
import json

import pulumi_aws as aws
import pytest

from aistack import engine
from tests.aws.training_platform import training_platform as _platform
from tests.policy.rules.shared_verdicts import findings_of

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("policy-rules-aws-training_rules")

GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "research-1234",
    "allowedRegions": ["us-east-1", "us-west-2"],
}
TRAINING = {"aistack:workload": "training", "aistack:pool": "raw"}


def _statuses(graph, rule_id):
    return {f.resource_name: f.status for f in findings_of(rule_id, graph)}


@pytest.fixture(scope="module")
def pool_graphs():
    config = {"aws:region": "us-east-1"}
    return {
        "batch": engine.run(lambda: _platform(GOVERNANCE), config=config),
        "asg": engine.run(lambda: _platform(GOVERNANCE, scheduler="asg"), config=config),
    }


def _raw_job(**overrides):
    container = {
        "image": "trainer@sha256:" + "ab" * 32,
        "command": ["python", "train.py"],
        "environment": [
            {"name": "AISTACK_DATASET_URI", "value": "s3://elsewhere/data"},
            {"name": "AISTACK_DATASET_VERSION", "value": "latest"},
        ],
        "logConfiguration": {"logDriver": "json-file"},
    }
    return aws.batch.JobDefinition(
        "raw-job", type="container", container_properties=json.dumps(container), **overrides
    )


def _raw_template():
    return aws.ec2.LaunchTemplate(
        "raw-template",
        image_id="ami-0123456789abcdef0",
        user_data=base64.b64encode(b"#!/bin/bash\necho hi\n").decode(),
        tags=TRAINING,
    )


def _raw_capacity():
    aws.batch.ComputeEnvironment(
        "raw-compute",
        type="MANAGED",
        tags=TRAINING,
        compute_resources={
            "type": "EC2",
            "maxVcpus": 96,
            "minVcpus": 48,
            "subnets": ["subnet-1"],
            "instanceTypes": ["g5.12xlarge"],
        },
    )
    aws.autoscaling.Group(
        "raw-group",
        min_size=1,
        max_size=4,
        tags=[{"key": k, "value": v, "propagateAtLaunch": True} for k, v in TRAINING.items()],
    )


@pytest.fixture(scope="module")
def raw_graph():
    def program():
        _raw_job()
        _raw_template()
        _raw_capacity()
        aws.cloudwatch.LogGroup("raw-logs")

    return engine.run(program, config={"aws:region": "us-east-1"})


COMPLIANT = {
    "AIS-C5-02": ["train-compute"],
    "AIS-D2-01": ["train-job"],
    "AIS-D3-01": ["train-launch-template"],
    "AIS-D4-01": ["train-job"],
    "AIS-E3-01": ["train-job"],
    "AIS-E4-01": ["train-job"],
    "AIS-E5-01": ["train-job"],
    "AIS-T1-01": ["train-job", "train-launch-template"],
    "AIS-T2-01": ["train-job"],
    "AIS-T3-01": ["train-compute"],
    "AIS-T5-01": ["train-job"],
    "AIS-T6-01": ["train-job", "train-logs"],
}
VIOLATING = {
    "AIS-C5-02": ["raw-compute", "raw-group"],
    "AIS-D2-01": ["raw-job"],
    "AIS-D3-01": ["raw-template"],
    "AIS-D4-01": ["raw-job"],
    "AIS-E3-01": ["raw-job"],
    "AIS-E4-01": ["raw-job"],
    "AIS-E5-01": ["raw-job"],
    "AIS-T1-01": ["raw-job", "raw-template"],
    "AIS-T2-01": ["raw-job"],
    "AIS-T3-01": ["raw-compute", "raw-group"],
    "AIS-T5-01": ["raw-job", "raw-template"],
    "AIS-T6-01": ["raw-job", "raw-logs"],
}


@pytest.mark.parametrize("rule_id", sorted(COMPLIANT))
def test_training_pool_complies(pool_graphs, rule_id):
    statuses = _statuses(pool_graphs["batch"], rule_id)
    for name in COMPLIANT[rule_id]:
        assert statuses.get(name) == "compliant", (name, statuses)
    assert "non-compliant" not in statuses.values(), statuses


@pytest.mark.parametrize("rule_id", sorted(VIOLATING))
def test_resources_without_safeguards_violate(raw_graph, rule_id):
    statuses = _statuses(raw_graph, rule_id)
    for name in VIOLATING[rule_id]:
        assert statuses.get(name) == "non-compliant", (name, statuses)


@pytest.mark.parametrize("rule_id", ["AIS-C5-02", "AIS-T2-01", "AIS-T3-01"])
def test_asg_pool_complies(pool_graphs, rule_id):
    statuses = _statuses(pool_graphs["asg"], rule_id)
    assert statuses.get("train-group") == "compliant", statuses


def test_asg_nodes_carry_their_wall_clock_limit(pool_graphs):
    assert _statuses(pool_graphs["asg"], "AIS-T5-01")["train-launch-template"] == "compliant"


def test_t2_a_retry_rule_after_the_catch_all_exit_violates():
    # Batch evaluates evaluateOnExit in order and applies the first match (Batch API
    # reference, RetryStrategy), so this job fails for good on a reclaimed host.
    def program():
        _raw_job(
            retry_strategy={
                "attempts": 3,
                "evaluateOnExits": [
                    {"onReason": "*", "action": "EXIT"},
                    {"onStatusReason": "Host EC2*", "action": "RETRY"},
                ],
            }
        )

    graph = engine.run(program, config={"aws:region": "us-east-1"})
    assert _statuses(graph, "AIS-T2-01") == {"raw-job": "non-compliant"}

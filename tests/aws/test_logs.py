"""Retained, encrypted log groups name their partition and service domain from the provider."""

import json

import pulumi

from aistack import engine
from aistack.aws._logs import encrypted_log_group
from aistack.config import Governance


def _log_group(region):
    def program():
        parent = pulumi.ComponentResource("test:index:Parent", "owner")
        governance = Governance.parse(
            {"owner": "ml", "costCenter": "cc-1", "allowedRegions": [region]}, where="governance"
        )
        encrypted_log_group(
            "jobs",
            parent,
            log_group_name="/aistack/test/jobs",
            region=region,
            governance=governance,
            retention_days=30,
            tags={},
        )

    return engine.run(program, config={"aws:region": region})


def _statements(graph):
    key = graph.named("jobs-logs-key")
    return {s["Sid"]: s for s in json.loads(key.inputs["policy"])["Statement"]}


def test_the_commercial_partition_gets_aws_arns_and_the_amazonaws_com_principal():
    statements = _statements(_log_group("us-east-1"))
    assert statements["AccountAdministers"]["Principal"] == {
        "AWS": "arn:aws:iam::123456789012:root"
    }
    logs = statements["CloudWatchLogsUsesKey"]
    assert logs["Principal"] == {"Service": "logs.us-east-1.amazonaws.com"}
    assert logs["Condition"]["ArnLike"] == {
        "kms:EncryptionContext:aws:logs:arn": "arn:aws:logs:us-east-1:123456789012:log-group:*"
    }


def test_the_china_partition_gets_aws_cn_arns_and_its_service_domain(china_partition):
    statements = _statements(_log_group("cn-north-1"))
    assert statements["AccountAdministers"]["Principal"] == {
        "AWS": "arn:aws-cn:iam::123456789012:root"
    }
    logs = statements["CloudWatchLogsUsesKey"]
    assert logs["Principal"] == {"Service": "logs.cn-north-1.amazonaws.com.cn"}
    assert logs["Condition"]["ArnLike"] == {
        "kms:EncryptionContext:aws:logs:arn": "arn:aws-cn:logs:cn-north-1:123456789012:log-group:*"
    }

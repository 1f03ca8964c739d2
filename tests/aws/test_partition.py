"""Policies name their partition and service domain from the provider, never `aws` and
`amazonaws.com` by hand (audit 2, N4).

Platform fact: in the China regions ARNs start `arn:aws-cn:` and service endpoints end in
`amazonaws.com.cn` (AWS General Reference, "Amazon Resource Names" and "Service endpoints";
the provider's aws_partition answers partition `aws-cn`, dnsSuffix `amazonaws.com.cn`).
The stacks are previewed as if the account were in that partition; the region stays
us-east-1 so every branch (the regional ELB log account included) is taken.
"""

from __future__ import annotations

import json
import re

from aistack import aws as aistack_aws

from .conftest import GOVERNANCE
from .test_inference_tier import platform as serving_platform
from .training_platform import training_platform

#: A commercial ARN, or a regional service domain that is not China's.
COMMERCIAL = re.compile(r'arn:aws:|\.[a-z]{2}-[a-z]+-\d\.amazonaws\.com"')
#: The resources whose documents carry an ARN or a regional service name.
POLICY_TYPES = {
    "aws:kms/key:Key",
    "aws:s3/bucketPolicy:BucketPolicy",
    "aws:iam/rolePolicy:RolePolicy",
    "aws:cloudwatch/logResourcePolicy:LogResourcePolicy",
    "aws:sns/topicPolicy:TopicPolicy",
    "aws:sqs/queuePolicy:QueuePolicy",
}


def _training_and_budget():
    training_platform(dict(GOVERNANCE))
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


def _documents(graph, index):
    """Each policy resource's inputs as text, with the ARNs the simulated cloud gave other
    resources (it answers in the commercial partition) cut out: what is left is ours."""
    simulated = sorted(
        {
            value
            for resource in graph.resources
            for value in resource.outputs.values()
            if isinstance(value, str) and value.startswith("arn:aws:")
        },
        key=len,
        reverse=True,
    )
    documents = {}
    for resource in graph.resources:
        if resource.type in POLICY_TYPES:
            text = json.dumps(resource.inputs)
            for value in simulated:
                text = text.replace(value, "<resource arn>")
            documents[f"{index}:{resource.name}"] = text
    return documents


def test_no_policy_names_the_commercial_partition_in_the_china_partition(china_partition, run):
    documents = {
        **_documents(run(serving_platform), 0),
        **_documents(run(_training_and_budget), 1),
    }
    leftovers = {name: COMMERCIAL.findall(text) for name, text in documents.items()}
    assert {name: found for name, found in leftovers.items() if found} == {}
    # The places audit 2 found, each now in the China partition's terms.
    text = "\n".join(documents.values())
    assert "logs.us-east-1.amazonaws.com.cn" in documents["0:net-flow-log-key"]
    assert "sqs.us-east-1.amazonaws.com.cn" in text
    assert "s3.us-east-1.amazonaws.com.cn" in text
    assert "arn:aws-cn:logs:us-east-1:" in documents["0:serve-waf-log-delivery"]
    assert "arn:aws-cn:iam::127311923021:root" in documents["0:logs-policy"]

"""Every exported component, built through the provider from a TypeScript-shaped program,
registers the graph the Python API builds for the same arguments, and returns its outputs."""

import pulumi
import pytest

from aistack import aws, engine
from tests.aws.conftest import GOVERNANCE
from tests.components.test_construct import CONFIG, _floats, _shape

NOTEBOOK_WIRING = {
    "vpcId": "vpc-0123456789abcdef0",
    "subnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
    "securityGroupIds": ["sg-0123456789abcdef0"],
    "executionRoleArn": "arn:aws:iam::123456789012:role/notebook",
}

#: token name -> (Python class, arguments, outputs the construct result must carry)
CASES = {
    "AwsWorkloadIdentity": (
        aws.WorkloadIdentity,
        {"governance": GOVERNANCE, "github": {"repository": "acme/ml", "branches": ["main"]}},
        {"roleArns", "instanceProfileArns", "ciRoleArn"},
    ),
    "AwsBudgetGuard": (
        aws.BudgetGuard,
        {
            "governance": GOVERNANCE,
            "region": "us-east-1",
            "monthlyLimit": 1000,
            "dailyLimit": 60.5,
            "alertEmails": ["ml-team@example.com"],
            "killSwitch": True,
        },
        {"alertTopicArn", "monthlyBudgetName", "killSwitchFunctionArn"},
    ),
    "AwsGpuQuota": (
        aws.GpuQuota,
        {
            "governance": GOVERNANCE,
            "region": "us-east-1",
            "needs": [
                {"pool": "train", "instanceTypes": ["g5.12xlarge"], "maxNodes": 3, "market": "spot"}
            ],
        },
        {"requestedVcpus", "summaries"},
    ),
    "AwsContainerRegistry": (
        aws.ContainerRegistry,
        {"governance": GOVERNANCE, "region": "us-east-1", "repositories": ["trainer"]},
        {"repositoryUrls", "kmsKeyArn"},
    ),
    "AwsNetwork": (
        aws.Network,
        {
            "governance": GOVERNANCE,
            "region": "us-east-1",
            "trainingInstanceTypes": ["g5.12xlarge"],
            "maxZones": 2,
        },
        {"vpcId", "trainingSubnetIds", "trainingSecurityGroupId", "flowLogGroupName"},
    ),
    "AwsNotebook": (
        aws.Notebook,
        {"governance": GOVERNANCE, "region": "us-east-1", "users": ["ana"], **NOTEBOOK_WIRING},
        {"domainId", "studioUrl", "kmsKeyId"},
    ),
}


@pytest.mark.parametrize("token", list(CASES))
def test_component_through_the_provider_registers_the_python_graph(provider, token):
    component, args, outputs = CASES[token]
    state = {}

    def through_provider():
        result = provider.construct("it", f"aistack:index:{token}", _floats(args), None)
        state.update(result.state)

    via_provider = engine.run(through_provider, config=CONFIG)
    via_python = engine.run(lambda: component("it", args), config=CONFIG)
    assert _shape(via_provider) == _shape(via_python)
    assert via_provider.named("it").type == f"aistack:index:{token}"
    assert outputs <= set(state), outputs - set(state)


def test_notebook_takes_its_network_as_outputs(provider):
    def program():
        network = aws.Network(
            "net",
            {
                "governance": GOVERNANCE,
                "region": "us-east-1",
                "trainingInstanceTypes": ["g5.12xlarge"],
                "notebook": True,
            },
        )
        wiring = {
            "vpcId": network.vpc_id,
            "subnetIds": network.subnet_ids("notebook"),
            "securityGroupIds": [network.security_group_id("notebook")],
            "executionRoleArn": pulumi.Output.from_input(NOTEBOOK_WIRING["executionRoleArn"]),
        }
        inputs = {
            **_floats({"governance": GOVERNANCE, "region": "us-east-1", "users": ["ana"]}),
            **wiring,
        }
        provider.construct("nb", "aistack:index:AwsNotebook", inputs, None)

    graph = engine.run(program, config=CONFIG)
    domain = graph.of_type("aws:sagemaker/domain:Domain")[0]
    assert domain.get("vpcId") == graph.named("net-vpc").id
    assert sorted(domain.get("subnetIds")) == sorted(
        r.id for r in graph.of_type("aws:ec2/subnet:Subnet") if r.name.startswith("net-notebook")
    )

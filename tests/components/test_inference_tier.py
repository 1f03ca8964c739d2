"""AwsInferenceTier wired by ids, as a TypeScript program wires it, against the tier the
Python API builds from component objects (without load balancer access logs, which are not
wired across languages yet)."""

import base64
import json

import pytest
from pulumi.provider.server import ComponentInitError

from aistack import aws, engine
from aistack.aws.inference.node import unpack_user_data
from aistack.aws.network import NetworkArgs
from aistack.errors import ConfigError
from tests.aws.conftest import GOVERNANCE
from tests.aws.test_inference_tier import tier_args
from tests.components.test_construct import CONFIG, _floats
from tests.components.test_training_pool import _construct, _key

TIER = tier_args()
NETWORK = {
    "governance": GOVERNANCE,
    "region": "us-east-1",
    "inferenceInstanceTypes": ["g5.xlarge"],
}
IDENTITY = {"governance": GOVERNANCE}
MODELS = {"kind": "models", "region": "us-east-1", "governance": GOVERNANCE}
CIDR = NetworkArgs.model_fields["cidr_block"].default


def _through_provider(provider, **tier):
    def program():
        network = _construct(provider, "net", "AwsNetwork", NETWORK)
        identity = _construct(provider, "id", "AwsWorkloadIdentity", IDENTITY)
        models = _construct(provider, "models", "AwsDatasetBucket", MODELS)
        wiring = {
            "vpcId": network["vpcId"],
            "subnetIds": network["inferenceSubnetIds"],
            "securityGroupId": network["inferenceSecurityGroupId"],
            "albSubnetIds": network["albSubnetIds"],
            "albSecurityGroupId": network["albSecurityGroupId"],
            "vpcCidrBlock": CIDR,
            "instanceRoleArn": _key(identity["roleArns"], "inference"),
            "instanceProfileArn": _key(identity["instanceProfileArns"], "inference"),
            "modelsBucketName": models["bucketName"],
            "modelsBucketArn": models["bucketArn"],
            "modelsKmsKeyArn": models["kmsKeyArn"],
        }
        inputs = {**_floats({**TIER, **tier}), **wiring}
        provider.construct("serve", "aistack:index:AwsInferenceTier", inputs, None)

    return engine.run(program, config=CONFIG)


def _from_python(**tier):
    def program():
        aws.InferenceTier(
            "serve",
            {**TIER, **tier},
            network=aws.Network("net", NETWORK),
            identity=aws.WorkloadIdentity("id", IDENTITY),
            models=aws.DatasetBucket("models", MODELS),
        )

    return engine.run(program, config=CONFIG)


def _rows(graph, skip):
    rows = {}
    for r in graph:
        if r.name in skip:
            continue
        inputs = dict(r.inputs)
        # The gateway trusts X-Forwarded-For from the ALB subnets (Python: planned from the
        # network object) or from the VPC's range (ids: the plan is not known): only the
        # load balancer reaches the nodes, so both trust the same traffic.
        inputs.pop("userData", None)
        rows[r.urn] = (r.parent or "", json.dumps(inputs, sort_keys=True))
    return rows


def test_tier_wired_by_ids_registers_the_python_tiers_resources(provider):
    via_provider = _through_provider(provider)
    via_python = _from_python()
    grants = {"models-read-serve", "serve-read-models"}
    assert _rows(via_provider, grants) == _rows(via_python, grants)

    tier = via_provider.named("serve")
    assert tier.type == "aistack:index:AwsInferenceTier"
    ours, theirs = via_provider.named("serve-read-models"), via_python.named("models-read-serve")
    assert ours.parent == tier.urn
    assert json.loads(ours.inputs["policy"]) == json.loads(theirs.inputs["policy"])
    # What the Python tier waits for, the package's waits for too (the whole network).
    for resource in via_python:
        if resource.name not in grants:
            missing = set(resource.dependencies) - set(
                via_provider.by_urn(resource.urn).dependencies
            )
            assert not missing, (resource.name, missing)
    user_data = base64.b64decode(via_provider.named("serve-v1-4-0-lt").inputs["userData"])
    nginx = "\n".join(unpack_user_data(user_data.decode()).values())
    assert f"set_real_ip_from {CIDR};" in nginx


def test_tier_errors_are_the_python_callers(provider):
    with pytest.raises(ComponentInitError) as caught:
        _through_provider(provider, maxNodes=2.5)
    with pytest.raises(ConfigError) as python:
        _from_python(maxNodes=2.5)
    assert str(caught.value.inner) == str(python.value)

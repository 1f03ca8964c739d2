"""AwsTrainingPool wired by ids and ARNs, as a TypeScript program wires it, against the pool
the Python API builds from component objects."""

import json

import pulumi
import pytest
from pulumi.provider.server import ComponentInitError

from aistack import aws, engine
from aistack.errors import ConfigError
from tests.aws.conftest import GOVERNANCE
from tests.aws.training_platform import DATASET, DIGEST
from tests.components.test_construct import CONFIG, _floats

POOL = {
    "governance": GOVERNANCE,
    "region": "us-east-1",
    "instanceTypes": ["g5.12xlarge"],
    "maxNodes": 4,
    "image": DIGEST,
    "maxRuntimeMinutes": 720,
    "datasetVersion": DATASET["version"],
    # The caller's own keys: kept as written, not camelCased like the schema's fields.
    "job": {"gpus": 4, "environment": {"HF_HOME": "/cache/hf", "NCCL_DEBUG": "WARN"}},
}


NETWORK = {
    "governance": GOVERNANCE,
    "region": "us-east-1",
    "trainingInstanceTypes": ["g5.12xlarge"],
}
IDENTITY = {"governance": GOVERNANCE}
DATA = {"kind": "dataset", "region": "us-east-1", "governance": GOVERNANCE, "dataset": DATASET}
CKPT = {"kind": "checkpoints", "region": "us-east-1", "governance": GOVERNANCE}


def _platform():
    return (
        aws.Network("net", NETWORK),
        aws.WorkloadIdentity("id", IDENTITY),
        aws.DatasetBucket("data", DATA),
        aws.DatasetBucket("ckpt", CKPT),
    )


_PIECES = [
    ("net", "Network", NETWORK),
    ("id", "WorkloadIdentity", IDENTITY),
    ("data", "DatasetBucket", DATA),
    ("ckpt", "DatasetBucket", CKPT),
]


def _construct(provider, name, token, inputs):
    return provider.construct(name, f"aistack:index:{token}", _floats(inputs), None).state


def _key(mapping, key):
    """`identity.roleArns.apply(arns => arns["training"])` in TypeScript."""
    return pulumi.Output.from_input(mapping).apply(lambda values: values[key])


def _through_provider(provider, **pool):
    """The whole platform as a TypeScript program builds it: every component through the
    provider, the pool wired with the others' outputs."""

    def program():
        network, identity, data, ckpt = (
            _construct(provider, name, f"Aws{component}", args) for name, component, args in _PIECES
        )
        wiring = {
            "subnetIds": network["trainingSubnetIds"],
            "securityGroupId": network["trainingSecurityGroupId"],
            "instanceRoleArn": _key(identity["roleArns"], "training"),
            "instanceProfileArn": _key(identity["instanceProfileArns"], "training"),
            "jobRoleArn": _key(identity["roleArns"], "training-job"),
            "datasetBucketName": data["bucketName"],
            "datasetBucketArn": data["bucketArn"],
            "datasetKmsKeyArn": data["kmsKeyArn"],
            "checkpointsBucketName": ckpt["bucketName"],
            "checkpointsBucketArn": ckpt["bucketArn"],
            "checkpointsKmsKeyArn": ckpt["kmsKeyArn"],
        }
        inputs = {**_floats({**POOL, **pool}), **wiring}
        provider.construct("train", "aistack:index:AwsTrainingPool", inputs, None)

    return engine.run(program, config=CONFIG)


def _from_python(**pool):
    def program():
        network, identity, data, ckpt = _platform()
        aws.TrainingPool(
            "train",
            {**POOL, **pool},
            network=network,
            identity=identity,
            dataset=data,
            checkpoints=ckpt,
        )

    return engine.run(program, config=CONFIG)


#: Python names a grant after the bucket and parents it there; across languages the bucket
#: is known only by its ARN, so the pool makes its grants itself: same policy, its own name.
GRANTS = {
    "data-read-train-pool": "train-pool-read-dataset",
    "ckpt-write-train-pool": "train-pool-write-checkpoints",
    "data-read-train-job": "train-job-read-dataset",
    "ckpt-write-train-job": "train-job-write-checkpoints",
}


def _rows(graph, skip):
    return {
        r.urn: (r.parent or "", json.dumps(r.inputs, sort_keys=True))
        for r in graph
        if r.name not in skip
    }


@pytest.mark.parametrize("scheduler", ["batch", "asg"])
def test_pool_wired_by_ids_registers_the_python_pools_resources(provider, scheduler):
    pool = {"scheduler": scheduler}
    via_provider = _through_provider(provider, **pool)
    via_python = _from_python(**pool)
    grants = set(GRANTS) | set(GRANTS.values())
    assert _rows(via_provider, grants) == _rows(via_python, grants)
    # Everything a Python pool's resource waits for, the package's waits for too: the nodes
    # wait for the whole network (its routes and endpoints), not just their subnets. (More
    # is fine: a TypeScript `roleArns` map depends on every role in it.)
    for resource in via_python:
        if resource.name not in grants:
            waits = set(via_provider.by_urn(resource.urn).dependencies)
            missing = set(resource.dependencies) - waits
            assert not missing, (resource.name, missing)
    nodes = via_provider.named("train-compute" if scheduler == "batch" else "train-group")
    assert {"net-ecr-api", "net-training-us-east-1a-rt"} <= {
        via_provider.by_urn(urn).name for urn in nodes.dependencies
    }

    train = via_provider.named("train")
    assert train.type == "aistack:index:AwsTrainingPool"
    for python_name, package_name in GRANTS.items():
        if scheduler == "asg" and "job" in python_name:
            continue
        # A Batch host's instance role writes no checkpoints: jobs reach it (host networking).
        if scheduler == "batch" and python_name == "ckpt-write-train-pool":
            assert not [r for r in via_provider if r.name == package_name]
            continue
        ours, theirs = via_provider.named(package_name), via_python.named(python_name)
        assert ours.parent == train.urn
        assert ours.inputs["role"] == theirs.inputs["role"]
        assert json.loads(ours.inputs["policy"]) == json.loads(theirs.inputs["policy"])


def test_batch_pool_without_a_job_role_or_dataset_version_says_so(provider):
    def program():
        net = _construct(provider, "net", "AwsNetwork", NETWORK)
        wiring = {
            "subnetIds": net["trainingSubnetIds"],
            "securityGroupId": net["trainingSecurityGroupId"],
            "instanceRoleArn": "arn:aws:iam::123456789012:role/train",
            "instanceProfileArn": "arn:aws:iam::123456789012:instance-profile/train",
            "datasetBucketName": "data",
            "datasetBucketArn": "arn:aws:s3:::data",
            "datasetKmsKeyArn": "arn:aws:kms:us-east-1:123456789012:key/data",
            "checkpointsBucketName": "ckpt",
            "checkpointsBucketArn": "arn:aws:s3:::ckpt",
            "checkpointsKmsKeyArn": "arn:aws:kms:us-east-1:123456789012:key/ckpt",
        }
        pool = {k: v for k, v in POOL.items() if k != "datasetVersion"}
        provider.construct(
            "train", "aistack:index:AwsTrainingPool", {**_floats(pool), **wiring}, None
        )

    with pytest.raises(ComponentInitError) as caught:
        engine.run(program, config=CONFIG)
    assert isinstance(caught.value.inner, ConfigError)
    assert caught.value.inner.fields == ["train.datasetVersion", "train.jobRoleArn"]


def test_fractional_max_nodes_is_the_python_callers_config_error(provider):
    with pytest.raises(ComponentInitError) as caught:
        _through_provider(provider, maxNodes=4.5)
    with pytest.raises(ConfigError) as python:
        _from_python(maxNodes=4.5)
    assert str(caught.value.inner) == str(python.value)
    assert str(python.value).startswith("Invalid configuration: train.maxNodes:")


_BUCKET_OUTPUTS = ("BucketName", "BucketArn", "KmsKeyArn")


def test_alarm_topic_wires_as_an_output(provider):
    """`alarmTopicArn: budget.alertTopicArn` in TypeScript: an Output, taken as the
    component's keyword argument (the config field of the same name takes literals only)."""

    def program():
        budget = _construct(
            provider,
            "budget",
            "AwsBudgetGuard",
            {
                "governance": GOVERNANCE,
                "region": "us-east-1",
                "monthlyLimit": 500,
                "alertEmails": ["ml-team@example.com"],
            },
        )
        pieces = [_construct(provider, n, f"Aws{c}", a) for n, c, a in _PIECES]
        network, identity, data, ckpt = pieces
        inputs = {
            **_floats(POOL),
            "alarmTopicArn": budget["alertTopicArn"],
            "subnetIds": network["trainingSubnetIds"],
            "securityGroupId": network["trainingSecurityGroupId"],
            "instanceRoleArn": _key(identity["roleArns"], "training"),
            "instanceProfileArn": _key(identity["instanceProfileArns"], "training"),
            "jobRoleArn": _key(identity["roleArns"], "training-job"),
            **{f"dataset{k}": data[k[0].lower() + k[1:]] for k in _BUCKET_OUTPUTS},
            **{f"checkpoints{k}": ckpt[k[0].lower() + k[1:]] for k in _BUCKET_OUTPUTS},
        }
        provider.construct("train", "aistack:index:AwsTrainingPool", inputs, None)

    graph = engine.run(program, config=CONFIG)
    alarm = graph.named("train-gpu-starvation")
    assert alarm.inputs["alarmActions"] == [graph.named("budget-alerts").outputs["arn"]]

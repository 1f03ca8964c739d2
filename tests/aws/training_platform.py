"""A TrainingPool wired to the real components it needs, shared by component and rule tests."""

from aistack import aws as aistack_aws

DIGEST = "123456789012.dkr.ecr.us-east-1.amazonaws.com/trainer@sha256:" + "ab" * 32
DATASET = {"name": "tickets", "version": "v3", "source": "crm export", "licence": "internal"}


def training_platform(
    governance,
    *,
    region="us-east-1",
    dataset_region="us-east-1",
    network_instance_types=None,
    **pool,
):
    """The pieces a pool needs, built with the real components, plus the pool. The network
    is sized for the pool's instance types unless `network_instance_types` says otherwise."""
    network = aistack_aws.Network(
        "net",
        {
            "governance": governance,
            "region": region,
            "trainingInstanceTypes": network_instance_types
            or pool.get("instanceTypes", ["g5.12xlarge"]),
        },
    )
    identity = aistack_aws.WorkloadIdentity("id", {"governance": governance})
    data = aistack_aws.DatasetBucket(
        "data",
        {"kind": "dataset", "region": dataset_region, "governance": governance, "dataset": DATASET},
    )
    ckpt = aistack_aws.DatasetBucket(
        "ckpt", {"kind": "checkpoints", "region": dataset_region, "governance": governance}
    )
    args = {
        "governance": governance,
        "region": region,
        "instanceTypes": ["g5.12xlarge"],
        "maxNodes": 4,
        "image": DIGEST,
        "maxRuntimeMinutes": 720,
        **pool,
    }
    return aistack_aws.TrainingPool(
        "train", args, network=network, identity=identity, dataset=data, checkpoints=ckpt
    )

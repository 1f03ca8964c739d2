"""A team's own Pulumi program: storage, identity and a Spot training pool from aistack,
plus one resource of the team's own (an alarm topic the pool reports to).

    aistack preview stacks/minimal-training        # offline
    cd stacks/minimal-training && pulumi up         # for real
"""

import pulumi
import pulumi_aws as aws

from aistack import aws as aistack
from aistack.config import Governance

config = pulumi.Config()
region = pulumi.Config("aws").require("region")
team = config.require("team")
governance = {
    "owner": team,
    "costCenter": f"{team}-research",
    "allowedRegions": [region],
}

# Our own resources carry the same governance tags through the provider's default tags.
provider = aws.Provider(
    "aws",
    region=region,
    default_tags=aws.ProviderDefaultTagsArgs(
        tags=Governance.parse(governance).aws_tags(f"{pulumi.get_project()}-{pulumi.get_stack()}")
    ),
)
alarms = aws.sns.Topic(
    f"{team}-alarms",
    kms_master_key_id="alias/aws/sns",
    opts=pulumi.ResourceOptions(provider=provider),
)

# Server access logs of the data buckets land here (S3 delivers them in-region only).
logs = aistack.DatasetBucket("logs", {"kind": "logs", "region": region, "governance": governance})
images = aistack.DatasetBucket(
    "images",
    {
        "kind": "dataset",
        "region": region,
        "governance": governance,
        "dataset": {
            "name": "street-scenes",
            "version": "v7",
            "source": "https://data.example.com/street-scenes",
            "licence": "CC-BY-4.0",
        },
    },
    access_logs=logs,
)
checkpoints = aistack.DatasetBucket(
    "checkpoints",
    {"kind": "checkpoints", "region": region, "governance": governance},
    access_logs=logs,
)
identity = aistack.WorkloadIdentity(
    "identity",
    {
        "governance": governance,
        # The Batch hosts' instance role, and the jobs' own role (only ecs-tasks may assume it).
        "workloads": [
            {"name": "training", "services": ["ec2.amazonaws.com"], "batchInstanceRole": True},
            {"name": "training-job", "services": ["ecs-tasks.amazonaws.com"]},
        ],
    },
)
network = aistack.Network(
    "network",
    {
        "governance": governance,
        "region": region,
        "trainingInstanceTypes": ["g6.xlarge"],
        "egress": "nat",
    },
)
pool = aistack.TrainingPool(
    "pool",
    {
        "governance": governance,
        "region": region,
        "instanceTypes": ["g6.xlarge", "g6.2xlarge"],
        "maxNodes": config.require_int("maxNodes"),
        "image": config.require("image"),
        "maxRuntimeMinutes": 240,
    },
    network=network,
    identity=identity,
    dataset=images,
    checkpoints=checkpoints,
)

pulumi.export("submit", pool.submit_command())
pulumi.export("alarms_topic", alarms.arn)

"""Which AWS resources hold state, for residency (C4) and the third parties that see it (G6)."""

from __future__ import annotations

__all__ = ["STATEFUL"]

STATEFUL = {
    "aws:s3/bucket:Bucket",
    "aws:cloudwatch/logGroup:LogGroup",
    "aws:ecr/repository:Repository",
    "aws:kms/key:Key",
    "aws:sagemaker/domain:Domain",
    "aws:efs/fileSystem:FileSystem",
    "aws:ebs/volume:Volume",
    "aws:sns/topic:Topic",
    "aws:batch/jobDefinition:JobDefinition",
    "aws:ec2/launchTemplate:LaunchTemplate",
}

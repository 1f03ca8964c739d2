// A dataset bucket and a GPU training pool from aistack, with the network, identity and
// checkpoint bucket the pool needs. Components are wired by the ids and ARNs they export:
// component objects cannot cross languages. Numbers are plain TypeScript numbers; aistack
// refuses a fraction where it needs a whole number (maxNodes: 4.5), as it does in Python.
import * as aistack from "@pulumi/aistack";

const governance = {
    owner: "ml-platform",
    costCenter: "research-1234",
    environment: "dev", // enums are string unions in the generated SDK
    allowedRegions: ["us-east-1"],
};
const region = "us-east-1";

const network = new aistack.AwsNetwork("network", {
    governance,
    region,
    trainingInstanceTypes: ["g5.12xlarge"],
});
const identity = new aistack.AwsWorkloadIdentity("identity", { governance });

const data = new aistack.AwsDatasetBucket("data", {
    kind: "dataset",
    region,
    governance,
    dataset: {
        name: "support-tickets",
        version: "2024-06-01",
        source: "crm export",
        licence: "internal",
    },
});
const checkpoints = new aistack.AwsDatasetBucket("checkpoints", {
    kind: "checkpoints",
    region,
    governance,
});

const pool = new aistack.AwsTrainingPool("pool", {
    governance,
    region,
    instanceTypes: ["g5.12xlarge"],
    maxNodes: 4,
    maxRuntimeMinutes: 720,
    image: "123456789012.dkr.ecr.us-east-1.amazonaws.com/trainer@sha256:" + "ab".repeat(32),
    datasetVersion: "2024-06-01",
    subnetIds: network.trainingSubnetIds.apply((ids) => ids ?? []),
    securityGroupId: network.trainingSecurityGroupId.apply((id) => id ?? ""),
    instanceRoleArn: identity.roleArns.apply((arns) => arns["training"]),
    instanceProfileArn: identity.instanceProfileArns.apply((arns) => arns["training"]),
    jobRoleArn: identity.roleArns.apply((arns) => arns["training-job"]),
    datasetBucketName: data.bucketName,
    datasetBucketArn: data.bucketArn,
    datasetKmsKeyArn: data.kmsKeyArn.apply((arn) => arn ?? ""),
    checkpointsBucketName: checkpoints.bucketName,
    checkpointsBucketArn: checkpoints.bucketArn,
    checkpointsKmsKeyArn: checkpoints.kmsKeyArn.apply((arn) => arn ?? ""),
});

export const dataset = data.uri;
export const jobQueue = pool.jobQueueArn;
export const jobDefinition = pool.jobDefinitionArn;

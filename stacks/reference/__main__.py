"""The aistack reference stack: the whole AWS AI platform, configured from Pulumi.<stack>.yaml.

Run offline with `make preview` (or `aistack preview`); deploy with `pulumi up`.
Every block below is one aistack component; its config key is its argument dict.
"""

import pulumi
import pulumi_aws as aws

from aistack import aws as aistack
from aistack.config import Governance, parse_all
from aistack.errors import ConfigError

config = pulumi.Config("aistack")
region = pulumi.Config("aws").require("region")
stack_id = f"{pulumi.get_project()}-{pulumi.get_stack()}"
governance = Governance.parse(config.require_object("governance"), where="governance")
problem = governance.region_problem(region, "aws:region")
if problem is not None:
    raise ConfigError([problem])


def settings(key: str, **extra: object) -> dict:
    """A component's config block with the shared governance (and region) added."""
    return {**(config.get_object(key) or {}), "governance": governance, "region": region, **extra}


training_settings = config.require_object("training")
inference_settings = config.require_object("inference")
# Every block validated before the first resource: one ConfigError naming every problem,
# and nothing half-created in the account by a `pulumi up` that stops at the fifth block.
args = parse_all(
    {
        "budget": (aistack.BudgetGuardArgs, settings("budget")),
        "logs": (aistack.DatasetBucketArgs, settings("logs", kind="logs")),
        "dataset": (
            aistack.DatasetBucketArgs,
            {
                "kind": "dataset",
                "region": region,
                "governance": governance,
                "dataset": config.require_object("dataset"),
            },
        ),
        "checkpoints": (aistack.DatasetBucketArgs, settings("checkpoints", kind="checkpoints")),
        "models": (aistack.DatasetBucketArgs, settings("models", kind="models")),
        "registry": (aistack.ContainerRegistryArgs, settings("registry")),
        "identity": (
            aistack.WorkloadIdentityArgs,
            {**(config.get_object("identity") or {}), "governance": governance},
        ),
        "network": (
            aistack.NetworkArgs,
            settings(
                "network",
                trainingInstanceTypes=training_settings.get("instanceTypes", []),
                inferenceInstanceTypes=[inference_settings.get("instanceType", "")],
            ),
        ),
        "training": (aistack.TrainingPoolArgs, settings("training")),
        "notebook": (aistack.NotebookArgs, settings("notebook")),
        "inference": (aistack.InferenceTierArgs, settings("inference")),
        "gpuQuota": (aistack.GpuQuotaArgs, settings("gpuQuota")),
        "audit": (aistack.AuditTrailArgs, settings("audit")),
    }
)

# Every resource carries the governance tags; budgets filter on the stack tag.
provider = aws.Provider(
    "aws",
    region=region,
    default_tags=aws.ProviderDefaultTagsArgs(tags=governance.aws_tags(stack_id)),
)
opts = pulumi.ResourceOptions(providers=[provider])

# Before anything runs: budget with daily alerts and a kill switch (C3).
budget = aistack.BudgetGuard("budget", args["budget"], opts)

# Storage: logs first, so the other buckets log their access to it (D1, D2, C4).
logs = aistack.DatasetBucket("logs", args["logs"], opts)
dataset = aistack.DatasetBucket("dataset", args["dataset"], opts, access_logs=logs)
checkpoints = aistack.DatasetBucket("checkpoints", args["checkpoints"], opts, access_logs=logs)
models = aistack.DatasetBucket("models", args["models"], opts, access_logs=logs)

# Who read the personal data, and who changed the platform: a multi-region, encrypted,
# validated CloudTrail trail with S3 data events on the dataset bucket (D5, G1).
audit = aistack.AuditTrail("audit", args["audit"], opts, data_buckets=[dataset])

# Images by digest in an immutable, scanned registry (E1).
registry = aistack.ContainerRegistry("registry", args["registry"], opts)

# One role per workload, and CI through GitHub OIDC: no stored keys (C6).
identity = aistack.WorkloadIdentity("identity", args["identity"], opts)

network = aistack.Network("network", args["network"], opts)

# Training on Spot that resumes, caches on NVMe and stops itself.
training = aistack.TrainingPool(
    "training",
    args["training"],
    opts,
    network=network,
    identity=identity,
    dataset=dataset,
    checkpoints=checkpoints,
    alarm_topic_arn=budget.alert_topic_arn,  # alarms reach the same people as budget alerts
)

notebook = aistack.Notebook(
    "notebook",
    args["notebook"],
    opts,
    network=network,
    execution_role_arn=identity.role_arn("notebook"),
)

# Notebook users read the dataset; nothing writes to it from the platform.
dataset.grant_read(identity.role("notebook"), name="notebook")

# Serving, apart from training: two explicit model versions behind weights (S1-S7, G2-G5).
# The data is confidential, so config gives `inference.certificateArn` (HTTPS only; without
# it, or `allowPlaintextHttp: true`, the tier refuses to be built).
inference = aistack.InferenceTier(
    "inference",
    args["inference"],
    opts,
    network=network,
    identity=identity,
    models=models,
    logs=logs,
    alarm_topic_arn=budget.alert_topic_arn,
)
registry.grant_pull(
    identity.role("inference"), repositories=["vllm-server", "nginx-gateway"], name="inference"
)
registry.grant_pull(identity.role("training"), repositories=["trainer"], name="training")

# GPU quota requested from the pools' maximums (C1).
quota = aistack.GpuQuota("gpu-quota", args["gpuQuota"], opts, pools=[training, inference])

# What to do next.
pulumi.export("region", region)
pulumi.export("stack_tag", stack_id)
pulumi.export("submit_training_job", training.submit_command())
pulumi.export("training_logs", training.log_group_name)
pulumi.export("dataset_uri", dataset.uri)
pulumi.export("checkpoints_uri", checkpoints.uri)
pulumi.export("models_uri", models.uri)
pulumi.export("image_repositories", registry.repository_urls)
pulumi.export("ci_role_arn", identity.ci_role_arn)
pulumi.export("notebook_url", notebook.studio_url)
pulumi.export("gpu_quota_requests", quota.summaries)
pulumi.export("budget_alert_topic", budget.alert_topic_arn)
pulumi.export("audit_trail", audit.trail_arn)
pulumi.export("inference_endpoint", inference.endpoint)
pulumi.export("inference_dashboard", inference.dashboard_name)
pulumi.export("inference_rollback", inference.rollback_command)

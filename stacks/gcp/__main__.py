"""The whole Google Cloud AI platform, configured from Pulumi.<stack>.yaml: the twin of the
AWS reference stack (stacks/reference), one aistack component per config block.

In the order a project needs them: the APIs; a budget with daily alerts and the kill switch;
the logs, dataset, checkpoint and model buckets in one region; Data Access audit logs for
the datasets, kept in the region; an Artifact Registry repository; a service account per
workload with GitHub Actions federation; a private network with training, inference and
notebook tiers; Spot GPU training in a managed instance group from zero; a Workbench
notebook that stops when idle; GPU quota for all of it; and the inference tier: two
explicit model versions on GPU VMs behind a weighted, throttled load balancer, with alerts
and a dashboard.

Rollback: `pulumi config set liveVersion <version> && pulumi up` moves all traffic to that
version (the URL map changes in place; the standby is warm, so nothing waits on a boot).

    aistack preview stacks/gcp        # offline
    cd stacks/gcp && pulumi up   # for real (docs/reference.md, "Google Cloud")
"""

from typing import Any

import pulumi

from aistack import gcp
from aistack.config import Governance, parse_all
from aistack.errors import ConfigError, Problem
from aistack.gcp.container_registry import registry_url

config = pulumi.Config()
project = pulumi.Config("gcp").require("project")
region = pulumi.Config("gcp").require("region")
governance = Governance.parse(config.require_object("governance"), where="governance")
problem = governance.region_problem(region, "gcp:region", cloud="gcp")
if problem is not None:
    raise ConfigError([problem])


def settings(key: str, **extra: object) -> dict:
    """A component's config block with the shared governance and region added."""
    return {**(config.get_object(key) or {}), "governance": governance, "region": region, **extra}


def live_version(key: str, data: tuple[str, list[dict[str, Any]]]) -> str:
    """`liveVersion` names one of the inference versions: it takes all the traffic."""
    live, versions = data
    names = [str(v.get("version")) for v in versions if isinstance(v, dict)]
    if live not in names:
        raise ConfigError(
            [
                Problem(
                    field=key,
                    message=f"{live!r} is not one of inference.versions ({', '.join(names)}).",
                    fix="set it to the version that takes the traffic, e.g. "
                    f"`pulumi config set liveVersion {names[0] if names else '1.0.0'}`.",
                )
            ]
        )
    return live


training = config.require_object("training")
inference = config.require_object("inference")
live = config.require("liveVersion")
served = [v for v in inference.get("versions") or [] if isinstance(v, dict)]
# The live version takes all the traffic; the others stay deployed at weight 0 (S6). A
# version that is not a mapping goes to the tier's validation as written, which names it.
inference = {
    **inference,
    "versions": [
        {**v, "weight": 100 if str(v.get("version")) == live else 0} if isinstance(v, dict) else v
        for v in inference.get("versions") or []
    ],
}

# Images are named in the stack's own registry (`trainer@sha256:...` in the config): the
# repository id ends in the stack's digest, so the program spells the registry's address.
REGISTRY = registry_url("ml-images", project=project, region=region)


def in_registry(block: dict[str, Any], *keys: str) -> dict[str, Any]:
    """`block` with each image under `keys` that names no registry put in the stack's."""
    images = {k: block[k] for k in keys if isinstance(block.get(k), str) and "/" not in block[k]}
    return {**block, **{k: f"{REGISTRY}/{image}" for k, image in images.items()}}


training = in_registry(training, "image")
inference = in_registry(inference, "image", "gatewayImage")

# Every block validated before the first resource: one ConfigError naming every problem,
# and nothing half-created in the project by a `pulumi up` that stops at the fifth block.
args = parse_all(
    {
        "apis": (gcp.ProjectServicesArgs, {"project": project}),
        "budget": (gcp.BudgetGuardArgs, settings("budget")),
        "logs": (gcp.DatasetBucketArgs, settings("logs", kind="logs")),
        "dataset": (
            gcp.DatasetBucketArgs,
            {
                "kind": "dataset",
                "region": region,
                "governance": governance,
                "dataset": config.require_object("dataset"),
            },
        ),
        "checkpoints": (gcp.DatasetBucketArgs, settings("checkpoints", kind="checkpoints")),
        "models": (gcp.DatasetBucketArgs, settings("models", kind="models")),
        "registry": (gcp.ContainerRegistryArgs, settings("registry")),
        "audit": (gcp.AuditLogsArgs, settings("audit")),
        "identity": (
            gcp.WorkloadIdentityArgs,
            {**(config.get_object("identity") or {}), "governance": governance},
        ),
        "network": (
            gcp.NetworkArgs,
            settings(
                "network",
                trainingMachineTypes=[training.get("machineType", "")],
                inferenceMachineTypes=[inference.get("machineType", "")],
                notebookMachineTypes=[(config.get_object("notebook") or {}).get("machineType", "")],
            ),
        ),
        # The block with its image in the stack's registry (in_registry), not as written.
        "training": (
            gcp.TrainingPoolArgs,
            {**training, "governance": governance, "region": region},
        ),
        "notebook": (
            gcp.NotebookArgs,
            {**(config.get_object("notebook") or {}), "governance": governance},
        ),
        "liveVersion": (live_version, (live, served)),
        "inference": (
            gcp.InferenceTierArgs,
            {**inference, "governance": governance, "region": region},
        ),
        "gpuQuota": (
            gcp.GpuQuotaArgs,
            {**(config.get_object("gpuQuota") or {}), "governance": governance},
        ),
    }
)

# Every other component waits for the APIs this enables (a fresh project has them off).
services = gcp.ProjectServices("apis", args["apis"])

# Storage in the one region: logs first, so the other buckets (the budget's too) log their
# access to it.
logs = gcp.DatasetBucket("logs", args["logs"], services=services)

# Before anything runs: the month's budget, a daily alert and the kill switch (C3). Its
# e-mail channels also receive the pool's and the tier's alerts.
budget = gcp.BudgetGuard("budget", args["budget"], services=services, access_logs=logs)
channels = budget.notification_channel_ids
dataset = gcp.DatasetBucket("dataset", args["dataset"], services=services, access_logs=logs)
checkpoints = gcp.DatasetBucket(
    "checkpoints", args["checkpoints"], services=services, access_logs=logs
)
models = gcp.DatasetBucket("models", args["models"], services=services, access_logs=logs)

# Who read the personal data, and who changed the platform: Data Access audit logs for Cloud
# Storage (off until a project turns them on) and every audit log kept in the region (D5, G1).
audit = gcp.AuditLogs("audit", args["audit"], services=services)

# Images by digest in an immutable, scanned, CMEK-encrypted repository (E1).
registry = gcp.ContainerRegistry("ml-images", args["registry"], services=services)

# A service account per workload, and CI through GitHub federation: no keys (C6).
identity = gcp.WorkloadIdentity("identity", args["identity"], services=services)
registry.grant_pull(identity.member("training"), name="training")
registry.grant_pull(identity.member("inference"), name="inference")
registry.grant_push(identity.member("ci"), name="ci")
# CI publishes approved model versions (gs://<models>/<modelName>/<version>/); the serving
# account only reads its model's prefix.
models.grant_write(identity.member("ci"), prefix=args["inference"].model_name, name="ci")

# Tier subnets and a default-deny firewall that admits each tier's account only (S1).
network = gcp.Network(
    "net",
    args["network"],
    services=services,
    dataset=dataset,
    service_accounts={tier: identity.email(tier) for tier in ("training", "inference", "notebook")},
)

# Training on Spot VMs from zero that cache the dataset, resume and stop themselves.
pool = gcp.TrainingPool(
    "train",
    args["training"],
    services=services,
    network=network,
    dataset=dataset,
    checkpoints=checkpoints,
    notification_channels=channels,
)

notebook = gcp.Notebook(
    "notebook", args["notebook"], services=services, network=network, bucket=dataset
)

# Serving, apart from training: explicit versions behind weights (S1-S7, G2-G5).
tier = gcp.InferenceTier(
    "serve",
    args["inference"],
    services=services,
    network=network,
    models=models,
    notification_channels=channels,
)

# GPU quota filed from the pools' maximums before they need it (C1).
quota = gcp.GpuQuota("gpu-quota", args["gpuQuota"], services=services, pools=[pool, notebook, tier])

# What to do next.
pulumi.export("region", region)
pulumi.export("submitCommand", pool.submit_command())
pulumi.export("datasetUri", dataset.uri)
pulumi.export("checkpointsUri", checkpoints.uri)
pulumi.export("modelsUri", models.uri)
pulumi.export("registry", registry.repository_url)
pulumi.export("auditLogBucket", audit.log_bucket.id)
pulumi.export("ciServiceAccount", identity.email("ci"))
pulumi.export("workloadIdentityProvider", identity.github_provider_name)
pulumi.export("jupyterlab", notebook.proxy_uri.apply(lambda host: f"https://{host}"))
pulumi.export("gpuQuota", quota.summaries)
pulumi.export("endpoint", tier.endpoint)
pulumi.export("liveVersion", live)
pulumi.export(
    "dashboard",
    {
        "name": tier.dashboard.id,
        "console": f"https://console.cloud.google.com/monitoring/dashboards?project={project}",
    },
)
pulumi.export(
    "rollbackCommand",
    {
        str(v["version"]): f"pulumi config set liveVersion {v['version']} && pulumi up"
        for v in served
        if str(v.get("version")) != live
    },
)

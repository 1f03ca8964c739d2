"""The Google Cloud guardrails a team puts in place before any GPU runs: the APIs, storage,
identity, audit logs of who reads the data, a budget with daily alerts and a kill switch,
GPU quota and an image registry.

    aistack preview stacks/gcp-guardrails          # offline
    cd stacks/gcp-guardrails && pulumi up          # for real (docs/reference.md, "Google Cloud")
"""

import pulumi

from aistack import gcp
from aistack.config import Governance, parse_all
from aistack.errors import ConfigError

config = pulumi.Config()
project = pulumi.Config("gcp").require("project")
region = pulumi.Config("gcp").require("region")
team = config.require("team")
governance = {
    "owner": team,
    "costCenter": f"{team}-research",
    "environment": pulumi.get_stack(),
    "allowedRegions": [region],
    "dataClassification": "confidential",
}
problem = Governance.parse(governance, where="governance").region_problem(
    region, "gcp:region", cloud="gcp"
)
if problem is not None:
    raise ConfigError([problem])

alert_emails = config.require_object("alertEmails")
# Every block validated before the first resource: one ConfigError naming every problem,
# and nothing half-created in the project by a `pulumi up` that stops at the fifth block.
args = parse_all(
    {
        "apis": (gcp.ProjectServicesArgs, {"project": project}),
        "logs": (
            gcp.DatasetBucketArgs,
            {"kind": "logs", "region": region, "governance": governance},
        ),
        "dataset": (
            gcp.DatasetBucketArgs,
            {
                "kind": "dataset",
                "region": region,
                "governance": governance,
                "dataset": {
                    "name": "support-tickets",
                    "version": "2024-06-01",
                    "source": "https://internal.example.com/exports/tickets",
                    "licence": "proprietary",
                    "containsPersonalData": True,
                    "legalBasis": "contract: DPA signed by dpo@example.com",
                },
            },
        ),
        "checkpoints": (
            gcp.DatasetBucketArgs,
            {"kind": "checkpoints", "region": region, "governance": governance},
        ),
        "identity": (
            gcp.WorkloadIdentityArgs,
            {
                "governance": governance,
                "accountPrefix": team,
                "workloads": [
                    {"name": "training", "projectRoles": ["roles/logging.logWriter"]},
                    {"name": "inference"},
                ],
                "github": {"repository": config.require("githubRepository"), "branches": ["main"]},
            },
        ),
        "images": (gcp.ContainerRegistryArgs, {"region": region, "governance": governance}),
        "audit": (gcp.AuditLogsArgs, {"region": region, "governance": governance}),
        "budget": (
            gcp.BudgetGuardArgs,
            {
                "governance": governance,
                "region": region,
                "billingAccount": config.require("billingAccount"),
                "monthlyLimit": config.require_int("monthlyLimit"),
                "alertEmails": alert_emails,
                # At 100 % of the month's budget the function scales this stack's labelled
                # training node pools and instance groups to zero, remembering their sizes.
                "killSwitch": True,
            },
        ),
        "gpuQuota": (
            gcp.GpuQuotaArgs,
            {
                "governance": governance,
                "contactEmail": alert_emails[0] if alert_emails else "",
                # The project's quota stack files them (quotaMode: check in Pulumi.dev.yaml).
                "mode": config.get("quotaMode") or "file",
                "needs": [
                    {
                        "pool": "training",
                        "region": region,
                        "machineTypes": ["g2-standard-8"],
                        "maxNodes": config.require_int("maxTrainingNodes"),
                        "market": "spot",
                    }
                ],
            },
        ),
    }
)

# Every other component waits for the APIs this enables (a fresh project has them off).
services = gcp.ProjectServices("apis", args["apis"])

# Usage logs of the other buckets land here.
logs = gcp.DatasetBucket("logs", args["logs"], services=services)
dataset = gcp.DatasetBucket("dataset", args["dataset"], services=services, access_logs=logs)
checkpoints = gcp.DatasetBucket(
    "checkpoints", args["checkpoints"], services=services, access_logs=logs
)

# Who reads the personal data: Data Access audit logs for Cloud Storage, off until a project
# turns them on, and every audit log kept in the region (D5, G1).
audit = gcp.AuditLogs("audit", args["audit"], services=services)

# A service account per workload and GitHub Actions through federation: no keys (C6).
identity = gcp.WorkloadIdentity("identity", args["identity"], services=services)
dataset.grant_read(identity.member("training"), name="training")
checkpoints.grant_write(identity.member("training"), prefix="runs", name="training")

# Images by digest in an immutable, scanned, CMEK-encrypted repository (E1).
registry = gcp.ContainerRegistry("images", args["images"], services=services)
registry.grant_pull(identity.member("training"), name="training")
registry.grant_push(identity.member("ci"), name="ci")

# The month's budget with a daily alert computed from its updates, and the kill switch (C3).
budget = gcp.BudgetGuard("budget", args["budget"], services=services, access_logs=logs)

# GPU quota filed before the pools need it, never lowering what is granted (C1).
quota = gcp.GpuQuota("gpu-quota", args["gpuQuota"], services=services)

pulumi.export("dataset_uri", dataset.uri)
pulumi.export("checkpoints_uri", checkpoints.uri)
pulumi.export("registry", registry.repository_url)
pulumi.export("ci_service_account", identity.email("ci"))
pulumi.export("workload_identity_provider", identity.github_provider_name)
pulumi.export("gpu_quota", quota.summaries)

"""A team's GPU training on Google Cloud in one program: a private network, the dataset,
checkpoint and log buckets in its region, a Spot GPU instance group from zero (the `mig`
scheduler: local SSD cache of the pinned dataset, checkpoint flush and restore, idle VMs
deleted through the group, a wall clock), a private GKE cluster with a Spot GPU node pool
from zero (the `gke` scheduler; the Kubernetes half is stacks/kubernetes-gke), a Workbench
notebook that stops when idle, the GPU quota for all of it and a budget with a kill switch.

The instance group's VMs and the GKE nodes are both the training tier's machines, so they
run as one account: the GKE cluster's node account, which the network's training firewall
rules admit (training to training for NCCL, the control plane to the kubelets).

    aistack preview stacks/gcp-training        # offline
    cd stacks/gcp-training && pulumi up         # for real, with a GCP project
"""

import pulumi

from aistack import gcp
from aistack.config import parse_all
from aistack.gcp.workload_identity import account_id_for

config = pulumi.Config()
project = pulumi.Config("gcp").require("project")
region = pulumi.Config("gcp").require("region")
team = config.require("team")
machine = config.require("machineType")
governance = {
    "owner": config.require("owner"),
    "costCenter": f"{team}-research",
    "environment": pulumi.get_stack(),
    "allowedRegions": [region],
}
here = {"region": region, "governance": governance}
CONTROL_PLANE = "172.16.0.0/28"
# The GKE cluster makes the nodes' account; named here so the network's firewall admits it.
node_account = account_id_for(team, "gke-nodes")  # ends in the stack's digest
node_email = f"{node_account}@{project}.iam.gserviceaccount.com"
alert_emails = config.require_object("alertEmails")

# Every block validated before the first resource: one ConfigError naming every problem.
args = parse_all(
    {
        "apis": (gcp.ProjectServicesArgs, {"project": project}),
        "logs": (gcp.DatasetBucketArgs, {"kind": "logs", **here}),
        "data": (
            gcp.DatasetBucketArgs,
            {
                "kind": "dataset",
                **here,
                "dataset": {
                    "name": config.require("datasetName"),
                    "version": config.require("datasetVersion"),
                    "licence": "proprietary",
                    "source": "https://internal.example.com/exports/images",
                },
            },
        ),
        "checkpoints": (gcp.DatasetBucketArgs, {"kind": "checkpoints", **here}),
        "identity": (gcp.WorkloadIdentityArgs, {"governance": governance}),
        "network": (
            gcp.NetworkArgs,
            {
                **here,
                "trainingMachineTypes": [machine],
                # The instance group's autohealing check (SSH's port: sshd answers early).
                "trainingHealthCheckPort": 22,
                "gkeControlPlaneCidr": CONTROL_PLANE,
                "notebook": True,
                "notebookMachineTypes": [machine],
            },
        ),
        "pool": (
            gcp.TrainingPoolArgs,
            {
                **here,
                "machineType": machine,
                "maxNodes": config.require_int("poolMaxNodes"),
                "maxRuntimeMinutes": config.require_int("maxRuntimeMinutes"),
                "image": config.require("trainingImage"),
                "sourceImage": config.require("sourceImage"),
                "datasetPrefix": config.require("datasetName"),
            },
        ),
        "cluster": (
            gcp.GkeClusterArgs,
            {
                **here,
                # Wired to the network below; placeholders to validate the rest now.
                "network": "network",
                "subnetwork": "subnetwork",
                "podsRangeName": "training-pods",
                "servicesRangeName": "training-services",
                "nodeAccountId": node_account,
                "masterIpv4CidrBlock": CONTROL_PLANE,
            },
        ),
        "gkePool": (
            gcp.GpuNodePoolArgs,
            {
                "governance": governance,
                "machineType": machine,
                "market": "spot",
                "maxNodes": config.require_int("gkeMaxNodes"),
                "maxNodeHours": 24,
            },
        ),
        "notebook": (
            gcp.NotebookArgs,
            {
                "governance": governance,
                "machineType": machine,
                "idleMinutes": config.require_int("notebookIdleMinutes"),
                "owner": config.require("notebookOwner"),
            },
        ),
        "quota": (
            gcp.GpuQuotaArgs,
            {
                "governance": governance,
                "contactEmail": alert_emails[0] if alert_emails else "",
                # One preference per quota and dimensions in a project: the project's quota
                # stack files them, this one checks (quotaMode: check in Pulumi.dev.yaml).
                "mode": config.get("quotaMode") or "file",
            },
        ),
        "budget": (
            gcp.BudgetGuardArgs,
            {
                **here,
                "billingAccount": config.require("billingAccount"),
                "monthlyLimit": config.require_int("monthlyLimit"),
                "alertEmails": alert_emails,
                "killSwitch": True,
            },
        ),
    }
)

services = gcp.ProjectServices("apis", args["apis"])
logs = gcp.DatasetBucket("logs", args["logs"], services=services)
data = gcp.DatasetBucket("data", args["data"], services=services, access_logs=logs)
checkpoints = gcp.DatasetBucket(
    "checkpoints", args["checkpoints"], services=services, access_logs=logs
)
identity = gcp.WorkloadIdentity("ids", args["identity"], services=services)
network = gcp.Network(
    "net",
    args["network"],
    services=services,
    dataset=data,
    service_accounts={"training": node_email, "notebook": identity.email("notebook")},
)
# The mig scheduler: Spot VMs from zero that cache the dataset, resume and stop themselves.
pool = gcp.TrainingPool(
    "train", args["pool"], services=services, network=network, dataset=data, checkpoints=checkpoints
)
# The gke scheduler: a private cluster and a Spot GPU node pool from zero.
cluster = gcp.GkeCluster(
    "gke",
    {
        **args["cluster"].model_dump(by_alias=True),
        "network": network.network_self_link,
        "subnetwork": network.subnet_self_links["training"],
        "podsRangeName": network.pods_range_name,
        "servicesRangeName": network.services_range_name,
    },
    services=services,
)
gke_pool = gcp.GpuNodePool(
    "l4-spot",
    {**args["gkePool"].model_dump(by_alias=True), "zones": network.zones("training")},
    cluster=cluster,
)
notebook = gcp.Notebook("ana", args["notebook"], services=services, network=network, bucket=data)
gcp.GpuQuota("gpu-quota", args["quota"], services=services, pools=[pool, gke_pool, notebook])
gcp.BudgetGuard("budget", args["budget"], services=services, access_logs=logs)

pulumi.export("submitCommand", pool.submit_command())
pulumi.export("kueueFlavors", gke_pool.kueue_flavors())
pulumi.export("jupyterlab", notebook.proxy_uri.apply(lambda host: f"https://{host}"))

"""Small programs the scan tests judge, besides the example stacks: each makes checkov (or
the schema check) fail or pass for one reason."""

import json

import pulumi_aws as aws
import pulumi_kubernetes as kubernetes
import yaml

from aistack import k8s
from tests.k8s.conftest import GOVERNANCE
from tests.k8s.test_checkov import SERVER

AWS_CONFIG = {"aws:region": "us-east-1"}


def aws_bucket_and_template() -> None:
    """An unencrypted bucket and a launch template whose IMDS hop limit is 2."""
    aws.s3.Bucket("plain")
    aws.ec2.LaunchTemplate(
        "open-imds",
        image_id="ami-12345678",
        metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
            http_tokens="required", http_put_response_hop_limit=2
        ),
    )


def _deployment(name, namespace, spec):
    return kubernetes.apps.v1.Deployment(
        name, metadata={"name": "server", "namespace": namespace}, spec=spec
    )


def kubernetes_namespaces() -> None:
    """A serving namespace with its default deny and a hardened server in it, and the same
    server in a namespace without any policy."""
    k8s.TeamNamespace(
        "ml-serve",
        {
            "team": "ml",
            "tier": "serve",
            "gpus": 2,
            "governance": GOVERNANCE,
            "serviceAccounts": [{"name": "server"}],
        },
    )
    _deployment("guarded-server", "ml-serve", SERVER["spec"])
    kubernetes.core.v1.Namespace("elsewhere", metadata={"name": "elsewhere"})
    _deployment("loose-server", "elsewhere", SERVER["spec"])


def aws_and_kubernetes() -> None:
    """Both of the above in one program: checkov scans it with both of its frameworks."""
    aws_bucket_and_template()
    kubernetes_namespaces()


def kubernetes_typo() -> None:
    """A Deployment with a misspelt field (`replica`)."""
    kubernetes.core.v1.ConfigMap("settings", metadata={"namespace": "team"}, data={"a": "b"})
    _deployment("typo-server", "team", {**SERVER["spec"], "replica": 2})


def kubernetes_jobset() -> None:
    """A training namespace and a 4-node JobSet template (kept in a ConfigMap)."""
    team = k8s.TeamNamespace(
        "ml-train",
        {
            "team": "ml",
            "gpus": 32,
            "governance": GOVERNANCE,
            "serviceAccounts": [
                {
                    "name": "trainer",
                    "identity": "gke-workload-identity",
                    "gcpServiceAccount": "trainer@team-ml-prod.iam.gserviceaccount.com",
                }
            ],
            "allowEgress": [{"cidr": "199.36.153.8/30", "purpose": "Google APIs: the buckets"}],
        },
    )
    k8s.TrainingJobTemplate(
        "llama",
        {
            "governance": GOVERNANCE,
            "queue": "ml-train",
            "serviceAccount": "trainer",
            "image": "registry.example.com/llama@sha256:" + "ab" * 32,
            "nodes": 4,
            "gpusPerNode": 8,
            "maxRuntimeMinutes": 720,
            "checkpointUri": "gs://team-ml-checkpoints/llama",
            "datasetUri": "gs://team-ml-datasets/tokens",
            "datasetVersion": "v3",
        },
        team=team,
    )


def kubernetes_templates_with_typos() -> None:
    """Templates written by hand into ConfigMaps, each with a misspelt field: a Job's
    `backofLimit`, a JobSet's `failurePolicy.maxRestart`, a JobSet pod's `containerz`."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"generateName": "train-"},
        "spec": {
            "backofLimit": 3,
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "t", "image": "x"}]}
            },
        },
    }
    pod = {"restartPolicy": "Never", "containerz": [{"name": "t", "image": "x"}]}
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"generateName": "dist-"},
        "spec": {
            "failurePolicy": {"maxRestart": 3},
            "replicatedJobs": [
                {
                    "name": "workers",
                    "replicas": 1,
                    "template": {"spec": {"template": {"spec": pod}}},
                }
            ],
        },
    }
    kubernetes.core.v1.ConfigMap(
        "templates",
        metadata={"namespace": "team"},
        data={"job.json": json.dumps(job), "jobset.yaml": yaml.safe_dump(jobset)},
    )


GCP_CONFIG = {"gcp:project": "team-ml-prod", "gcp:region": "europe-west4"}


def gcp_training_pool() -> None:
    """A team's Spot GPU training pool on Compute Engine (gcp.TrainingPool, mig), with the
    network, buckets (their usage logs in a logs bucket) and APIs it needs."""
    from aistack import gcp
    from tests.gcp.conftest import GOVERNANCE
    from tests.gcp.test_network import ACCOUNTS
    from tests.gcp.test_training_pool import DATASET, PROJECT, pool_args

    apis = gcp.ProjectServices("apis", {"project": PROJECT})
    region = {"region": "europe-west4", "governance": GOVERNANCE}
    logs = gcp.DatasetBucket("logs", {"kind": "logs", **region}, services=apis)
    data = gcp.DatasetBucket(
        "data", {"kind": "dataset", "dataset": DATASET, **region}, services=apis,
        access_logs=logs,
    )  # fmt: skip
    ckpt = gcp.DatasetBucket(
        "ckpt", {"kind": "checkpoints", **region}, services=apis, access_logs=logs
    )
    net = gcp.Network(
        "net",
        {**region, "trainingMachineTypes": ["g2-standard-8"], "trainingHealthCheckPort": 22},
        services=apis,
        service_accounts=ACCOUNTS,
    )
    gcp.TrainingPool(
        "train",
        pool_args(GOVERNANCE),
        services=apis,
        network=net,
        dataset=data,
        checkpoints=ckpt,
    )


def gcp_inference_tier() -> None:
    """A team's serving tier on Compute Engine (gcp.InferenceTier): two versions behind an
    internal managed load balancer with Cloud Armor, the network, models bucket (its usage
    logs in a logs bucket) and APIs it needs."""
    from aistack import gcp
    from tests.gcp.conftest import GOVERNANCE
    from tests.gcp.test_inference_tier import PROJECT, tier_args
    from tests.gcp.test_network import ACCOUNTS

    apis = gcp.ProjectServices("apis", {"project": PROJECT})
    region = {"region": "europe-west4", "governance": GOVERNANCE}
    logs = gcp.DatasetBucket("logs", {"kind": "logs", **region}, services=apis)
    models = gcp.DatasetBucket("models", {"kind": "models", **region}, services=apis,
                               access_logs=logs)  # fmt: skip
    net = gcp.Network(
        "net",
        {**region, "inferenceMachineTypes": ["g2-standard-8"], "proxyOnlySubnet": True},
        services=apis,
        service_accounts=ACCOUNTS,
    )
    gcp.InferenceTier("serve", tier_args(GOVERNANCE), services=apis, network=net, models=models)

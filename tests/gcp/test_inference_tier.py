"""gcp.InferenceTier: explicit versions on GPU VMs behind a weighted regional load balancer
with a Cloud Armor throttle, the AWS gateway on every VM, alerts and a dashboard."""

from __future__ import annotations

from aistack import gcp
from aistack.engine.gcp_cloud import missing_api_dependencies
from tests.gcp.test_network import ACCOUNTS

PROJECT = "team-ml-prod"
TEMPLATE = "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate"
GROUP = "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager"
AUTOSCALER = "gcp:compute/regionAutoscaler:RegionAutoscaler"
BACKEND = "gcp:compute/regionBackendService:RegionBackendService"
URL_MAP = "gcp:compute/regionUrlMap:RegionUrlMap"
ARMOR = "gcp:compute/regionSecurityPolicy:RegionSecurityPolicy"
RULE = "gcp:compute/forwardingRule:ForwardingRule"
ALERT = "gcp:monitoring/alertPolicy:AlertPolicy"
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
IMAGE = "europe-west4-docker.pkg.dev/team/serve/vllm@sha256:" + "b" * 64
NGINX = "europe-west4-docker.pkg.dev/team/serve/nginx@sha256:" + "c" * 64
BOOT_IMAGE = "projects/deeplearning-platform-release/global/images/common-cu124-v20250101"
CERT = f"projects/{PROJECT}/regions/europe-west4/sslCertificates/serve"


def tier_args(governance, **overrides):
    return {
        "governance": governance,
        "region": "europe-west4",
        "modelName": "support-bot",
        "versions": [
            {"version": "1.4.0", "weight": 90},
            {"version": "1.3.2", "weight": 10},
        ],
        "image": IMAGE,
        "gatewayImage": NGINX,
        "machineType": "g2-standard-8",
        "sourceImage": BOOT_IMAGE,
        "maxNodes": 4,
        "requestLogging": "metadata",
        "certificate": CERT,
        "latencySloMs": 4000,
        "quality": {"threshold": 0.8},
        **overrides,
    }


def stack(governance, seen=None, network=None, models_region="europe-west4", **overrides):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        models = gcp.DatasetBucket(
            "models",
            {"kind": "models", "region": models_region, "governance": governance},
            services=apis,
        )
        net = gcp.Network(
            "net",
            {
                "governance": governance,
                "region": "europe-west4",
                "inferenceMachineTypes": ["g2-standard-8"],
                "proxyOnlySubnet": True,
                **(network or {}),
            },
            services=apis,
            service_accounts=ACCOUNTS,
        )
        tier = gcp.InferenceTier(
            "serve", tier_args(governance, **overrides), services=apis, network=net, models=models
        )
        if seen is not None:
            seen["tier"] = tier

    return program


def test_each_version_gets_template_group_autoscaler_and_backend(run, governance):
    graph = run(stack(governance))
    for kind in (TEMPLATE, GROUP, AUTOSCALER, BACKEND):
        assert len(graph.of_type(kind)) == 2, kind
    assert graph.named("serve-1-4-0-mig").inputs["name"] == "serve-1-4-0"
    assert not missing_api_dependencies(graph)

"""Small programs the scan tests judge, besides the example stacks: each makes checkov (or
the schema check) fail or pass for one reason."""

import pulumi_aws as aws
import pulumi_kubernetes as kubernetes

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


def kubernetes_typo() -> None:
    """A Deployment with a misspelt field (`replica`)."""
    kubernetes.core.v1.ConfigMap("settings", metadata={"namespace": "team"}, data={"a": "b"})
    _deployment("typo-server", "team", {**SERVER["spec"], "replica": 2})

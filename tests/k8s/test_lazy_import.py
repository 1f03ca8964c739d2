"""pulumi_kubernetes loads only when a stack uses a Kubernetes component: an AWS or GCP stack
never imports it, and a Kubernetes stack never imports pulumi_aws or pulumi_gcp (as
tests/gcp/test_lazy_import.py proves for the two clouds)."""

import json
import subprocess
import sys
import textwrap

PROGRAM = """
import json, sys
from aistack import aws, engine, gcp, k8s

GOVERNANCE = {{"owner": "a", "costCenter": "b", "allowedRegions": ["us-east-1", "europe-west4"]}}

def aws_stack():
    aws.DatasetBucket("logs", {{"kind": "logs", "region": "us-east-1", "governance": GOVERNANCE}})

def gcp_stack():
    apis = gcp.ProjectServices("apis", {{"project": "p-1234"}})
    gcp.DatasetBucket(
        "logs", {{"kind": "logs", "region": "europe-west4", "governance": GOVERNANCE}},
        services=apis,
    )

def k8s_stack():
    k8s.TeamNamespace("ml", {{"team": "ml", "gpus": 0, "governance": GOVERNANCE}})

engine.run({which}_stack, config={{"aws:region": "us-east-1", "gcp:project": "p-1234"}})
SDKS = ("pulumi_aws", "pulumi_gcp", "pulumi_kubernetes")
print(json.dumps({{m: m in sys.modules for m in SDKS}}))
"""


def _modules_loaded_by(which: str) -> dict[str, bool]:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROGRAM.format(which=which))],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_an_aws_stack_never_imports_pulumi_kubernetes():
    assert _modules_loaded_by("aws")["pulumi_kubernetes"] is False


def test_a_gcp_stack_never_imports_pulumi_kubernetes():
    assert _modules_loaded_by("gcp")["pulumi_kubernetes"] is False


def test_a_kubernetes_stack_imports_neither_cloud_sdk():
    assert _modules_loaded_by("k8s") == {
        "pulumi_aws": False,
        "pulumi_gcp": False,
        "pulumi_kubernetes": True,
    }

"""Each cloud's SDK loads only when a stack uses that cloud: `from aistack import aws, gcp`
is free, and a program on one cloud never imports the other's provider (pulumi_aws alone
takes seconds and hundreds of MB to import)."""

import json
import subprocess
import sys
import textwrap

PROGRAM = """
import json, sys
from aistack import aws, engine, gcp

GOVERNANCE = {{"owner": "a", "costCenter": "b", "allowedRegions": ["us-east-1", "europe-west4"]}}

def aws_stack():
    aws.DatasetBucket("logs", {{"kind": "logs", "region": "us-east-1", "governance": GOVERNANCE}})

def gcp_stack():
    apis = gcp.ProjectServices("apis", {{"project": "p-1234"}})
    gcp.DatasetBucket(
        "logs", {{"kind": "logs", "region": "europe-west4", "governance": GOVERNANCE}},
        services=apis,
    )

engine.run({which}_stack, config={{"aws:region": "us-east-1", "gcp:project": "p-1234"}})
print(json.dumps({{m: m in sys.modules for m in ("pulumi_aws", "pulumi_gcp")}}))
"""


def _modules_loaded_by(which: str) -> dict[str, bool]:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROGRAM.format(which=which))],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_an_aws_stack_never_imports_pulumi_gcp():
    assert _modules_loaded_by("aws") == {"pulumi_aws": True, "pulumi_gcp": False}


def test_a_gcp_stack_never_imports_pulumi_aws():
    assert _modules_loaded_by("gcp") == {"pulumi_aws": False, "pulumi_gcp": True}

"""Which provider SDKs a one-cloud stack imports, each kind of stack run in a fresh
interpreter (tests/gcp/test_lazy_import.py and tests/k8s/test_lazy_import.py).

The program imports every aistack cloud package (`aws`, `gcp`, `k8s`), runs one stack on
the simulated engine and reports which of the three SDKs are in `sys.modules`. Each kind is
run once per process and its answer kept: the two lazy-import modules ask for the same AWS
and GCP stacks, and share one xdist group so that one worker answers them all; every kind
still starts from a clean interpreter.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import textwrap

SDKS = ("pulumi_aws", "pulumi_gcp", "pulumi_kubernetes")

#: The xdist group of the modules that ask, so that one worker runs each kind once.
XDIST_GROUP = "sdk-lazy-imports"

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


@functools.cache
def _loaded(which: str) -> tuple[tuple[str, bool], ...]:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROGRAM.format(which=which))],
        capture_output=True,
        text=True,
        check=True,
    )
    return tuple(json.loads(result.stdout.strip().splitlines()[-1]).items())


def modules_loaded_by(which: str, sdks: tuple[str, ...] = SDKS) -> dict[str, bool]:
    """{sdk: imported?} after a fresh interpreter ran the `which` ("aws", "gcp", "k8s")
    stack."""
    loaded = dict(_loaded(which))
    return {sdk: loaded[sdk] for sdk in sdks}

"""A team's test run shows no warnings from aistack's own use of pulumi-aws."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """
from aistack import aws, engine
from tests.aws.conftest import GOVERNANCE
from tests.aws.training_platform import training_platform
def program():
    training_platform(GOVERNANCE)
    aws.BudgetGuard("budget", {
        "governance": GOVERNANCE, "region": "us-east-1", "monthlyLimit": 100,
        "alertEmails": ["a@example.com"], "killSwitch": True,
    })
engine.run(program)
"""


def test_building_aws_components_emits_no_deprecation_warning():
    # A fresh interpreter: pulumi-aws warns once, at import, so only a new process sees it.
    result = subprocess.run(
        [sys.executable, "-W", "always::DeprecationWarning", "-c", PROGRAM],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "DeprecationWarning" not in result.stderr, result.stderr[-2000:]

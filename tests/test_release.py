"""One version, said the same everywhere: pyproject.toml, `aistack --version`, the
CHANGELOG's latest release and the README's install lines; and an OSI license file."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_aistack_version_prints_the_pyproject_version():
    from typer.testing import CliRunner

    from aistack.cli import app

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"aistack {VERSION}"


def test_the_changelog_s_latest_release_is_the_version():
    releases = re.findall(
        r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", (ROOT / "CHANGELOG.md").read_text(), re.M
    )
    assert releases and releases[0] == VERSION


def test_the_readme_pins_the_version_and_names_no_tag_that_does_not_exist():
    readme = (ROOT / "README.md").read_text()
    assert f"aistack-{VERSION}-py3-none-any.whl" in readme
    tags = set(
        subprocess.run(
            ["git", "tag"], capture_output=True, text=True, cwd=ROOT, timeout=30
        ).stdout.split()
    )
    for ref in re.findall(r"@(v\d+\.\d+\.\d+)\b", readme):
        assert ref in tags, f"the README names {ref}, which is no tag here"


def test_the_license_is_apache_2():
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"] == (
        "Apache-2.0"
    )

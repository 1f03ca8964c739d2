"""`aistack scan` as a user runs it: failed checks listed with their guideline, exit 1;
the reference stack clean beyond its skip list, exit 0."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

from typer.testing import CliRunner

from aistack.cli import app
from tests._harness import checkov_service

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _project(tmp_path: Path, program: str) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: tiny\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (tmp_path / "__main__.py").write_text(textwrap.dedent(program))
    return tmp_path


def test_scan_lists_failed_checks_with_guideline_and_exits_1(tmp_path, monkeypatch):
    # checkov as the user's `aistack scan` starts it, a process per scan and per check
    # list, here answered by the session's checkov service (tests/_harness/checkov_service.py) when
    # it runs: the same checkov, without a 3 s import per process. The session's checkov
    # job runs the real executable as a process (tests/scan/conftest.py, ALONE).
    (tmp_path / "bin").mkdir()
    service = checkov_service.executable(tmp_path / "bin")
    if service is not None:
        monkeypatch.setenv("AISTACK_CHECKOV", str(service))
    project = _project(tmp_path, 'import pulumi_aws as aws\naws.s3.Bucket("raw")\n')
    result = runner.invoke(app, ["scan", str(project)])
    assert result.exit_code == 1, result.output
    assert "CKV_AWS_145" in result.output and "raw" in result.output
    # Where the check is written, whole (not cut to fit a table column).
    assert re.search(r"https://github\.com/bridgecrewio/checkov/\S+\.(py|json)\n", result.output)


def test_scan_json_without_checkov_reports_a_made_up_iam_action(tmp_path):
    project = _project(
        tmp_path,
        """
        import json, pulumi_aws as aws
        role = aws.iam.Role("worker", assume_role_policy=json.dumps({
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"},
                           "Action": "sts:AssumeRole"}]}))
        aws.iam.RolePolicy("worker-data", role=role.id, policy=json.dumps({
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "s3:ReadEverything",
                           "Resource": "arn:aws:s3:::b/*"}]}))
        """,
    )
    result = runner.invoke(app, ["scan", str(project), "--no-checkov", "--format", "json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert report["checkov"] is None
    assert [(f["check_id"], f["resource"]) for f in report["failed"]] == [
        ("IAM_UNKNOWN_ACTION", "worker-data")
    ]


def test_scan_of_the_reference_stack_iam_passes_with_nothing_pending():
    result = runner.invoke(app, ["scan", str(ROOT), "--no-checkov", "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] and report["iam"]["documents"] >= 29
    assert report["pending"] == []

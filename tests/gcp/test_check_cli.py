"""`aistack check` judges Google Cloud resources: a small GCP program, offline."""

import json
import textwrap

from typer.testing import CliRunner

from aistack.cli import app

runner = CliRunner()


def _project(tmp_path, body):
    (tmp_path / "Pulumi.yaml").write_text("name: tiny-gcp\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(
        "config:\n  gcp:project: team-ml-prod\n  gcp:region: europe-west4\n"
    )
    (tmp_path / "__main__.py").write_text(textwrap.dedent(body))
    return tmp_path


def _findings(result):
    items = json.loads(result.output)["items"]
    return {
        (f["rule_id"], f["resource_name"]): f["status"]
        for item in items
        for f in item.get("findings", [])
    }


def test_check_fails_a_bare_gcs_bucket(tmp_path):
    project = _project(
        tmp_path,
        """
        import pulumi_gcp as gcp
        gcp.storage.Bucket("raw", location="EU")
        """,
    )
    result = runner.invoke(app, ["check", str(project), "--format", "json"])
    assert result.exit_code == 1, result.output
    findings = _findings(result)
    for rule_id in ("AIS-D1-02", "AIS-D1-03", "AIS-C4-02"):
        assert findings[(rule_id, "raw")] == "non-compliant"


def test_check_passes_the_gcp_rules_on_a_dataset_bucket(tmp_path):
    project = _project(
        tmp_path,
        """
        from aistack import gcp
        GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
        apis = gcp.ProjectServices("apis", {"project": "team-ml-prod"})
        logs = gcp.DatasetBucket(
            "logs", {"kind": "logs", "region": "europe-west4", "governance": GOVERNANCE},
            services=apis,
        )
        """,
    )
    result = runner.invoke(app, ["check", str(project), "--format", "json"])
    findings = _findings(result)
    for rule_id in ("AIS-D1-02", "AIS-D1-03", "AIS-C4-02"):
        assert findings[(rule_id, "logs-bucket")] == "compliant", result.output


def test_check_passes_the_gcp_identity_and_registry_rules(tmp_path):
    project = _project(
        tmp_path,
        """
        from aistack import gcp
        GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
        apis = gcp.ProjectServices("apis", {"project": "team-ml-prod"})
        identity = gcp.WorkloadIdentity("ml", {
            "governance": GOVERNANCE, "accountPrefix": "team-ml",
            "workloads": [{"name": "training", "projectRoles": ["roles/logging.logWriter"]}],
            "github": {"repository": "acme/ml", "branches": ["main"]},
        }, services=apis)
        registry = gcp.ContainerRegistry(
            "images", {"region": "europe-west4", "governance": GOVERNANCE}, services=apis
        )
        registry.grant_push(identity.member("ci"), name="ci")
        """,
    )
    result = runner.invoke(app, ["check", str(project), "--format", "json"])
    findings = _findings(result)
    for rule_id in ("AIS-E1-03", "AIS-E1-04", "AIS-E1-05", "AIS-C4-02"):
        assert findings[(rule_id, "images-repository")] == "compliant", result.output
    assert findings[("AIS-C6-07", "ml-github-provider")] == "compliant"
    assert findings[("AIS-C6-06", "ml-ci")] == "compliant"
    assert findings[("AIS-C6-08", "ml-training-logging-logwriter")] == "compliant"
    # The program has no budget, so C3 (and only C3) fails: a GCP stack needs its BudgetGuard.
    failing = {rule for (rule, _), status in findings.items() if status == "non-compliant"}
    assert failing and {rule[:6] for rule in failing} == {"AIS-C3"}, result.output

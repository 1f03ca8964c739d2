"""checkov over gcp.Notebook: its Workbench instance passes checkov's Workbench graph checks
(CKV2_GCP_27 disks under a customer key, CKV2_GCP_28 no public IP), its key and grants
pass theirs, and nothing fails beyond the reasoned skip list."""

from __future__ import annotations

from aistack.scan import SkipList


def test_the_notebook_passes_checkovs_workbench_cmek_and_private_checks(stack_scans):
    passed = stack_scans["gcp-notebook"].passed
    for check in ("CKV2_GCP_27", "CKV2_GCP_28"):
        assert (check, "nb-instance") in passed, check
    assert ("CKV_GCP_43", "nb-key") in passed  # rotated at most every 90 days
    assert ("CKV_GCP_117", "nb-log-writer") in passed  # no basic role


def test_the_notebook_program_fails_nothing_the_skip_list_does_not_explain(stack_scans):
    findings = stack_scans["gcp-notebook"].findings
    triage = SkipList.load().triage(findings)
    assert not triage.failed, [f"{f.check_id} {f.location}: {f.title}" for f in triage.failed]
    assert not [f for f in findings if f.resource.startswith("nb")]

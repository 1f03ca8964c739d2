"""External validators over a recorded stack: checkov on the stack as a Terraform plan,
every AWS IAM policy document against an IAM action database, and every Google IAM role
and custom-role permission against Google's published roles reference.

`aistack scan` runs both and fails on anything the skip list (`skips.yaml`) does not
explain; tests run them over the example stacks (docs/scan.md). Names are imported on first
use, so `aistack --help` does not load the engine.
"""

from __future__ import annotations

from aistack._lazy import lazy_exports

_EXPORTS = {
    "CheckovMissingError": "aistack.scan.checkov",
    "CheckovResult": "aistack.scan.checkov",
    "find_checkov": "aistack.scan.checkov",
    "run_checkov": "aistack.scan.checkov",
    "run_checkov_many": "aistack.scan.checkov",
    "DEFAULT_SKIPS": "aistack.scan.findings",
    "Finding": "aistack.scan.findings",
    "SkipEntry": "aistack.scan.findings",
    "SkipList": "aistack.scan.findings",
    "Triage": "aistack.scan.findings",
    "GcpRoleData": "aistack.scan.gcp_iam",
    "check_graph": "aistack.scan.iam",
    "policy_documents": "aistack.scan.iam",
    "ScanResult": "aistack.scan.runner",
    "scan": "aistack.scan.runner",
    "scan_many": "aistack.scan.runner",
    "terraform_type": "aistack.scan.tfplan",
    "to_terraform_plan": "aistack.scan.tfplan",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("aistack.scan", _EXPORTS, globals())

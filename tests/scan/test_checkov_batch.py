"""One checkov process for several stacks (scan_many) gives each the result its own
process gives. The session's batch (conftest) holds every example stack and program; the
ALONE programs were also scanned in processes of their own."""

from pathlib import Path

import pytest

from aistack import engine
from aistack.scan import checkov as checkov_module
from aistack.scan import run_checkov_many
from aistack.scan.checkov import _interpreter_of, find_checkov
from tests.scan.conftest import ALONE


@pytest.mark.parametrize("name", ALONE)
def test_a_stack_in_the_batch_has_the_result_of_its_own_process(stack_scans, name):
    batch, alone = stack_scans[name], stack_scans[f"{name} alone"]
    assert (batch.summary, batch.findings, batch.passed, batch.resources) == (
        alone.summary,
        alone.findings,
        alone.passed,
        alone.resources,
    )


def test_the_program_scanned_alone_was_judged_by_both_frameworks(stack_scans):
    """Both of checkov's runners aistack uses ran in the proving process: it found what the
    batch found in the program's two halves, each scanned on its own (the Terraform plan's
    and the Kubernetes objects' findings), and nothing else."""

    def found(name):
        return {(f.check_id, f.resource) for f in stack_scans[name].findings}

    halves = found("aws-plain") | found("k8s-namespaces")
    assert {resource for _, resource in halves} >= {"plain", "loose-server"}
    assert found("aws-and-k8s alone") == halves


def test_each_stack_of_the_batch_was_judged_on_its_own_resources(stack_scans):
    """checkov's runners keep their first run's definitions unless each scan gets fresh
    ones: then every stack after the first would report the first's checks."""
    assert {f.resource for f in stack_scans["k8s-namespaces"].findings} == {"loose-server"}
    assert {f.resource for f in stack_scans["aws-plain"].findings} == {"plain", "open-imds"}
    passed = {summary.summary["checkov"]["passed"] for summary in stack_scans.values()}
    assert len(passed) > len(stack_scans) / 2  # not one stack's count repeated


def test_the_batch_s_check_list_is_the_one_checkov_prints(stack_scans, printed_check_list):
    # `checkov --list` ran in a process of its own beside the batch (tests/scan/conftest.py);
    # stack_scans put the session batch's list here.
    printed = printed_check_list
    assert checkov_module._LISTINGS[find_checkov()] == printed
    assert "CKV_K8S_43" in printed and "CKV_GCP_29" in printed


def test_stacks_with_nothing_to_scan_start_no_checkov():
    results = run_checkov_many([engine.run(lambda: None)] * 2, checkov="/nonexistent/checkov")
    assert [(r.passed, r.resource_count, r.findings) for r in results] == [(0, 0, [])] * 2


def test_checkov_s_interpreter_is_read_from_its_script():
    interpreter = _interpreter_of(find_checkov())
    assert interpreter is not None and "python" in interpreter


def test_the_batch_asks_for_the_report_a_single_scan_asks_for():
    # checkov_batch.py runs in checkov's interpreter and keeps its own copy of the arguments.
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "checkov_batch", Path(checkov_module.__file__).with_name("checkov_batch.py")
    )
    assert spec is not None and spec.loader is not None
    batch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(batch)
    assert batch.REPORT_ARGUMENTS == checkov_module.REPORT_ARGUMENTS
    assert "--compact" in batch.REPORT_ARGUMENTS and "--skip-download" in batch.REPORT_ARGUMENTS

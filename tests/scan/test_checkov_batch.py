"""One checkov process for several stacks gives each the result its own process gives."""

import subprocess

import pulumi_aws as aws
import pytest

from aistack import engine
from aistack.scan import checkov as checkov_module
from aistack.scan import run_checkov, run_checkov_many
from aistack.scan.checkov import _interpreter_of, find_checkov
from tests.scan import gcp_programs
from tests.scan.test_kubernetes_scan import _program as kubernetes_program


def _same(result):
    return (result.passed, result.resource_count, result.findings, result.passed_checks)


def _aws_program():
    aws.s3.Bucket("plain-bucket")


@pytest.fixture(scope="module")
def graphs():
    """Two plans and one set of Kubernetes objects: checkov's runners keep their first
    run's definitions unless each scan gets fresh ones."""
    return [
        engine.run(gcp_programs.foundation, config=gcp_programs.CONFIG),
        engine.run(kubernetes_program),
        engine.run(_aws_program, config={"aws:region": "eu-west-1"}),
    ]


def test_a_batch_equals_one_process_per_stack(graphs):
    batch = run_checkov_many(graphs)
    alone = [run_checkov(graph) for graph in graphs]
    assert [_same(r) for r in batch] == [_same(r) for r in alone]
    # Each stack was judged, with failures of its own (not another's).
    assert {f.resource for f in batch[1].findings} == {"loose-server"}
    assert {f.resource for f in batch[2].findings} == {"plain-bucket"}
    assert "plain-bucket" not in {f.resource for f in batch[0].findings}


def test_the_batch_s_check_list_is_the_one_checkov_prints(graphs):
    run_checkov_many(graphs[:1])
    executable = find_checkov()
    from_batch = checkov_module._LISTINGS[executable]
    printed = subprocess.run(
        [executable, *checkov_module._LIST_ARGUMENTS], capture_output=True, text=True, check=False
    ).stdout
    assert from_batch == printed
    assert "CKV_K8S_43" in from_batch and "CKV_GCP_29" in from_batch


def test_checkov_s_interpreter_is_read_from_its_script():
    interpreter = _interpreter_of(find_checkov())
    assert interpreter is not None and "python" in interpreter


def test_a_stack_with_nothing_to_scan_costs_no_checkov_run():
    (result,) = run_checkov_many([engine.run(lambda: None)])
    assert (result.passed, result.resource_count, result.findings) == (0, 0, [])

"""The team's own tests, written with aistack's pytest plugin (fixture `aistack_stack`)."""

import json
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def graph():
    from aistack.testing import StackRunner

    return StackRunner().project(PROJECT, stack="dev")


def test_the_stack_runs_and_tells_us_how_to_submit(graph):
    assert graph.project == "minimal-training"
    assert graph.stack_outputs["submit"].startswith("aws batch submit-job --region us-west-2")


def test_training_never_keeps_gpus_running_when_idle(graph):
    (compute,) = graph.of_type("aws:batch/computeEnvironment:ComputeEnvironment")
    assert compute.inputs["computeResources"]["minVcpus"] == 0
    assert compute.inputs["computeResources"]["maxVcpus"] == 2 * 8  # 2 x g6.2xlarge


def test_our_jobs_stop_after_four_hours(graph):
    (job,) = graph.of_type("aws:batch/jobDefinition:JobDefinition")
    assert job.inputs["timeout"]["attemptDurationSeconds"] == 4 * 3600
    container = json.loads(job.inputs["containerProperties"])
    assert container["image"].endswith("@sha256:" + "2" * 64)


def test_everything_stays_in_our_region(graph):
    for resource in graph.resources:
        region = resource.outputs.get("region")
        assert region in (None, "us-west-2"), resource.name


def test_checklist_items_we_rely_on_pass(graph, aistack_stack):
    aistack_stack.kept(graph, "C4", "C5", "C6", "D1", "D2", "D3", "T1", "T2", "T5", "T6")

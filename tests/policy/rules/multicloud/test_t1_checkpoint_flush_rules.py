"""AIS-T1-05 (the checkpoint flush finishes within the platform's preemption notice) and
AIS-T1-06 (the identity that flushes can replace what the flush rewrites), on both clouds:
compliant on every example stack with a training pool, non-compliant on the graphs the GCP
audit found (defects #7 and #8: a 30 s delay after a 5 s poll on GCE; objectCreator as the
checkpoint writer) and on their AWS counterparts."""

from __future__ import annotations

import base64

import pytest

from aistack.engine.graph import StackGraph
from tests._harness import previews
from tests.policy.rules.shared_verdicts import findings_of, verdicts_of

FLUSH, WRITER = "AIS-T1-05", "AIS-T1-06"
#: The example stacks with a training pool: GCE MIGs (gcp, gcp-training) and AWS Batch
#: (the reference at the repository root, minimal-training).
TRAINING_STACKS = ["stacks/gcp", "stacks/gcp-training", ".", "stacks/minimal-training"]


def _graph(stack: str) -> StackGraph:
    return previews.run_project(previews.ROOT / stack)


def _edit_gce_env(graph: StackGraph, old: str, new: str) -> None:
    template = graph.named("train-template")
    metadata = template.inputs["metadata"]
    assert old in metadata["startup-script"]
    metadata["startup-script"] = metadata["startup-script"].replace(old, new)


def _edit_ec2_env(graph: StackGraph, old: str, new: str) -> None:
    template = graph.named("training-launch-template")
    text = base64.b64decode(template.inputs["userData"]).decode()
    assert old in text
    template.inputs["userData"] = base64.b64encode(text.replace(old, new).encode()).decode()


@pytest.mark.parametrize("stack", TRAINING_STACKS)
def test_every_training_example_flushes_within_its_notice_as_a_writer_that_can_replace(stack):
    graph = _graph(stack)
    for rule in (FLUSH, WRITER):
        verdicts = verdicts_of(rule, graph)
        assert verdicts and set(verdicts.values()) == {"compliant"}, (rule, verdicts)


def test_the_audits_gce_settings_fail_the_notice():
    """Defect #7: AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS=30 after a 5 s poll; the flush
    would start 35 s after a notice that ends the VM at 30 s."""
    graph = _graph("stacks/gcp-training")
    _edit_gce_env(graph, "AISTACK_SPOT_POLL_SECONDS=2", "AISTACK_SPOT_POLL_SECONDS=5")
    _edit_gce_env(
        graph,
        "AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS=5",
        "AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS=30",
    )
    [finding] = findings_of(FLUSH, graph)
    assert finding.status == "non-compliant"
    assert "up to 35 s after the notice" in finding.message and "30 s notice" in finding.message


def test_a_gce_unit_stop_past_the_power_off_fails():
    """The soft-off comes with the notice: a stop that may outlast the 30 s is cut by the
    G3 power-off, so it promises a flush it cannot give."""
    graph = _graph("stacks/gcp")
    _edit_gce_env(
        graph, "AISTACK_SPOT_STOP_TIMEOUT_SECONDS=25", "AISTACK_SPOT_STOP_TIMEOUT_SECONDS=90"
    )
    assert verdicts_of(FLUSH, graph) == {"train-template": "non-compliant"}


def test_an_ec2_delay_that_eats_the_two_minutes_fails():
    graph = _graph(".")
    _edit_ec2_env(
        graph,
        "AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS=30",
        "AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS=100",
    )
    [finding] = findings_of(FLUSH, graph)
    assert finding.status == "non-compliant" and "120 s notice" in finding.message


def test_an_object_creator_checkpoint_writer_fails():
    """Defect #8: the training account held roles/storage.objectCreator (+ viewer) on the
    checkpoint prefix, which cannot replace an object: rsync's second flush of last.ckpt
    gets 403."""
    graph = _graph("stacks/gcp-training")
    graph.named("checkpoints-write-train").inputs["role"] = "roles/storage.objectCreator"
    [finding] = findings_of(WRITER, graph)
    assert finding.status == "non-compliant"
    assert "storage.objects.delete" in finding.message
    assert "storage.objects.create" not in finding.message


def test_a_gcs_writer_granted_another_prefix_fails():
    graph = _graph("stacks/gcp")
    grant = graph.named("checkpoints-write-train")
    condition = grant.inputs["condition"]
    condition["expression"] = condition["expression"].replace("/objects/runs/", "/objects/evals/")
    [finding] = findings_of(WRITER, graph)
    assert finding.status == "non-compliant" and "gs://" in finding.message


def test_a_batch_flush_whose_role_cannot_put_fails():
    """On AWS Batch the flush runs as a running job's role; without s3:PutObject on the
    checkpoint prefix it cannot replace (or write) the checkpoint."""
    graph = _graph(".")
    policy = graph.named("checkpoints-write-training-job")
    policy.inputs["policy"] = policy.inputs["policy"].replace('"s3:PutObject", ', "")
    [finding] = findings_of(WRITER, graph)
    assert finding.status == "non-compliant" and "s3:PutObject" in finding.message


def test_a_host_flushing_with_the_instance_role_fails():
    """The same host flushing with its instance role (no job lending its credentials: an
    ASG node): the Batch instance role holds no checkpoint write."""
    graph = _graph(".")
    _edit_ec2_env(graph, "AISTACK_SCHEDULER=batch", "AISTACK_SCHEDULER=asg")
    [finding] = findings_of(WRITER, graph)
    assert finding.status == "non-compliant" and "identity-training" in finding.message

"""The Kubernetes example stack previews offline and passes every Kubernetes rule."""

from pathlib import Path

import pytest

from aistack import policy

PROJECT = Path(__file__).resolve().parents[1]
K8S_RULES = ("AIS-C3-07", "AIS-C6-11", "AIS-S1-03", "AIS-S1-04")


@pytest.fixture(scope="module")
def graph():
    from aistack.testing import StackRunner

    return StackRunner().project(PROJECT, stack="dev")


def test_the_stack_creates_a_training_and_a_serving_namespace(graph):
    assert graph.stack_outputs == {
        "trainingNamespace": "vision-train",
        "servingNamespace": "vision-serve",
    }


def test_training_and_serving_have_their_own_gpu_caps(graph):
    caps = {
        q.outputs["metadata"]["namespace"]: q.inputs["spec"]["hard"]["requests.nvidia.com/gpu"]
        for q in graph.of_type("kubernetes:core/v1:ResourceQuota")
    }
    assert caps == {"vision-train": "8", "vision-serve": "2"}


def test_every_kubernetes_rule_passes(graph):
    rules = {r.id: r for r in policy.all_rules()}
    for rule_id in K8S_RULES:
        findings = rules[rule_id].evaluate(graph)
        assert findings and all(f.status == "compliant" for f in findings), rule_id

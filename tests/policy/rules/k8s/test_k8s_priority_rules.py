"""AIS-S1-13: serving pods and training job templates name PriorityClasses that exist, with
serving above training (../shared/research/k8s-fidelity-audit.md, defect 11: the queue's
PriorityClasses were created and named by nothing). Compliant when k8s.TrainingQueue's
priority_class_names reach k8s.InferenceService and k8s.TrainingJobTemplate; violated
without them, with a name nothing creates, and with serving below training."""

import pytest

from aistack import k8s as aistack_k8s
from tests.k8s.test_inference_service import _args as serving_args
from tests.k8s.test_inference_service import _team as serving_team
from tests.policy.rules.shared_verdicts import build, verdicts_of

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
DIGEST = "sha256:" + "0" * 64
FLAVOR = {
    "name": "gpu-spot",
    "capacity": "spot",
    "nodeLabels": {"aistack.dev/pool": "gpu"},
    "gpus": 8,
}


def _program(serving="serving", training="training", queue=None):
    def program():
        team = aistack_k8s.TeamNamespace(
            "ml-train", {"team": "ml", "gpus": 8, "tier": "train", "governance": GOVERNANCE}
        )
        made = aistack_k8s.TrainingQueue(
            "train",
            {"governance": GOVERNANCE, "namespaces": [team], "flavors": [FLAVOR], **(queue or {})},
        )
        names = {**made.priority_class_names, "missing": "nobody-made-this", None: None}
        aistack_k8s.TrainingJobTemplate(
            "llama",
            {
                "governance": GOVERNANCE,
                "namespace": "ml-train",
                "queue": "train",
                "serviceAccount": "trainer",
                "image": f"registry.example.com/train@{DIGEST}",
                "gpusPerNode": 1,
                "maxRuntimeMinutes": 600,
                "checkpointUri": "s3://ckpt/llama",
                "datasetUri": "s3://data/tokens",
                "datasetVersion": "v3",
                "priorityClassName": names[training],
            },
        )
        aistack_k8s.InferenceService(
            "chat", serving_args(priorityClassName=names[serving]), team=serving_team()
        )

    return program


def _statuses(program):
    verdicts = verdicts_of("AIS-S1-13", build(program))
    return {
        "training": verdicts.pop("llama-template"),
        "serving": set(verdicts.values()),
    }


def test_the_queues_classes_put_serving_above_training():
    assert _statuses(_program()) == {"training": "compliant", "serving": {"compliant"}}


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        (
            _program(serving=None, training=None),
            {"training": "non-compliant", "serving": {"non-compliant"}},
        ),
        (_program(serving="missing"), {"training": "compliant", "serving": {"non-compliant"}}),
        (_program(training="missing"), {"training": "non-compliant", "serving": {"compliant"}}),
        (
            _program(serving="training", training="serving"),
            {"training": "compliant", "serving": {"non-compliant"}},
        ),
    ],
    ids=[
        "none-named",
        "serving-names-a-missing-class",
        "training-names-a-missing-class",
        "inverted",
    ],
)
def test_pods_without_an_existing_class_or_serving_below_training_fail(program, expected):
    assert _statuses(program) == expected


def test_the_rendered_pods_carry_the_class():
    from aistack.queries.k8s import job_templates, pod_specs
    from aistack.queries.k8s_serving import serving_workloads

    graph = build(_program())
    [template] = job_templates(graph)
    assert {pod.get("priorityClassName") for _, pod in pod_specs(template.document)} == {
        "train-training"
    }
    assert {w.pod_spec.get("priorityClassName") for w in serving_workloads(graph)} == {
        "train-serving"
    }

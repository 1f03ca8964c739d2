"""Kubernetes serving rules (S1-S6, G2-G5, and AIS-S7-02 on k8s.InferenceService): compliant with
k8s.InferenceService, violated by the hand-written serving objects people write instead."""

import pulumi_kubernetes as k8s
import pytest

from aistack import k8s as aistack_k8s
from tests._harness.shared_graphs import shared
from tests.k8s.test_inference_service import _args, _team
from tests.policy.rules.shared_verdicts import build, verdicts_of

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("policy-rules-k8s-k8s_serving_rules")

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
DEPLOYMENT = "chat-1-4-0"


def _service(**overrides):
    aistack_k8s.InferenceService("chat", _args(**overrides), team=_team())


def _hand_written(name="vllm", namespace="ml-serve", labels=None, annotations=None, **spec):
    """A plain vLLM Deployment as a tutorial writes it: no gateway, no autoscaler."""
    labels = {"app": name, **(labels or {})}
    return k8s.apps.v1.Deployment(
        name,
        metadata={"name": name, "namespace": namespace, "annotations": annotations or {}},
        spec={
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "vllm", "image": "vllm/vllm-openai:latest"}]},
            },
            **spec,
        },
    )


def _in_serve_namespace(**kwargs):
    def program():
        _team()
        _hand_written(**kwargs)

    return program


@pytest.fixture(scope="module")
def service_graph():
    """The InferenceService's objects, built once for the module's compliant tests."""
    with shared(build(_service)) as graph:
        yield graph


@pytest.fixture(scope="module")
def hand_written_graph():
    """The hand-written Deployment in the serving namespace, built once for the tests that
    judge it as is."""
    with shared(build(_in_serve_namespace())) as graph:
        yield graph


RULES = ["AIS-S3-03", "AIS-S3-04", "AIS-S4-02", "AIS-S5-02", "AIS-S6-02", "AIS-S7-02",
         "AIS-G2-02", "AIS-S1-11", "AIS-S2-02", "AIS-G4-02", "AIS-G5-02"]  # fmt: skip


@pytest.mark.parametrize("rule_id", RULES)
def test_an_inference_service_complies(service_graph, rule_id):
    found = verdicts_of(rule_id, service_graph)
    assert found and set(found.values()) == {"compliant"}, found


@pytest.mark.parametrize(
    "rule_id",
    ["AIS-S3-03", "AIS-S4-02", "AIS-S5-02", "AIS-S7-02", "AIS-G2-02", "AIS-S2-02", "AIS-G4-02",
     "AIS-G5-02"],
)  # fmt: skip
def test_a_hand_written_serving_deployment_fails(hand_written_graph, rule_id):
    assert verdicts_of(rule_id, hand_written_graph)["vllm"] == "non-compliant"


def test_s3_03_a_fixed_replica_count_is_a_cap(verdicts):
    assert verdicts("AIS-S3-03", _in_serve_namespace(replicas=2))["vllm"] == "compliant"


def test_s3_03_a_scaled_object_without_a_maximum_fails(verdicts):
    def program():
        _in_serve_namespace()()
        k8s.apiextensions.CustomResource(
            "vllm-scaler",
            api_version="keda.sh/v1alpha1",
            kind="ScaledObject",
            metadata={"name": "vllm", "namespace": "ml-serve"},
            spec={"scaleTargetRef": {"name": "vllm"}, "triggers": []},
        )

    assert verdicts("AIS-S3-03", program)["vllm"] == "non-compliant"


def test_s3_04_an_hpa_that_scales_down_after_30_seconds_fails():
    def program():
        _in_serve_namespace()()
        k8s.autoscaling.v2.HorizontalPodAutoscaler(
            "vllm-hpa",
            metadata={"name": "vllm", "namespace": "ml-serve"},
            spec={
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "vllm"},
                "minReplicas": 1,
                "maxReplicas": 4,
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 30}},
            },
        )

    # One build judged by both rules: the `verdicts` fixture would build it once per rule.
    graph = build(program)
    assert verdicts_of("AIS-S3-04", graph) == {"vllm-hpa": "non-compliant"}
    assert verdicts_of("AIS-S3-03", graph)["vllm"] == "compliant"


def test_s6_02_a_version_missing_from_the_route_cannot_take_traffic(verdicts):
    def program():
        _service()
        _hand_written(
            "chat-1-2-0",
            labels={"aistack.dev/model-name": "chat", "aistack.dev/model-version": "1.2.0"},
        )

    found = verdicts("AIS-S6-02", program)
    assert found["chat-1-2-0"] == "non-compliant" and found[DEPLOYMENT] == "compliant"


def test_g2_02_full_logging_without_classification_and_retention_fails(verdicts):
    program = _in_serve_namespace(annotations={"aistack.dev/request-logging": "full"})
    assert verdicts("AIS-G2-02", program)["vllm"] == "non-compliant"
    program = _in_serve_namespace(annotations={"aistack.dev/request-logging": "metadata"})
    assert verdicts("AIS-G2-02", program)["vllm"] == "compliant"


def test_g3_02_production_versions_name_their_approver(verdicts):
    def prod(approved):
        def program():
            _service(
                governance={**GOVERNANCE, "environment": "prod"},
                versions=[
                    {
                        "version": "1.4.0",
                        "weight": 100,
                        **({"approvedBy": "CHG-1"} if approved else {}),
                    }
                ],
            )

        return program

    assert verdicts("AIS-G3-02", prod(True)) == {DEPLOYMENT: "compliant"}
    labels = {"aistack.dev/environment": "prod"}

    def unapproved():
        _team()
        k8s.apps.v1.Deployment(
            "vllm",
            metadata={"name": "vllm", "namespace": "ml-serve", "labels": labels},
            spec={
                "selector": {"matchLabels": {"app": "vllm"}},
                "template": {
                    "metadata": {"labels": {"app": "vllm"}},
                    "spec": {"containers": [{"name": "vllm", "image": "vllm/vllm-openai:latest"}]},
                },
            },
        )

    assert verdicts("AIS-G3-02", unapproved) == {"vllm": "non-compliant"}


def test_s1_11_serving_beside_training_fails(verdicts):
    def program():
        train = aistack_k8s.TeamNamespace(
            "ml-train", {"team": "ml", "gpus": 8, "governance": GOVERNANCE}
        )
        aistack_k8s.TrainingQueue(
            "ml-gpu",
            {
                "governance": GOVERNANCE,
                "namespaces": [train],
                "flavors": [
                    {
                        "name": "gpu-spot",
                        "capacity": "spot",
                        "gpus": 8,
                        "nodeLabels": {"aistack.dev/pool": "gpu"},
                    }
                ],
            },
        )
        _hand_written(namespace="ml-train", labels={"aistack.dev/model-name": "chat"})

    assert verdicts("AIS-S1-11", program) == {"vllm": "non-compliant"}


def test_s2_02_a_runtime_from_a_tag_fails_even_when_recorded(verdicts):
    program = _in_serve_namespace(annotations={"aistack.dev/runtime": "vllm"})
    assert verdicts("AIS-S2-02", program)["vllm"] == "non-compliant"


def test_g5_02_falling_back_with_no_previous_version_fails(verdicts):
    program = _in_serve_namespace(
        labels={"aistack.dev/model-name": "chat"},
        annotations={"aistack.dev/fallback": "previous_version"},
    )
    assert verdicts("AIS-G5-02", program)["vllm"] == "non-compliant"
    found = verdicts("AIS-G5-02", lambda: _service(fallback="previous_version"))
    assert set(found.values()) == {"compliant"} and len(found) == 2

"""AIS-E1-07 (the stack's image policy denies, in every namespace it manages) and AIS-S7-02
(serving pod templates name an explicit model version): compliant with k8s.ImagePolicy and
k8s.TeamNamespace, violated by a warning-only policy, an excluded namespace and serving
Deployments labelled latest or not at all."""

import pulumi_kubernetes as k8s
import pytest

from aistack import engine, policy
from aistack import k8s as aistack_k8s
from aistack.policy.crossguard import graph_from_policy_resources
from tests.policy.rules.shared_verdicts import findings_of

from ...crossguard_resources import policy_resources

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
DIGEST = "sha256:" + "ab" * 32
MODEL = {"aistack.dev/model-name": "llama", "aistack.dev/model-version": "1.4.0"}


def _namespaces():
    for tier in ("train", "serve"):
        aistack_k8s.TeamNamespace(
            f"ml-{tier}", {"team": "ml", "tier": tier, "gpus": 2, "governance": GOVERNANCE}
        )


def _policy(**args):
    aistack_k8s.ImagePolicy("image-policy", {"governance": GOVERNANCE, **args})


# ---- AIS-E1-07 --------------------------------------------------------------------------


def test_e1_07_every_team_namespace_is_covered_by_a_denying_binding(verdicts):
    def program():
        _namespaces()
        _policy()

    assert verdicts("AIS-E1-07", program) == {
        "ml-train-namespace": "compliant",
        "ml-serve-namespace": "compliant",
    }


def test_e1_07_a_warning_only_policy_fails_its_bindings_and_the_namespaces(verdicts):
    def program():
        _namespaces()
        _policy(mode="warn")

    found = verdicts("AIS-E1-07", program)
    assert set(found.values()) == {"non-compliant"}
    assert "image-policy-pods-binding" in found and "ml-serve-namespace" in found


def test_e1_07_an_excluded_namespace_fails(verdicts):
    def program():
        _namespaces()
        _policy(excludeNamespaces=["ml-train"])

    found = verdicts("AIS-E1-07", program)
    assert found["ml-train-namespace"] == "non-compliant"
    assert found["ml-serve-namespace"] == "compliant"


def test_e1_07_a_stack_without_an_image_policy_is_not_judged(verdicts):
    # The policy may be installed cluster-wide by another stack: not visible offline.
    assert verdicts("AIS-E1-07", _namespaces) == {"": "not-applicable"}


# ---- AIS-S7-02 --------------------------------------------------------------------------


def _deployment(name, namespace, labels):
    k8s.apps.v1.Deployment(
        name,
        metadata={"name": name, "namespace": namespace},
        spec={
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name, **labels}},
                "spec": {"containers": [{"name": "server", "image": f"vllm@{DIGEST}"}]},
            },
        },
    )


def test_s7_02_a_serving_deployment_with_an_explicit_version_passes(verdicts):
    def program():
        _namespaces()
        _deployment("llama-1-4-0", "ml-serve", MODEL)

    assert verdicts("AIS-S7-02", program) == {"llama-1-4-0": "compliant"}


@pytest.mark.parametrize(
    "labels",
    [
        {},
        {"aistack.dev/model-name": "llama"},
        {**MODEL, "aistack.dev/model-version": "latest"},
        {**MODEL, "aistack.dev/model-version": "Stable"},
    ],
)
def test_s7_02_a_serving_deployment_without_an_explicit_version_fails(verdicts, labels):
    def program():
        _namespaces()
        _deployment("llama", "ml-serve", labels)

    assert verdicts("AIS-S7-02", program) == {"llama": "non-compliant"}


def test_s7_02_training_workloads_are_not_judged_unless_they_claim_a_version(verdicts):
    def program():
        _namespaces()
        _deployment("tensorboard", "ml-train", {})
        _deployment("eval", "ml-train", {**MODEL, "aistack.dev/model-version": "latest"})

    assert verdicts("AIS-S7-02", program) == {"eval": "non-compliant"}


def test_s7_02_agrees_with_the_admission_policy_on_the_same_labels():
    # The rule's Python and the policy's CEL judge one contract: each label set gets the
    # same verdict from both (the CEL evaluated with cel-python).
    from aistack.k8s.image_policy import SHAPES, policy_spec
    from aistack.policy.rules.k8s.s7_02_k8s_serving_model_labels import _problem
    from tests.k8s.admission import evaluate

    pods = policy_spec(SHAPES[0])
    cases = [
        {},
        MODEL,
        {**MODEL, "aistack.dev/model-version": "HEAD"},
        {"aistack.dev/model-name": "x"},
    ]
    for labels in cases:
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ml-serve", "labels": labels},
            "spec": {"containers": [{"name": "s", "image": f"vllm@{DIGEST}"}]},
        }
        verdict = evaluate(pods, pod, namespace_labels={"aistack.dev/tier": "serve"})
        assert verdict.admitted == (_problem(labels) is None), labels


def test_the_crossguard_pack_judges_both_rules_like_aistack_check():
    def program():
        _namespaces()
        _policy(excludeNamespaces=["ml-train"])
        _deployment("llama", "ml-serve", {**MODEL, "aistack.dev/model-version": "latest"})
        _deployment("llama-1-4-0", "ml-serve", MODEL)

    graph = engine.run(program)
    rebuilt = graph_from_policy_resources(policy_resources(graph))
    for rule in (r for r in policy.all_rules() if r.id in ("AIS-E1-07", "AIS-S7-02")):
        ours = {(f.resource_name, f.status) for f in findings_of(rule.id, graph)}
        assert ours == {(f.resource_name, f.status) for f in rule.evaluate(rebuilt)}, rule.id
        assert {status for _, status in ours} == {"compliant", "non-compliant"}, rule.id

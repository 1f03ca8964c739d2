"""AIS-E1-07 (the stack's image policy denies, in every namespace it manages), AIS-E1-09 (no
image-digest policy selects a namespace holding a Helm release with tag-only images) and
AIS-S7-02 (serving pod templates name an explicit model version): compliant with
k8s.ImagePolicy and k8s.TeamNamespace, violated by a warning-only policy, an excluded
namespace, a chart with tag-only images in a managed namespace and serving Deployments
labelled latest or not at all."""

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


@pytest.mark.parametrize(
    ("because", "status"), [("chart images by tag", "compliant"), ("", "non-compliant")]
)
def test_e1_07_an_exempt_namespace_passes_only_with_its_reason(verdicts, because, status):
    """An operator's namespace declares its exemption where it is created (stacks/
    kubernetes-operators); the bindings leave it out, and the rule reads the reason."""
    import pulumi_kubernetes as k8s

    def program():
        _namespaces()
        _policy()
        k8s.core.v1.Namespace(
            "operator",
            metadata={
                "name": "kueue-system",
                "labels": {"aistack.dev/managed": "true", "aistack.dev/image-policy": "exempt"},
                "annotations": {"aistack.dev/image-policy-exempt-because": because},
            },
        )

    assert verdicts("AIS-E1-07", program)["operator"] == status


def test_e1_07_a_stack_without_an_image_policy_is_not_judged(verdicts):
    # The policy may be installed cluster-wide by another stack: not visible offline.
    assert verdicts("AIS-E1-07", _namespaces) == {"": "not-applicable"}


# ---- AIS-E1-09 --------------------------------------------------------------------------


def _release(name, namespace, values=None):
    # A chart as stacks/kubernetes-operators installs one: its images are the chart's.
    k8s.helm.v3.Release(
        name,
        name=name,
        chart=f"oci://registry.k8s.io/{name}/charts/{name}",
        version="0.19.2",
        namespace=namespace,
        values=values or {},
    )


def _operator_namespace(name, *, exempt):
    from aistack.contracts.k8s_admission import image_policy_exemption

    labels, annotations = image_policy_exemption("its chart pins tags") if exempt else ({}, {})
    k8s.core.v1.Namespace(
        f"{name}-namespace",
        metadata={
            "name": name,
            "labels": {"aistack.dev/managed": "true", **labels},
            "annotations": annotations,
        },
    )


def test_e1_09_a_tag_only_chart_in_a_managed_namespace_fails_with_the_policy_in_the_stack(
    verdicts,
):
    # Defect 3 of the Kubernetes audit: the digest policy refuses the operator's pods.
    def program():
        _namespaces()
        _policy()
        _release("kueue", "ml-train")

    assert verdicts("AIS-E1-09", program) == {"kueue": "non-compliant"}


def test_e1_09_without_a_policy_in_the_stack_judges_against_k8s_image_policy_s_default(
    verdicts,
):
    # The operators stack: the policy is another stack's, with its default selector.
    def program():
        _operator_namespace("kueue-system", exempt=False)
        _operator_namespace("jobset-system", exempt=True)
        _release("kueue", "kueue-system")
        _release("jobset", "jobset-system")
        _release("nvidia-device-plugin", "kube-system")
        _release("someone-elses", "tools")  # not created here: no managed label known

    assert verdicts("AIS-E1-09", program) == {
        "kueue": "non-compliant",
        "jobset": "compliant",
        "nvidia-device-plugin": "compliant",
        "someone-elses": "compliant",
    }


def test_e1_09_an_exempt_or_excluded_namespace_and_a_digest_pinned_chart_pass():
    def program():
        _namespaces()
        _operator_namespace("keda", exempt=True)
        _policy(excludeNamespaces=["ml-serve"])
        _release("keda", "keda")
        _release("serve-chart", "ml-serve")
        _release(
            "pinned",
            "ml-train",
            {"image": {"repository": "registry.k8s.io/kueue/kueue", "digest": DIGEST}},
        )

    found = findings_of("AIS-E1-09", engine.run(program))
    assert {f.resource_name: f.status for f in found} == {
        "keda": "compliant",
        "serve-chart": "compliant",
        "pinned": "compliant",
    }
    messages = {f.resource_name: f.message for f in found}
    assert "aistack.dev/image-policy=exempt" in messages["keda"]
    assert "image" in messages["pinned"]


def test_e1_09_a_warning_only_policy_refuses_nothing(verdicts):
    def program():
        _namespaces()
        _policy(mode="warn")
        _release("kueue", "ml-train")

    assert verdicts("AIS-E1-09", program) == {"kueue": "compliant"}


def test_e1_09_a_stack_without_a_helm_release_is_not_judged(verdicts):
    def program():
        _namespaces()
        _policy()

    assert verdicts("AIS-E1-09", program) == {"": "not-applicable"}


def test_e1_09_reads_which_images_a_release_s_values_pin():
    from aistack.queries.k8s_admission_policies import release_images

    hex64 = "ab" * 32
    values = {
        "controller": {"image": {"repository": "quay.io/x/op", "tag": "v1"}},
        "webhook": {"image": {"registry": "quay.io", "repository": "x/hook", "sha": hex64}},
        "sidecar": {"image": f"quay.io/x/side@sha256:{hex64}"},
        "tagged": {"image": "quay.io/x/tagged:v1"},
        "proxy": {"image": {"repository": "quay.io/x/p", "tag": f"v1@sha256:{hex64}"}},
        "image": {"pullPolicy": "IfNotPresent"},  # KEDA's: no image named
        "extra": [{"image": {"repository": "r/e", "digest": f"sha256:{hex64}"}}],
    }
    pinned, unpinned = release_images(values)
    assert sorted(pinned) == [
        "extra[0].image",
        "proxy.image",
        "sidecar.image",
        "webhook.image",
    ]
    assert sorted(unpinned) == ["controller.image", "tagged.image"]
    assert release_images({}) == ([], [])


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

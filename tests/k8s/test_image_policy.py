"""k8s.ImagePolicy: its CEL evaluated for real (cel-python, tests/k8s/admission.py) against
real manifests, pinned and not, serving and training; the bindings' namespace selection
judged against the namespaces k8s.TeamNamespace creates; every object valid for the API
server (kubernetes-validate strict, 1.30 and 1.37) and clean under checkov."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from aistack import engine, k8s
from aistack.contracts.model_versions import MOVING_LABELS
from aistack.errors import ConfigError
from aistack.k8s._base import NEWEST_KUBERNETES, OLDEST_KUBERNETES
from aistack.k8s.image_policy import SHAPES, policy_spec
from aistack.queries.k8s import (
    builtin_manifests,
    job_templates,
    manifest,
    namespace_bundles,
    selector_matches,
)
from tests.k8s.admission import ENGINES, CelError, cel, evaluate
from tests.k8s.conftest import GOVERNANCE, GSA
from tests.k8s.test_checkov import SERVER, _checkov

VAP = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
DIGEST = "sha256:" + "ab" * 32
PINNED = f"europe-west4-docker.pkg.dev/team-ml/serve/vllm@{DIGEST}"
TRAIN_NS = {"aistack.dev/managed": "true", "aistack.dev/tier": "train"}
SERVE_NS = {"aistack.dev/managed": "true", "aistack.dev/tier": "serve"}
MODEL = {"aistack.dev/model-name": "llama", "aistack.dev/model-version": "1.4.0"}

POLICIES = {shape.role: policy_spec(shape) for shape in SHAPES}


def _pod(image=PINNED, *, init=None, ephemeral=None, labels=None, annotations=None):
    spec = {"containers": [{"name": "server", "image": image}]}
    if init:
        spec["initContainers"] = [{"name": "fetch-model", "image": init}]
    if ephemeral:
        spec["ephemeralContainers"] = [{"name": "debugger", "image": ephemeral}]
    metadata = {"name": "server-0", "namespace": "ml-serve", "labels": dict(labels or {})}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _deployment(image=PINNED, *, init=None, labels=None):
    pod = _pod(image, init=init, labels={"app": "server", **(labels or {})})
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "server", "namespace": "ml-serve"},
        "spec": {
            "selector": {"matchLabels": {"app": "server"}},
            "template": {"metadata": {"labels": pod["metadata"]["labels"]}, "spec": pod["spec"]},
        },
    }


def _judge(document, namespace=TRAIN_NS, **request):
    kind = document["kind"]
    role = {"Pod": "pods", "CronJob": "cronjobs", "JobSet": "jobsets"}.get(kind, "workloads")
    verdict = evaluate(POLICIES[role], document, namespace_labels=namespace, **request)
    assert verdict.matched, f"the {role} policy does not match a {kind}"
    return verdict


@pytest.mark.parametrize("engine", ENGINES)
def test_each_cel_engine_evaluates_for_real(engine):
    # A missing key is an error (with failurePolicy Fail, a refusal), not a false.
    with pytest.raises(CelError):
        cel("object.spec.template", {"object": {"spec": {}}}, engine)
    assert cel("has(object.spec.template)", {"object": {"spec": {}}}, engine) is False
    assert cel("'Latest'.matches('(?i)^(latest|stable)$')", {}, engine) is True
    assert cel("namespaceObject != null", {"namespaceObject": {"a": 1}}, engine) is True


# ---- E1: images by digest ---------------------------------------------------------------


def test_a_digest_pinned_deployment_is_admitted():
    assert _judge(_deployment()).admitted


def test_a_tag_only_init_container_is_refused_with_the_container_and_the_fix():
    verdict = _judge(_deployment(init="busybox:1.36"))
    (message,) = verdict.failures
    assert message.startswith("Deployment: container fetch-model (busybox:1.36) has no image")
    assert "repo@sha256:<64 hex>" in message and "Fix:" in message


@pytest.mark.parametrize(
    "image",
    [
        "vllm/vllm-openai:v0.6.3",  # a tag
        "vllm/vllm-openai",  # implicitly :latest
        "vllm/vllm-openai@sha256:" + "AB" * 32,  # not lowercase hex
        "vllm/vllm-openai@sha256:" + "ab" * 31,  # 62 hex digits
        "vllm/vllm-openai@sha512:" + "ab" * 64,  # another algorithm
        "@sha256:" + "ab" * 32,  # no repository
    ],
)
def test_images_not_pinned_by_a_sha256_digest_are_refused(image):
    assert not _judge(_pod(image)).admitted


def test_a_tag_beside_the_digest_is_admitted():
    # Runtimes pull by the digest and ignore the tag (aistack.contracts.images).
    assert _judge(_pod(f"vllm/vllm-openai:v0.6.3@{DIGEST}")).admitted


@pytest.mark.parametrize(
    ("kind", "api_version"),
    [
        ("StatefulSet", "apps/v1"),
        ("DaemonSet", "apps/v1"),
        ("ReplicaSet", "apps/v1"),
        ("Job", "batch/v1"),
    ],
)
def test_every_pod_template_kind_is_judged(kind, api_version):
    document = {**_deployment(init="busybox:1.36"), "kind": kind, "apiVersion": api_version}
    assert not _judge(document).admitted
    assert _judge({**_deployment(), "kind": kind, "apiVersion": api_version}).admitted


def test_a_cronjob_s_job_template_is_judged():
    def cronjob(image):
        deployment = _deployment(image)
        return {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "nightly", "namespace": "ml-train"},
            "spec": {
                "schedule": "0 3 * * *",
                "jobTemplate": {"spec": {"template": deployment["spec"]["template"]}},
            },
        }

    assert _judge(cronjob(PINNED)).admitted
    assert _judge(cronjob("python:3.12")).failures[0].startswith("CronJob: container server")


@pytest.fixture(scope="module")
def jobset():
    """The JobSet k8s.TrainingJobTemplate renders for a two-node run."""

    def program():
        team = k8s.TeamNamespace(
            "ml-train",
            {
                "team": "ml",
                "gpus": 16,
                "governance": GOVERNANCE,
                "serviceAccounts": [
                    {
                        "name": "trainer",
                        "identity": "gke-workload-identity",
                        "gcpServiceAccount": GSA,
                    }
                ],
                "allowEgress": [{"cidr": "199.36.153.8/30", "purpose": "Google APIs"}],
            },
        )
        k8s.TrainingJobTemplate(
            "llama",
            {
                "governance": GOVERNANCE,
                "queue": "ml-train",
                "serviceAccount": "trainer",
                "image": PINNED,
                "gpusPerNode": 8,
                "nodes": 2,
                "maxRuntimeMinutes": 720,
                "checkpointUri": "gs://team-ml-checkpoints/llama",
                "datasetUri": "gs://team-ml-datasets/tokens",
                "datasetVersion": "v3",
            },
            team=team,
        )

    (template,) = job_templates(engine.run(program))
    assert template.kind == "JobSet"
    return template.document


def test_the_jobset_aistack_renders_is_admitted_and_a_tagged_replicated_job_is_not(jobset):
    assert _judge(jobset).admitted
    # In a serving namespace its pods would need model labels, which training pods lack.
    assert len(_judge(jobset, namespace=SERVE_NS).failures) == 1
    tagged = copy.deepcopy(jobset)
    pod = tagged["spec"]["replicatedJobs"][-1]["template"]["spec"]["template"]["spec"]
    pod["containers"][0]["image"] = "pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime"
    assert not _judge(tagged).admitted


def test_a_jobset_without_replicated_jobs_is_judged_without_an_error():
    empty = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "x"}}
    assert _judge(empty).admitted
    assert _judge({**empty, "spec": {}}, namespace=SERVE_NS).admitted


def test_an_ephemeral_debug_container_without_a_digest_is_refused():
    running = _pod()
    debugged = _pod(ephemeral="busybox:1.36")
    verdict = _judge(debugged, old=running, operation="UPDATE", subresource="ephemeralcontainers")
    assert verdict.failures[0].startswith("Pod: container debugger (busybox:1.36)")
    pinned = _pod(ephemeral=f"busybox@{DIGEST}")
    assert _judge(
        pinned, old=running, operation="UPDATE", subresource="ephemeralcontainers"
    ).admitted


def test_an_update_that_changes_no_image_is_admitted_even_for_a_pod_from_before_the_policy():
    # A pod created before the policy existed: labelling it, or its controller removing a
    # finalizer, must not be refused (the pod would stay terminating).
    legacy = _pod("vllm/vllm-openai:v0.6.3")
    relabelled = _pod("vllm/vllm-openai:v0.6.3", labels={"team": "ml"})
    assert _judge(relabelled, old=legacy, operation="UPDATE").admitted
    # ... but a new unpinned image is judged on UPDATE too.
    retagged = _pod("vllm/vllm-openai:v0.6.4")
    assert not _judge(retagged, old=legacy, operation="UPDATE").admitted
    assert not _judge(legacy, operation="CREATE").admitted


def test_a_kubelet_mirror_pod_is_not_judged_but_the_annotation_alone_does_not_exempt():
    mirror = _pod("registry.k8s.io/etcd:3.5.15-0", annotations={"kubernetes.io/config.mirror": "x"})
    pods = POLICIES["pods"]
    assert not evaluate(pods, mirror, namespace_labels=TRAIN_NS, groups=("system:nodes",)).matched
    assert not _judge(mirror, groups=("system:authenticated",)).admitted


def test_no_subresource_a_controller_writes_is_matched_and_deletes_are_not_judged():
    rules = [
        rule for spec in POLICIES.values() for rule in spec["matchConstraints"]["resourceRules"]
    ]
    resources = {resource for rule in rules for resource in rule["resources"]}
    # pods/status, deployments/status, deployments/scale (the HPA) are never named.
    assert {r for r in resources if "/" in r} == {"pods/ephemeralcontainers"}
    assert all(rule["operations"] == ["CREATE", "UPDATE"] for rule in rules)
    for spec in POLICIES.values():
        assert spec["failurePolicy"] == "Fail"
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    assert not evaluate(POLICIES["pods"], config_map, namespace_labels=TRAIN_NS).matched


# ---- S7: serving pods name an explicit model version ------------------------------------


def test_a_serving_pod_with_an_explicit_model_version_is_admitted():
    assert _judge(_pod(labels=MODEL), namespace=SERVE_NS).admitted


@pytest.mark.parametrize("version", sorted(MOVING_LABELS) + ["Latest", "STABLE"])
def test_a_serving_pod_labelled_with_a_moving_version_is_refused(version):
    labels = {**MODEL, "aistack.dev/model-version": version}
    (message,) = _judge(_pod(labels=labels), namespace=SERVE_NS).failures
    assert message.startswith("Pod: a serving pod needs aistack.dev/model-name and an explicit")
    assert f'found "llama" and "{version}"' in message and "Fix:" in message


def test_an_update_that_keeps_a_serving_pod_s_model_labels_is_admitted_one_that_moves_them_not():
    # A serving pod from before the policy, labelled latest: relabelling it otherwise, or
    # removing a finalizer, is admitted; moving it to another moving label is not.
    legacy = _pod(labels={**MODEL, "aistack.dev/model-version": "latest"})
    relabelled = _pod(labels={**MODEL, "aistack.dev/model-version": "latest", "team": "ml"})
    assert _judge(relabelled, old=legacy, operation="UPDATE", namespace=SERVE_NS).admitted
    moved = _pod(labels={**MODEL, "aistack.dev/model-version": "stable"})
    assert not _judge(moved, old=legacy, operation="UPDATE", namespace=SERVE_NS).admitted
    fixed = _pod(labels=MODEL)
    assert _judge(fixed, old=legacy, operation="UPDATE", namespace=SERVE_NS).admitted


@pytest.mark.parametrize(
    "labels",
    [
        {},  # neither label
        {"aistack.dev/model-name": "llama"},  # no version
        {"aistack.dev/model-version": "1.4.0"},  # no model name
        {**MODEL, "aistack.dev/model-version": ""},  # an empty version
        {**MODEL, "aistack.dev/model-name": ""},  # an empty name
    ],
)
def test_a_serving_pod_without_a_model_name_and_version_is_refused(labels):
    assert not _judge(_pod(labels=labels), namespace=SERVE_NS).admitted


def test_a_training_pod_without_model_labels_is_admitted():
    assert _judge(_pod(), namespace=TRAIN_NS).admitted
    assert _judge(_pod(), namespace={"aistack.dev/managed": "true"}).admitted


def test_a_serving_deployment_s_template_is_judged_for_the_model_version():
    assert _judge(_deployment(labels=MODEL), namespace=SERVE_NS).admitted
    latest = {**MODEL, "aistack.dev/model-version": "latest"}
    assert not _judge(_deployment(labels=latest), namespace=SERVE_NS).admitted
    bare = _deployment()
    del bare["spec"]["template"]["metadata"]
    assert not _judge(bare, namespace=SERVE_NS).admitted
    assert _judge(bare, namespace=TRAIN_NS).admitted


def test_the_hardened_serving_workload_of_the_checkov_test_fails_only_for_its_labels():
    assert _judge(SERVER, namespace=TRAIN_NS).admitted
    assert len(_judge(SERVER, namespace=SERVE_NS).failures) == 1


# ---- the component: objects, bindings, options ------------------------------------------


def _graph(**args):
    def program():
        for tier in ("train", "serve"):
            k8s.TeamNamespace(
                f"ml-{tier}", {"team": "ml", "tier": tier, "gpus": 2, "governance": GOVERNANCE}
            )
        k8s.ImagePolicy("image-policy", {"governance": GOVERNANCE, **args})

    return engine.run(program)


@pytest.fixture(scope="module")
def graph():
    return _graph()


def test_one_policy_and_one_deny_binding_per_shape(graph):
    policies = {r.inputs["metadata"]["name"]: r for r in graph.of_type(VAP)}
    assert set(policies) == {
        f"image-policy-{s}" for s in ("pods", "workloads", "cronjobs", "jobsets")
    }
    for resource in [*graph.of_type(VAP), *graph.of_type(BINDING)]:
        # Cluster-scoped (the simulated API server's CLUSTER_SCOPED): the id is the name.
        assert "namespace" not in manifest(resource)["metadata"]
        assert resource.id == resource.inputs["metadata"]["name"]
    for binding in graph.of_type(BINDING):
        spec = binding.inputs["spec"]
        assert spec["policyName"] in policies
        assert spec["validationActions"] == ["Deny"]
    # The shipped specs are the ones the CEL tests evaluate.
    for shape in SHAPES:
        assert policies[f"image-policy-{shape.role}"].inputs["spec"] == POLICIES[shape.role]


def test_the_bindings_select_every_team_namespace_and_never_kube_system(graph):
    namespaces = {
        manifest(ns)["metadata"]["name"]: manifest(ns)["metadata"]["labels"]
        for ns in graph.of_type("kubernetes:core/v1:Namespace")
    }
    selector = graph.of_type(BINDING)[0].inputs["spec"]["matchResources"]["namespaceSelector"]

    def selected(name, labels):
        # The API server sets kubernetes.io/metadata.name on every namespace.
        return selector_matches(selector, {**labels, "kubernetes.io/metadata.name": name})

    assert all(selected(name, labels) for name, labels in namespaces.items())
    assert set(namespaces) == {"ml-train", "ml-serve"}
    assert not selected("kube-system", {"aistack.dev/managed": "true"})
    assert not selected("default", {})
    assert namespaces["ml-serve"]["aistack.dev/tier"] == "serve"  # what S7 reads


def test_excluded_namespaces_are_left_out_and_jobsets_can_be_skipped():
    graph = _graph(excludeNamespaces=["ml-train"], jobsets=False)
    selector = graph.of_type(BINDING)[0].inputs["spec"]["matchResources"]["namespaceSelector"]
    labels = {"aistack.dev/managed": "true", "kubernetes.io/metadata.name": "ml-train"}
    assert not selector_matches(selector, labels)
    assert len(graph.of_type(VAP)) == 3


def test_a_namespace_that_declares_itself_exempt_is_never_selected(graph):
    # stacks/kubernetes-operators labels so each operator namespace whose chart installs
    # images by tag: selected, the operators' pods would be refused (defect 3 of the k8s
    # audit). Only the value `exempt` exempts; the label's absence or another value does not.
    from aistack.contracts.k8s_admission import image_policy_exemption, image_policy_selector

    selector = graph.of_type(BINDING)[0].inputs["spec"]["matchResources"]["namespaceSelector"]
    assert selector == image_policy_selector()  # the rules judge against the same selector
    labels, annotations = image_policy_exemption("kueue v0.19.2's chart pins tags")
    managed = {"aistack.dev/managed": "true", "kubernetes.io/metadata.name": "kueue-system"}
    assert not selector_matches(selector, {**managed, **labels})
    assert selector_matches(selector, managed)
    assert selector_matches(selector, {**managed, "aistack.dev/image-policy": "enforced"})
    assert annotations == {
        "aistack.dev/image-policy-exempt-because": "kueue v0.19.2's chart pins tags"
    }
    with pytest.raises(ValueError, match="reason"):
        image_policy_exemption(" ")


@pytest.mark.parametrize(("mode", "actions"), [("warn", ["Warn", "Audit"]), ("audit", ["Audit"])])
def test_a_rollout_mode_warns_or_audits_instead_of_denying(mode, actions):
    graph = _graph(mode=mode)
    assert {tuple(b.inputs["spec"]["validationActions"]) for b in graph.of_type(BINDING)} == {
        tuple(actions)
    }


def test_bad_arguments_are_one_error_before_any_resource():
    with pytest.raises(ConfigError) as error:
        engine.run(
            lambda: k8s.ImagePolicy(
                "Image_Policy",
                {"governance": GOVERNANCE, "mode": "block", "excludeNamespaces": ["Kube System"]},
            )
        )
    assert set(error.value.fields) >= {"Image_Policy.mode", "Image_Policy.excludeNamespaces"}


# ---- the platform's validators ----------------------------------------------------------


@pytest.fixture(scope="module")
def manifests(graph):
    return [m for _, m in builtin_manifests(graph) if m["kind"].startswith("ValidatingAdmission")]


@pytest.mark.parametrize("version", (OLDEST_KUBERNETES, NEWEST_KUBERNETES))
def test_the_policies_and_bindings_pass_strict_validation(manifests, version):
    assert len(manifests) == 8
    for document in manifests:
        kubernetes_validate.validate(document, version, strict=True)


@pytest.mark.parametrize(
    ("kind", "path", "value"),
    [
        ("ValidatingAdmissionPolicy", ("spec", "failurePolicy"), ["Fail"]),  # not a list
        ("ValidatingAdmissionPolicy", ("spec", "validation"), []),  # misspelt
        ("ValidatingAdmissionPolicyBinding", ("spec", "validationAction"), ["Deny"]),
    ],
)
def test_strict_validation_catches_a_wrong_field(manifests, kind, path, value):
    document = copy.deepcopy(next(m for m in manifests if m["kind"] == kind))
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(document, OLDEST_KUBERNETES, strict=True)


def test_checkov_fails_nothing_in_a_serving_namespace_with_the_policies(tmp_path, graph, manifests):
    # Measured with checkov 3.3.30: it has no check for admission policies (none of its
    # kubernetes checks names the kinds), so alone they are parsed and judge nothing
    # (resource_count 0). Scanned with the serving namespace and a labelled workload
    # they must add no failure nor parsing error.
    server = copy.deepcopy(SERVER)
    server["spec"]["template"]["metadata"]["labels"].update(MODEL)
    bundle = namespace_bundles(graph)["ml-serve"]
    summary, passed, failed = _checkov(tmp_path, "serve", [*bundle, *manifests, server])
    assert summary["parsing_errors"] == 0
    assert failed == set()
    assert any(check == "CKV2_K8S_6" and "model-version-1.4.0" in name for check, name in passed)

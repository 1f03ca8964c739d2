"""k8s.TrainingQueue: Kueue flavors for Spot and on-demand (Spot first), a ClusterQueue
capped at the pools' GPUs, a LocalQueue per team namespace, priority classes, the
stopPolicy kill switch, each object valid for the pinned Kueue CRDs in both API versions."""

import copy

import kubernetes_validate
import pytest

from aistack import engine, k8s
from aistack.errors import ConfigError
from aistack.k8s._base import NEWEST_KUBERNETES, OLDEST_KUBERNETES
from aistack.k8s.training_queue import KUEUE_VERSION, stop_command
from aistack.queries.k8s import builtin_manifests, custom_manifests, manifest
from aistack.scan.crd_schemas import schema_for, validate_custom_resource
from tests.k8s.conftest import GOVERNANCE, spot_flavor

GPU_TAINT = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

#: What aws.KarpenterGpuPool.kueue_flavors() returns (the queue/pool contract): one dict
#: per capacity type, plain values.
KARPENTER_FLAVORS = [
    {
        "name": "gpu-spot",
        "capacity": "spot",
        "nodeLabels": {
            "aistack.dev/pool": "gpu",
            "aistack.dev/capacity": "spot",
            "karpenter.sh/capacity-type": "spot",
        },
        "tolerations": [GPU_TAINT],
        "gpus": 16,
        "gpuResource": "nvidia.com/gpu",
    },
    {
        "name": "gpu-on-demand",
        "capacity": "on-demand",
        "nodeLabels": {
            "aistack.dev/pool": "gpu",
            "aistack.dev/capacity": "on-demand",
            "karpenter.sh/capacity-type": "on-demand",
        },
        "tolerations": [GPU_TAINT],
        "gpus": 8,
        "gpuResource": "nvidia.com/gpu",
    },
]

#: What gcp.GpuNodePool.kueue_flavors() returns for a GKE Spot pool: GKE taints Spot nodes
#: cloud.google.com/gke-spot=true:NoSchedule when asked to, and GPU nodes
#: nvidia.com/gpu=present:NoSchedule itself.
GKE_SPOT_FLAVOR = {
    "name": "l4-spot",
    "capacity": "spot",
    "nodeLabels": {
        "aistack.dev/pool": "l4",
        "aistack.dev/capacity": "spot",
        "cloud.google.com/gke-spot": "true",
    },
    "tolerations": [
        GPU_TAINT,
        {
            "key": "cloud.google.com/gke-spot",
            "operator": "Equal",
            "value": "true",
            "effect": "NoSchedule",
        },
    ],
    "gpus": 4,
    "gpuResource": "nvidia.com/gpu",
}


def _args(**overrides):
    # On-demand listed first on purpose: the queue orders Spot first itself.
    return {
        "governance": dict(GOVERNANCE),
        "namespaces": ["ml-train", "ml-eval"],
        "flavors": list(reversed(KARPENTER_FLAVORS)),
        **overrides,
    }


def _queue(**overrides):
    made = {}

    def program():
        made["queue"] = k8s.TrainingQueue("train", _args(**overrides))

    graph = engine.run(program)
    return graph, made["queue"]


def _spec(graph):
    return graph.named("train-cluster-queue").inputs["spec"]


# ---- validity against the pinned CRDs ---------------------------------------------------


@pytest.mark.parametrize("api", ["v1beta2", "v1beta1"])
def test_every_kueue_object_validates_against_the_pinned_crds(api):
    graph, _ = _queue(apiVersion=api, cohort="research", stopPolicy="Hold")
    found = custom_manifests(graph)
    assert sorted(m["kind"] for _, m in found) == sorted(
        ["ResourceFlavor"] * 2
        + ["ClusterQueue"]
        + ["LocalQueue"] * 2
        + ["WorkloadPriorityClass"] * 2
    )
    for _, document in found:
        assert document["apiVersion"] == f"kueue.x-k8s.io/{api}"
        assert schema_for(document["apiVersion"], document["kind"]).source.startswith(
            f"kueue-{KUEUE_VERSION}/"
        )
        assert validate_custom_resource(document) == [], document["kind"]


def test_a_gke_spot_flavor_validates_too():
    graph, _ = _queue(flavors=[GKE_SPOT_FLAVOR])
    for _, document in custom_manifests(graph):
        assert validate_custom_resource(document) == []


@pytest.mark.parametrize(
    ("api", "wrong", "right"),
    [("v1beta2", "cohort", "cohortName"), ("v1beta1", "cohortName", "cohort")],
)
def test_the_other_versions_cohort_field_is_caught_by_the_crd(api, wrong, right):
    graph, _ = _queue(apiVersion=api, cohort="research")
    document = manifest(graph.named("train-cluster-queue"))
    assert document["spec"][right] == "research"
    document = copy.deepcopy(document)
    document["spec"][wrong] = document["spec"].pop(right)
    errors = validate_custom_resource(document)
    # The API server would prune the unknown field silently: a queue without its cohort.
    assert any(wrong in error and "not allowed" in error for error in errors), errors


def test_v1beta1s_flat_admission_checks_are_caught_on_v1beta2():
    graph, _ = _queue()
    document = copy.deepcopy(manifest(graph.named("train-cluster-queue")))
    document["spec"]["admissionChecks"] = ["dws-prov"]
    assert validate_custom_resource(document) != []


@pytest.mark.parametrize("version", [OLDEST_KUBERNETES, NEWEST_KUBERNETES])
def test_the_priority_classes_pass_strict_kubernetes_validation(version):
    graph, _ = _queue()
    documents = [m for _, m in builtin_manifests(graph)]
    assert sorted(m["kind"] for m in documents) == ["PriorityClass", "PriorityClass"]
    for document in documents:
        kubernetes_validate.validate(document, version, strict=True)


# ---- flavors ------------------------------------------------------------------------------


def test_pool_flavors_are_accepted_as_is_and_carry_their_labels_and_tolerations():
    graph, _ = _queue()
    spot = graph.named("train-flavor-gpu-spot").inputs
    assert spot["metadata"]["name"] == "gpu-spot"
    # Kueue adds nodeLabels to admitted pods' nodeSelector and tolerations to their
    # tolerations (Kueue docs, "Resource Flavor").
    assert spot["spec"] == {
        "nodeLabels": KARPENTER_FLAVORS[0]["nodeLabels"],
        "tolerations": [GPU_TAINT],
    }


def test_spot_is_tried_before_on_demand_whatever_the_order_given():
    graph, _ = _queue()
    flavors = _spec(graph)["resourceGroups"][0]["flavors"]
    assert [f["name"] for f in flavors] == ["gpu-spot", "gpu-on-demand"]


def test_the_gpu_quota_of_each_flavor_is_the_pools_maximum_with_cpu_memory_and_disk_covered():
    group = _spec(_queue()[0])["resourceGroups"][0]
    # Job templates request their node-local cache: an uncovered ephemeral-storage would
    # keep every job suspended (tests/policy/rules/k8s/test_k8s_admission_rules.py).
    assert group["coveredResources"] == ["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu"]
    quotas = {
        f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]} for f in group["flavors"]
    }
    assert quotas == {
        "gpu-spot": {
            "cpu": "128",
            "memory": "1Ti",
            # Canonical, as Kueue's webhook stores it (6000G would be a diff on every up).
            "ephemeral-storage": "6T",
            "nvidia.com/gpu": "16",
        },
        "gpu-on-demand": {
            "cpu": "64",
            "memory": "512Gi",
            "ephemeral-storage": "3T",
            "nvidia.com/gpu": "8",
        },
    }
    # Each flavor lists every covered resource, in the same order (the CRD's rule).
    for flavor in group["flavors"]:
        assert [r["name"] for r in flavor["resources"]] == group["coveredResources"]


def test_a_hand_written_flavor_may_give_its_own_cpu_and_memory_quota():
    # Written back canonical: 196608Mi is what Kueue stores as 192Gi.
    flavor = {**GKE_SPOT_FLAVOR, "cpu": "48000m", "memory": "196608Mi"}
    group = _spec(_queue(flavors=[flavor])[0])["resourceGroups"][0]
    assert group["flavors"][0]["resources"][:2] == [
        {"name": "cpu", "nominalQuota": "48"},
        {"name": "memory", "nominalQuota": "192Gi"},
    ]


def test_flavors_of_two_device_plugins_cover_both_with_zero_of_the_other():
    amd = {**KARPENTER_FLAVORS[1], "name": "mi300-on-demand", "gpuResource": "amd.com/gpu"}
    graph, _ = _queue(flavors=[KARPENTER_FLAVORS[0], amd])
    group = _spec(graph)["resourceGroups"][0]
    assert group["coveredResources"] == [
        "cpu",
        "memory",
        "ephemeral-storage",
        "amd.com/gpu",
        "nvidia.com/gpu",
    ]
    amd_quota = {r["name"]: r["nominalQuota"] for r in group["flavors"][1]["resources"]}
    assert amd_quota["amd.com/gpu"] == "8" and amd_quota["nvidia.com/gpu"] == "0"
    for _, document in custom_manifests(graph):
        assert validate_custom_resource(document) == []


@pytest.mark.parametrize("gpus", [1_000_000_000, 100_001])
def test_an_infinite_gpu_quota_is_refused(gpus):
    flavors = [{**KARPENTER_FLAVORS[0], "gpus": gpus}]
    with pytest.raises(ConfigError) as error:
        _queue(flavors=flavors)
    assert error.value.fields == ["train.flavors.0.gpus"]


def test_a_negative_or_missing_gpu_maximum_is_refused():
    flavor = {k: v for k, v in KARPENTER_FLAVORS[0].items() if k != "gpus"}
    with pytest.raises(ConfigError) as error:
        _queue(flavors=[flavor, {**KARPENTER_FLAVORS[1], "gpus": -1}])
    assert sorted(error.value.fields) == ["train.flavors.0.gpus", "train.flavors.1.gpus"]


def test_a_toleration_kueue_would_refuse_is_a_config_error():
    flavor = {
        **KARPENTER_FLAVORS[0],
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "value": "present"}],
    }
    with pytest.raises(ConfigError) as error:
        _queue(flavors=[flavor])
    assert error.value.fields == ["train.flavors.0.tolerations.0.value"]


def test_a_flavor_listed_twice_is_refused():
    with pytest.raises(ConfigError) as error:
        _queue(flavors=[KARPENTER_FLAVORS[0], KARPENTER_FLAVORS[0]])
    assert error.value.fields == ["train.flavors.1.name"]


def test_an_unknown_flavor_field_is_refused_before_deploy():
    with pytest.raises(ConfigError) as error:
        _queue(flavors=[{**KARPENTER_FLAVORS[0], "nodeSelector": {"a": "b"}}])
    assert error.value.fields == ["train.flavors.0.nodeSelector"]


# ---- the ClusterQueue -------------------------------------------------------------------


def test_only_the_team_namespaces_may_submit_and_lower_priority_work_is_preempted():
    spec = _spec(_queue()[0])
    assert spec["namespaceSelector"] == {
        "matchExpressions": [
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "In",
                "values": ["ml-eval", "ml-train"],
            }
        ]
    }
    assert spec["preemption"] == {"withinClusterQueue": "LowerPriority"}
    assert spec["queueingStrategy"] == "BestEffortFIFO"
    assert "cohortName" not in spec and "cohort" not in spec


def test_a_cohort_reclaims_its_lent_quota():
    spec = _spec(_queue(cohort="research")[0])
    assert spec["cohortName"] == "research"
    assert spec["preemption"] == {
        "withinClusterQueue": "LowerPriority",
        "reclaimWithinCohort": "Any",
    }


def test_cluster_scoped_objects_have_explicit_names():
    graph, queue = _queue(clusterQueueName="ml-gpu")
    for resource, document in [*custom_manifests(graph), *builtin_manifests(graph)]:
        annotations = document["metadata"].get("annotations") or {}
        assert "pulumi.com/autonamed" not in annotations, resource.name
    assert manifest(graph.named("train-cluster-queue"))["metadata"]["name"] == "ml-gpu"
    assert queue.cluster_queue_name == "ml-gpu"


# ---- LocalQueues --------------------------------------------------------------------------


def test_each_team_namespace_gets_a_local_queue_named_for_jobs_to_reference():
    graph, queue = _queue(localQueueName="training")
    for namespace in ("ml-train", "ml-eval"):
        document = manifest(graph.named(f"train-local-{namespace}"))
        assert document["metadata"]["name"] == "training"
        assert document["metadata"]["namespace"] == namespace
        assert document["spec"] == {"clusterQueue": "train"}
    assert queue.local_queue_names == {"ml-train": "training", "ml-eval": "training"}


def test_team_namespace_components_are_accepted_and_waited_for():
    made = {}

    def program():
        team = k8s.TeamNamespace(
            "ml-train", {"team": "ml", "gpus": 8, "governance": dict(GOVERNANCE)}
        )
        other = k8s.TeamNamespace(
            "vision",
            {"team": "cv", "gpus": 4, "namespace": "cv-train", "governance": dict(GOVERNANCE)},
        )
        made["queue"] = k8s.TrainingQueue("train", _args(namespaces=[team, other, "ml-eval"]))

    graph = engine.run(program)
    assert made["queue"].local_queue_names == {
        "ml-train": "train",
        "cv-train": "train",
        "ml-eval": "train",
    }
    local = graph.named("train-local-cv-train")
    assert manifest(local)["metadata"]["namespace"] == "cv-train"
    assert graph.named("vision-namespace").urn in local.dependencies


def test_a_serving_namespace_is_not_queued_with_training():
    def program():
        serving = k8s.TeamNamespace(
            "ml-serve", {"team": "ml", "gpus": 2, "tier": "serve", "governance": dict(GOVERNANCE)}
        )
        k8s.TrainingQueue("train", _args(namespaces=["ml-train", serving]))

    with pytest.raises(ConfigError) as error:
        engine.run(program)
    assert error.value.fields == ["train.namespaces.1"]


def test_a_namespace_listed_twice_is_refused():
    with pytest.raises(ConfigError) as error:
        _queue(namespaces=["ml-train", "ml-train"])
    assert error.value.fields == ["train.namespaces"]


# ---- the kill switch ----------------------------------------------------------------------


def test_stop_policy_is_left_to_the_kill_switch_by_default():
    graph, queue = _queue()
    assert "stopPolicy" not in _spec(graph)
    assert queue.stop_command == (
        "kubectl patch clusterqueues.kueue.x-k8s.io train --type=merge "
        """-p '{"spec":{"stopPolicy":"HoldAndDrain"}}'"""
    )
    assert queue.resume_command == stop_command("train", "None")
    assert '"stopPolicy":"None"' in queue.resume_command


@pytest.mark.parametrize("policy", ["Hold", "HoldAndDrain"])
def test_the_stack_may_hold_the_queue(policy):
    assert _spec(_queue(stopPolicy=policy)[0])["stopPolicy"] == policy


def test_pinning_stop_policy_none_is_refused():
    # A pinned None would resume a queue the kill switch stopped on the next deploy.
    with pytest.raises(ConfigError) as error:
        _queue(stopPolicy="None")
    assert error.value.fields == ["train.stopPolicy"]


# ---- priorities ---------------------------------------------------------------------------


def test_serving_pods_outrank_training_pods_and_training_pods_do_not_preempt():
    graph, queue = _queue()
    serving = manifest(graph.named("train-serving-priority"))
    training = manifest(graph.named("train-training-priority"))
    assert serving["metadata"]["name"] == "train-serving"
    assert serving["value"] > training["value"]
    assert training["preemptionPolicy"] == "Never"
    assert queue.priority_class_names == {"serving": "train-serving", "training": "train-training"}


def test_workload_priority_classes_are_named_for_the_queue():
    graph, queue = _queue(workloadPriorities={"urgent": 5000, "batch": 10})
    assert queue.workload_priority_class_names == {"urgent": "train-urgent", "batch": "train-batch"}
    urgent = manifest(graph.named("train-priority-urgent"))
    assert (urgent["kind"], urgent["value"]) == ("WorkloadPriorityClass", 5000)


def test_training_at_or_above_serving_is_refused():
    with pytest.raises(ConfigError) as error:
        _queue(trainingPriority=100_000)
    assert error.value.fields == ["train.trainingPriority"]


def test_check_args_runs_the_component_s_checks_and_registers_nothing():
    from aistack.config import parse_all

    flavor = spot_flavor(10**9)  # "infinite": the component's own check refuses it

    def program():
        parse_all(
            {
                "queue": (
                    k8s.TrainingQueue.check_args,
                    {"governance": GOVERNANCE, "namespaces": ["ml"], "flavors": [flavor]},
                )
            }
        )

    with pytest.raises(ConfigError) as caught:
        engine.run(program)
    assert [p.field for p in caught.value.problems] == ["queue.flavors.0.gpus"]

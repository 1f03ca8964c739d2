"""AIS-C3-11: Kueue could admit every job template into its ClusterQueue. Kueue's own
rules (aistack/queries/kueue_admission.py cites them): compliant for k8s.TrainingQueue
with k8s.TrainingJobTemplate and on every Kubernetes example stack; violated by the
ClusterQueue the audit found (no ephemeral-storage), by a quota below one pod set, by an
untolerated flavor taint and by a node selector no flavor matches."""

import copy
from decimal import Decimal

import pulumi_kubernetes as k8s
import pytest

from aistack import k8s as aistack_k8s
from aistack.policy import all_rules
from aistack.queries.k8s import manifest
from aistack.queries.kueue_admission import pod_requests
from tests._harness import previews
from tests.policy.rules.shared_verdicts import build

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
DIGEST = "sha256:" + "0" * 64
KUEUE = "kueue.x-k8s.io/v1beta2"
FLAVOR = {
    "name": "gpu-spot",
    "capacity": "spot",
    "nodeLabels": {"aistack.dev/pool": "gpu"},
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "gpus": 8,
}


def _queued_template(flavor=FLAVOR, gpus_per_node=1, nodes=1, **template):
    def program():
        team = aistack_k8s.TeamNamespace(
            "ml-train", {"team": "ml", "gpus": 8, "tier": "train", "governance": GOVERNANCE}
        )
        aistack_k8s.TrainingQueue(
            "train", {"governance": GOVERNANCE, "namespaces": [team], "flavors": [flavor]}
        )
        aistack_k8s.TrainingJobTemplate(
            "llama",
            {
                "governance": GOVERNANCE,
                "namespace": "ml-train",
                "queue": "train",
                "serviceAccount": "trainer",
                "image": f"registry.example.com/train@{DIGEST}",
                "gpusPerNode": gpus_per_node,
                "nodes": nodes,
                "maxRuntimeMinutes": 600,
                "checkpointUri": "s3://ckpt/llama",
                "datasetUri": "s3://data/tokens",
                "datasetVersion": "v3",
                **template,
            },
        )

    return program


def _findings(graph):
    [rule] = [r for r in all_rules() if r.id == "AIS-C3-11"]
    return rule.evaluate(graph)


@pytest.mark.parametrize("nodes", [1, 3])
def test_a_training_queue_admits_its_templates_as_job_and_jobset(verdicts, nodes):
    assert verdicts("AIS-C3-11", _queued_template(nodes=nodes)) == {"llama-template": "compliant"}


def _bare_queue(
    covered=("cpu", "memory", "ephemeral-storage", "nvidia.com/gpu"),
    gpus="8",
    taints=None,
    labels=None,
):
    """A hand-written ClusterQueue `bare` that the template's LocalQueue points to instead."""
    quotas = {"cpu": "64", "memory": "512Gi", "ephemeral-storage": "4Ti", "nvidia.com/gpu": gpus}
    k8s.apiextensions.CustomResource(
        "bare-flavor",
        api_version=KUEUE,
        kind="ResourceFlavor",
        metadata={"name": "bare-gpu"},
        spec={
            "nodeLabels": labels or {"aistack.dev/pool": "gpu"},
            **({"nodeTaints": taints} if taints else {}),
        },
    )
    k8s.apiextensions.CustomResource(
        "bare-cq",
        api_version=KUEUE,
        kind="ClusterQueue",
        metadata={"name": "bare"},
        spec={
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": list(covered),
                    "flavors": [
                        {
                            "name": "bare-gpu",
                            "resources": [
                                {"name": name, "nominalQuota": quotas[name]} for name in covered
                            ],
                        }
                    ],
                }
            ],
        },
    )
    k8s.apiextensions.CustomResource(
        "bare-lq",
        api_version=KUEUE,
        kind="LocalQueue",
        metadata={"name": "bare", "namespace": "ml-train"},
        spec={"clusterQueue": "bare"},
    )


@pytest.mark.parametrize(
    ("queue", "template", "message"),
    [
        # The shipped defect: the template requests its node-local cache, the ClusterQueue
        # covered only cpu, memory and the GPU.
        (
            {"covered": ("cpu", "memory", "nvidia.com/gpu")},
            {},
            "resource ephemeral-storage unavailable in ClusterQueue",
        ),
        ({"gpus": "2"}, {"gpusPerNode": 4}, "insufficient quota for nvidia.com/gpu"),
        ({"gpus": "8"}, {"gpusPerNode": 4, "nodes": 3}, "insufficient quota for nvidia.com/gpu"),
        (
            {"taints": [{"key": "team", "value": "vision", "effect": "NoSchedule"}]},
            {},
            "untolerated taint team",
        ),
    ],
    ids=["uncovered-disk", "quota-below-a-pod", "quota-below-the-pod-set", "untolerated-taint"],
)
def test_what_kueue_would_never_admit_fails_with_kueues_reason(verdicts, queue, template, message):
    def program():
        _queued_template(queue="bare", **template)()
        _bare_queue(**queue)

    findings = {f.resource_name: f for f in _findings(build(program))}
    assert findings["llama-template"].status == "non-compliant"
    assert message in findings["llama-template"].message


def test_a_template_naming_a_queue_nobody_created_fails(verdicts):
    assert verdicts("AIS-C3-11", _queued_template(queue="nobody")) == {
        "llama-template": "non-compliant"
    }


def test_pod_requests_count_sidecars_and_the_largest_init_container_as_kubernetes_does():
    """k8s.io/component-helpers/resource PodRequests: containers summed, restartable init
    containers (sidecars) added, each other init container on its own with the sidecars
    started before it; a limit alone is the request (Kueue's UseLimitsAsMissingRequestsInPod)."""
    pod = {
        "initContainers": [
            {"name": "sync", "resources": {"requests": {"cpu": "4", "memory": "1Gi"}}},
            {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
            {"name": "warm", "resources": {"limits": {"cpu": "2"}}},
        ],
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}},
            {"name": "b", "resources": {"limits": {"memory": "2Gi"}}},
        ],
    }
    requests = pod_requests(pod)
    assert requests["cpu"] == Decimal(4)  # the first init container alone, above 1 + 1 + 1
    assert requests["memory"] == Decimal(4 * 1024**3)


def test_limit_range_defaults_fill_what_a_container_leaves_out():
    pod = {"containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]}
    defaults = {"cpu": Decimal("0.25"), "ephemeral-storage": Decimal(10**9)}
    assert pod_requests(pod, defaults) == {"cpu": Decimal(1), "ephemeral-storage": Decimal(10**9)}


STACKS = ["stacks/kubernetes", "stacks/kubernetes-eks", "stacks/kubernetes-gke"]


@pytest.mark.parametrize("stack", STACKS)
def test_every_example_stacks_templates_are_admissible_and_a_broken_copy_is_not(stack):
    graph = previews.run_project(previews.ROOT / stack)
    findings = _findings(graph)
    assert findings and all(f.status == "compliant" for f in findings), findings
    broken = copy.deepcopy(graph)
    for queue in (r for r in broken.resources if r.type.endswith(":ClusterQueue")):
        for group in queue.inputs["spec"]["resourceGroups"]:
            index = group["coveredResources"].index("ephemeral-storage")
            del group["coveredResources"][index]
            for flavor in group["flavors"]:
                del flavor["resources"][index]
        assert "ephemeral-storage" not in str(manifest(queue)["spec"]["resourceGroups"])
    assert all(f.status == "non-compliant" for f in _findings(broken))

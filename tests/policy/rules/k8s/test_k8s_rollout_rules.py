"""AIS-S3-06: the serving namespace's GPU quota and the node pool its pods land on hold a
rollout at the maximum (../shared/research/k8s-fidelity-audit.md, defect 8: on EKS the
floor equalled the quota, so the first pod-template change stalled on a refused surge pod).
Compliant for k8s.InferenceService and on every Kubernetes example stack; violated by a
hand-written Deployment whose surge the quota cannot hold, and by a NodePool limit below
what the quota allows."""

import copy

import pulumi_kubernetes as k8s
import pytest

from aistack import k8s as aistack_k8s
from tests._harness import previews
from tests.k8s.test_inference_service import _args, _team
from tests.policy.rules.shared_verdicts import build, verdicts_of

STACKS = ["stacks/kubernetes", "stacks/kubernetes-eks", "stacks/kubernetes-gke"]


def test_an_inference_service_fits_its_rollout():
    graph = build(lambda: aistack_k8s.InferenceService("chat", _args(), team=_team(gpus=6)))
    assert set(verdicts_of("AIS-S3-06", graph).values()) == {"compliant"}


def _hand_written(replicas, surge, quota):
    def program():
        k8s.core.v1.ResourceQuota(
            "quota",
            metadata={"name": "gpus", "namespace": "serve"},
            spec={"hard": {"requests.nvidia.com/gpu": str(quota)}},
        )
        k8s.apps.v1.Deployment(
            "server",
            metadata={"name": "server", "namespace": "serve"},
            spec={
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "server"}},
                "strategy": {"rollingUpdate": {"maxSurge": surge, "maxUnavailable": 0}},
                "template": {
                    "metadata": {"labels": {"app": "server", "aistack.dev/model-name": "chat"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "model",
                                "image": "vllm",
                                "resources": {"limits": {"nvidia.com/gpu": "1"}},
                            }
                        ]
                    },
                },
            },
        )

    return program


@pytest.mark.parametrize(
    ("replicas", "surge", "quota", "status"),
    [
        (2, 1, 3, "compliant"),
        (2, 1, 2, "non-compliant"),
        (2, "25%", 2, "non-compliant"),
        (2, 0, 2, "compliant"),
    ],
    ids=["surge-fits", "surge-refused", "default-surge-refused", "no-surge"],
)
def test_a_surge_the_quota_cannot_hold_fails(replicas, surge, quota, status):
    assert verdicts_of("AIS-S3-06", build(_hand_written(replicas, surge, quota))) == {
        "server": status
    }


@pytest.mark.parametrize("stack", STACKS)
def test_every_example_stack_fits_and_a_smaller_quota_does_not(stack):
    graph = previews.run_project(previews.ROOT / stack)
    assert set(verdicts_of("AIS-S3-06", graph).values()) == {"compliant"}
    broken = copy.deepcopy(graph)
    for quota in broken.resources:
        if quota.type.endswith(":ResourceQuota"):
            hard = quota.inputs["spec"]["hard"]
            if hard.get("requests.nvidia.com/gpu") == "4":
                hard["requests.nvidia.com/gpu"] = "3"
    assert "non-compliant" in verdicts_of("AIS-S3-06", broken).values()


def test_a_karpenter_limit_below_the_rollout_fails():
    graph = copy.deepcopy(previews.run_project(previews.ROOT / "stacks/kubernetes-eks"))
    for pool in graph.resources:
        if pool.type == "kubernetes:karpenter.sh/v1:NodePool" and "on-demand" in pool.name:
            pool.inputs["spec"]["limits"]["nvidia.com/gpu"] = "3"
    verdicts = verdicts_of("AIS-S3-06", graph)
    assert set(verdicts.values()) == {"non-compliant"}

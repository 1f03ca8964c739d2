"""AIS-C6-19: pods that read a bucket have a keyless identity and a way through their
namespace's default-deny (../shared/research/k8s-fidelity-audit.md, defect 6: the serving
pods' weights copy had neither). Compliant on every Kubernetes example stack; violated when
the ServiceAccount's identity or the namespace's HTTPS egress is taken away."""

import copy

import pytest

from tests._harness import previews
from tests.policy.rules.shared_verdicts import verdicts_of

STACKS = ["stacks/kubernetes", "stacks/kubernetes-eks", "stacks/kubernetes-gke"]
IDENTITY = (
    "iam.gke.io/gcp-service-account",
    "eks.amazonaws.com/role-arn",
    "aistack.dev/eks-pod-identity-role-arn",
)


@pytest.mark.parametrize("stack", STACKS)
def test_every_bucket_reader_of_the_example_stacks_can_reach_it(stack):
    verdicts = verdicts_of("AIS-C6-19", previews.run_project(previews.ROOT / stack))
    assert len(verdicts) >= 2 and set(verdicts.values()) == {"compliant"}


def _without_identities(graph):
    for account in graph.resources:
        if account.type == "kubernetes:core/v1:ServiceAccount":
            for metadata in (account.inputs["metadata"], account.outputs.get("metadata") or {}):
                for key in IDENTITY:
                    (metadata.get("annotations") or {}).pop(key, None)
    return graph


def _without_egress(graph):
    for policy in graph.resources:
        if policy.type == "kubernetes:networking.k8s.io/v1:NetworkPolicy":
            spec = policy.inputs["spec"]
            spec["egress"] = [
                e for e in spec.get("egress") or []
                if not any(p.get("port") == 443 for p in e.get("ports") or [])
            ]  # fmt: skip
    return graph


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("breaking", [_without_identities, _without_egress])
def test_a_reader_without_an_identity_or_a_way_out_fails(stack, breaking):
    graph = breaking(copy.deepcopy(previews.run_project(previews.ROOT / stack)))
    assert set(verdicts_of("AIS-C6-19", graph).values()) == {"non-compliant"}

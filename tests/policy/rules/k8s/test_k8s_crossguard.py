"""The CrossGuard pack judges Kubernetes objects as `aistack check` does."""

import pulumi_kubernetes as k8s

from aistack import engine, policy
from aistack import k8s as aistack_k8s
from aistack.policy.crossguard import graph_from_policy_resources

from ...crossguard_resources import policy_resources as _policy_resources

GOVERNANCE = {"owner": "a", "costCenter": "b", "allowedRegions": ["europe-west4"]}
K8S_RULES = ("AIS-C3-07", "AIS-C6-10", "AIS-C6-11", "AIS-S1-03", "AIS-S1-04")


def _program():
    aistack_k8s.TeamNamespace(
        "ml-train",
        {
            "team": "ml",
            "gpus": 2,
            "governance": GOVERNANCE,
            "serviceAccounts": [{"name": "trainer"}],
        },
    )
    k8s.core.v1.Namespace("loose", metadata={"name": "loose"})
    k8s.core.v1.ServiceAccount("loose-sa", metadata={"name": "sa", "namespace": "loose"})
    k8s.core.v1.Secret(
        "loose-keys", metadata={"namespace": "loose"}, string_data={"AWS_SECRET_ACCESS_KEY": "x"}
    )


def test_the_pack_judges_kubernetes_objects_like_aistack_check():
    graph = engine.run(_program)
    rebuilt = graph_from_policy_resources(_policy_resources(graph))
    rules = [r for r in policy.all_rules() if r.id in K8S_RULES]
    assert len(rules) == len(K8S_RULES)
    for rule in rules:
        ours = {(f.resource_name, f.status) for f in rule.evaluate(graph)}
        theirs = {(f.resource_name, f.status) for f in rule.evaluate(rebuilt)}
        assert ours == theirs, rule.id
        assert any(
            status == "non-compliant" for name, status in ours if name.startswith("loose")
        ), rule.id
        assert all(status == "compliant" for name, status in ours if name.startswith("ml-train")), (
            rule.id
        )

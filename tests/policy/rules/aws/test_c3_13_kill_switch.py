"""AIS-C3-13: the AWS kill switch's selector (read from the Lambda's source, its stack from
the Lambda's environment in the graph) matches training capacity only: compliant on the
reference stack; a serving group tagged as training fails; Karpenter's nodes are left to
Karpenter (the Lambda skips instances tagged karpenter.sh/nodepool, tested against the
Lambda itself in tests/aws/lambdas/test_budget_guard.py)."""

from __future__ import annotations

import copy

from tests._harness import previews
from tests.policy.rules.shared_verdicts import findings_of, verdicts_of

RULE = "AIS-C3-13"


def _reference():
    return copy.deepcopy(previews.run_project(previews.ROOT))


def test_the_reference_stack_stops_its_batch_training_only():
    assert verdicts_of(RULE, _reference()) == {"training-compute": "compliant"}


def test_a_serving_group_tagged_as_training_fails():
    """An inference tier's Auto Scaling group with `aistack:workload=training`: it sits
    behind the load balancer's target group, so the kill switch would stop serving."""
    graph = _reference()
    for group in graph.of_type("aws:autoscaling/group:Group"):
        for tag in group.inputs["tags"]:
            if tag["key"] == "aistack:workload":
                tag["value"] = "training"
    verdicts = verdicts_of(RULE, graph)
    serving = {name: status for name, status in verdicts.items() if name.startswith("inference")}
    assert serving and set(serving.values()) == {"non-compliant"}, verdicts
    assert verdicts["training-compute"] == "compliant"
    messages = [f.message for f in findings_of(RULE, graph) if f.status == "non-compliant"]
    assert all("targetgroup/infer-" in message for message in messages)


def test_karpenter_nodes_tagged_as_training_are_left_to_karpenter():
    eks = previews.run_project(previews.ROOT / "stacks/kubernetes-eks")
    [node_class, *_] = eks.of_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    graph = _reference()
    node_class = copy.deepcopy(node_class)
    node_class.inputs["spec"]["tags"] = {
        "aistack:stack": "aistack-dev",
        "aistack:workload": "training",
    }
    graph.resources.append(node_class)
    verdicts = verdicts_of(RULE, graph)
    assert verdicts[node_class.name] == "compliant"
    [finding] = [f for f in findings_of(RULE, graph) if f.resource_name == node_class.name]
    assert "karpenter.sh/nodepool" in finding.message

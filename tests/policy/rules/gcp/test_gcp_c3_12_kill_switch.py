"""AIS-C3-12: the GCP kill switch's selector (read from the function's source and its
environment in the graph) matches training capacity only, on every GCP example stack; the
labelling the GCP audit found (defect #6: serving and system pools labelled
`aistack-workload: training`) and a serving MIG mislabelled as training fail it."""

from __future__ import annotations

import copy

import pytest

from tests._harness import previews
from tests.policy.rules.shared_verdicts import findings_of, verdicts_of

RULE = "AIS-C3-12"
STACKS = ["stacks/gcp", "stacks/gcp-training", "stacks/gcp-guardrails", "stacks/kubernetes-gke"]


@pytest.mark.parametrize("stack", STACKS)
def test_every_gcp_example_stack_stops_training_capacity_only(stack):
    verdicts = verdicts_of(RULE, previews.run_project(previews.ROOT / stack))
    assert verdicts and set(verdicts.values()) == {"compliant"}, verdicts


def test_the_kubernetes_stack_stops_the_spot_pool_and_nothing_else():
    verdicts = verdicts_of(RULE, previews.run_project(previews.ROOT / "stacks/kubernetes-gke"))
    assert verdicts == {"l4-spot-pool": "compliant"}


def test_a_serving_pool_labelled_as_training_fails():
    """The audit's graph of stacks/kubernetes-gke: `l4-serve-pool.nodeConfig.resourceLabels.
    aistack-workload = "training"`. The model's Deployments select its nodes, so the kill
    switch would take inference down."""
    graph = copy.deepcopy(previews.run_project(previews.ROOT / "stacks/kubernetes-gke"))
    graph.named("l4-serve-pool").inputs["nodeConfig"]["resourceLabels"]["aistack-workload"] = (
        "training"
    )
    verdicts = verdicts_of(RULE, graph)
    assert verdicts == {"l4-serve-pool": "non-compliant", "l4-spot-pool": "compliant"}
    [finding] = [f for f in findings_of(RULE, graph) if f.resource_name == "l4-serve-pool"]
    assert "Deployment vision-chat-1-3-0" in finding.message


def test_the_system_pool_is_never_selected_even_labelled_as_training():
    """The system pool as labelled before gcp.GkeCluster wrote `system`: no GPU, node label
    `aistack.dev/pool: system`. The function skips it, so the rule does not count it."""
    graph = copy.deepcopy(previews.run_project(previews.ROOT / "stacks/kubernetes-gke"))
    graph.named("train-system").inputs["nodeConfig"]["resourceLabels"]["aistack-workload"] = (
        "training"
    )
    assert verdicts_of(RULE, graph) == {"l4-spot-pool": "compliant"}


def test_a_serving_group_labelled_as_training_fails():
    """An inference tier's template without its tier label and labelled training: the
    group is a load balancer's backend and an autoscaler resizes it."""
    graph = copy.deepcopy(previews.run_project(previews.ROOT / "stacks/gcp"))
    for template in graph.resources:
        labels = template.inputs.get("labels") or {}
        if template.type.endswith("nstanceTemplate") and labels.get("aistack-inference-tier"):
            del labels["aistack-inference-tier"]
            labels["aistack-workload"] = "training"
    verdicts = verdicts_of(RULE, graph)
    assert verdicts["train-mig"] == "compliant"
    serving = {name: status for name, status in verdicts.items() if name.startswith("serve-")}
    assert serving and set(serving.values()) == {"non-compliant"}, verdicts


def test_without_the_kill_switch_nothing_is_judged():
    graph = copy.deepcopy(previews.run_project(previews.ROOT / "stacks/gcp"))
    function = graph.named("budget-function")
    function.inputs["serviceConfig"]["environmentVariables"]["AISTACK_KILL_SWITCH"] = "false"
    assert verdicts_of(RULE, graph) == {"": "not-applicable"}

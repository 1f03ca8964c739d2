"""AIS-C3-13: the AWS budget kill switch selects training capacity only: every Auto Scaling
group, EC2 instance and Batch compute environment its selector matches is a training one,
never serving capacity behind a load balancer, and never nodes a controller replaces
(Karpenter's, Batch's own groups)."""

from collections.abc import Iterator
from typing import Any

from aistack.contracts.kill_switch import selector
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule

LAMBDA = "aws:lambda/function:Function"
#: The kill switch Lambda's entry point: its code is `budget_guard.py` (aws.BudgetGuard).
HANDLER = "budget_guard.handler"
GROUP = "aws:autoscaling/group:Group"
INSTANCE = "aws:ec2/instance:Instance"
COMPUTE_ENVIRONMENT = "aws:batch/computeEnvironment:ComputeEnvironment"
#: How a group or an instance is put behind a load balancer besides `targetGroupArns`.
GROUP_ATTACHMENT = "aws:autoscaling/attachment:Attachment"
TARGET_ATTACHMENT = "aws:lb/targetGroupAttachment:TargetGroupAttachment"
EC2_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


def _tags(resource: Resource) -> dict[str, str]:
    """Tags as a map: Auto Scaling groups list them as {key, value, propagateAtLaunch}."""
    raw = resource.inputs.get("tags")
    if isinstance(raw, list):
        return {str(t.get("key")): str(t.get("value")) for t in raw if isinstance(t, dict)}
    return {str(k): str(v) for k, v in (raw or {}).items()}


def _kill_switches(graph: StackGraph) -> list[tuple[Resource, str]]:
    found = []
    for function in graph.of_type(LAMBDA):
        env = (function.inputs.get("environment") or {}).get("variables") or {}
        if function.inputs.get("handler") == HANDLER and env.get("AISTACK_STACK"):
            found.append((function, str(env["AISTACK_STACK"])))
    return found


def _ours(tags: dict[str, str], stack: str, chosen: dict[str, Any]) -> bool:
    return (
        tags.get(chosen["STACK_TAG"]) == stack
        and tags.get(chosen["WORKLOAD_TAG"]) == chosen["TRAINING_WORKLOAD"]
    )


def _behind_load_balancer(graph: StackGraph, resource: Resource) -> list[str]:
    """Target groups or attachments sending traffic to `resource` (a group or instance)."""
    found = [str(arn) for arn in resource.inputs.get("targetGroupArns") or []]
    names = {resource.id, str(resource.inputs.get("name") or "")} - {""}
    for attachment in graph.of_type(GROUP_ATTACHMENT):
        if str(attachment.inputs.get("autoscalingGroupName") or "") in names:
            found.append(attachment.name)
    for attachment in graph.of_type(TARGET_ATTACHMENT):
        if str(attachment.inputs.get("targetId") or "") in names:
            found.append(attachment.name)
    return found


def _selected_groups(graph: StackGraph, stack: str, chosen: dict[str, Any]) -> list[Resource]:
    """Groups the Lambda's `_auto_scaling_groups` acts on: the stack's training tags, and
    not one AWS Batch manages (named AWSBatch*, tagged AWSBatchServiceTag)."""
    return [
        group
        for group in graph.of_type(GROUP)
        if _ours(_tags(group), stack, chosen)
        and not str(group.inputs.get("name") or "").startswith(chosen["_BATCH_GROUP_PREFIX"])
        and chosen["_BATCH_SERVICE_TAG"] not in _tags(group)
    ]


def _selected_instances(graph: StackGraph, stack: str, chosen: dict[str, Any]) -> list[Resource]:
    """Standalone instances the Lambda stops: the training tags, not Karpenter's."""
    return [
        instance
        for instance in graph.of_type(INSTANCE)
        if _ours(_tags(instance), stack, chosen)
        and chosen["_KARPENTER_INSTANCE_TAG"] not in _tags(instance)
    ]


@rule(
    id="AIS-C3-13",
    checklist=["C3"],
    info="Every Auto Scaling group, standalone instance and Batch compute environment the "
    "AWS budget kill switch's selector matches is training capacity: none serves behind a "
    "load balancer; Karpenter's and Batch's own nodes are left to their controllers.",
    why="At 100 % of the budget the kill switch scales what it selects to zero. Serving "
    "capacity tagged as training goes down with the training jobs; an instance Karpenter or "
    "Batch owns is simply replaced when stopped.",
    fix="Tag serving capacity `aistack:workload=inference` (aws.InferenceTier does), and stop "
    "Karpenter capacity in the cluster (the queue held, the NodePool's limits).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    chosen = selector("aws")
    for function, stack in _kill_switches(graph):
        matched = 0
        for resource in [
            *_selected_groups(graph, stack, chosen),
            *_selected_instances(graph, stack, chosen),
        ]:
            matched += 1
            serving = _behind_load_balancer(graph, resource)
            if serving:
                yield fail(
                    resource,
                    f"the kill switch {function.name} would stop this, but it serves "
                    f"behind a load balancer ({', '.join(serving)}).",
                )
            else:
                yield ok(resource, "training capacity, behind no load balancer.")
        for environment in graph.of_type(COMPUTE_ENVIRONMENT):
            if _ours(_tags(environment), stack, chosen):
                matched += 1
                yield ok(environment, "a Batch compute environment of the training queue.")
        for node_class in graph.of_type(EC2_NODE_CLASS):
            tags = node_class.get("spec", "tags") or {}
            if _ours(tags, stack, chosen):
                # Karpenter tags every instance with karpenter.sh/nodepool, which the
                # Lambda's selector excludes: the nodes are left to Karpenter.
                yield ok(
                    node_class,
                    f"its instances carry {chosen['_KARPENTER_INSTANCE_TAG']}, which the "
                    "kill switch leaves to Karpenter.",
                )
        if not matched:
            yield ok(function, "its kill switch matches no capacity in this stack.")

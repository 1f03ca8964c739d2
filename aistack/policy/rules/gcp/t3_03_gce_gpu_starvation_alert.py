"""AIS-T3-03: groups of GPU VMs have an alert on low GPU utilisation (starvation)."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import ALERT_POLICY, OPS_AGENT_GPU_UTILIZATION, training_gpu_groups


def _starvation_filters(graph: StackGraph) -> Iterator[str]:
    for policy in graph.of_type(ALERT_POLICY):
        for condition in policy.inputs.get("conditions") or []:
            threshold = condition.get("conditionThreshold") or {}
            reducers = {a.get("crossSeriesReducer") for a in threshold.get("aggregations") or []}
            if (
                OPS_AGENT_GPU_UTILIZATION in str(threshold.get("filter") or "")
                and threshold.get("comparison") == "COMPARISON_LT"
                and "REDUCE_MEAN" in reducers
            ):
                yield str(threshold["filter"])


@rule(
    id="AIS-T3-03",
    checklist=["T3"],
    info="Every managed instance group of GPU VMs is watched by an alert policy on the "
    "average GPU utilisation (agent.googleapis.com/gpu/utilization) below a threshold.",
    why="GPUs that wait on the input pipeline bill at full price for a fraction of the "
    "work. The Ops Agent reports per-GPU utilisation; a low average across running VMs "
    "for half an hour means starvation, not an empty pool (idle VMs leave).",
    fix="Add a monitoring.AlertPolicy with a threshold condition on the Ops Agent GPU "
    "metric, REDUCE_MEAN, COMPARISON_LT (gcp.TrainingPool does).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    filters = list(_starvation_filters(graph))
    for group, template in training_gpu_groups(graph):
        pool = (template.inputs.get("labels") or {}).get("aistack-pool")
        scoped = [f for f in filters if pool is None or f'"{pool}"' in f]
        if scoped:
            yield ok(group, "a GPU starvation alert watches the group's VMs.")
        else:
            yield fail(group, "no alert on low GPU utilisation: starved GPUs go unnoticed.")

"""AIS-T5-03: GKE GPU node pools for training bound how long a node lives (max_run_duration);
serving pools do not."""

import re
from collections.abc import Iterator

from aistack.config import WORKLOAD_TAG, gcp_label
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import GKE_NODE_POOL, is_gpu_node_pool, node_config

_SECONDS = re.compile(r"^(\d+(?:\.\d+)?)s$")
_WORKLOAD = gcp_label(WORKLOAD_TAG)


@rule(
    id="AIS-T5-03",
    checklist=["T5"],
    info="GKE GPU node pools set node_config.max_run_duration, except those labelled for "
    "serving, which do not.",
    why="A job's own deadline stops the job, not a node a stuck daemonset, a leaked pod or "
    "a scale-down that never happens keeps alive. max_run_duration ends every node after "
    "a wall-clock limit (pulumi-gcp NodePoolNodeConfig: 'the runtime of each node'), the "
    "hard stop behind the job-level limits. A serving pool is the opposite case: its "
    "nodes are created together and would be ended together, every replica of the model "
    "with them, and a new GPU node, driver, image and model load take up to half an hour.",
    fix="Set node_config.max_run_duration on training pools, e.g. '86400s' "
    "(gcp.GpuNodePool maxNodeHours); on serving pools (workload: serving) leave it unset.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for pool in graph.of_type(GKE_NODE_POOL):
        if not is_gpu_node_pool(pool):
            continue
        value = str(node_config(pool).get("maxRunDuration") or "")
        match = _SECONDS.match(value)
        labels = node_config(pool).get("resourceLabels") or {}
        if labels.get(_WORKLOAD) == "serving":
            if match:
                yield fail(pool, f"a serving pool whose nodes all end after {value}.")
            else:
                yield ok(pool, "a serving pool: its nodes are not time-boxed.")
        elif match and float(match.group(1)) > 0:
            yield ok(pool, f"nodes live at most {float(match.group(1)) / 3600:g} hours.")
        else:
            yield fail(pool, "no max_run_duration: a node can run, and bill, forever.")

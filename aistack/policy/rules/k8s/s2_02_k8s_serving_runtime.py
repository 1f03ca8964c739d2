"""AIS-S2-02: every serving workload runs a known optimised runtime from an image by digest."""

from collections.abc import Iterator

from aistack.contracts.images import reference_problem
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s_serving import serving_workloads

RUNTIMES = ("vllm", "triton", "tensorrt-llm")


@rule(
    id="AIS-S2-02",
    checklist=["S2"],
    info="Every serving Deployment records its runtime (aistack.dev/runtime: vllm, triton "
    "or tensorrt-llm) and runs every container from an image pinned by digest.",
    why="A model served by a generic web framework wastes most of the GPU it pays for: "
    "continuous batching and paged attention (vLLM), dynamic batching (Triton) are where "
    "serving cost is won. A tag can change under a running tier: the runtime that was "
    "measured must be the one that runs.",
    fix="Use k8s.InferenceService (runtime, image by digest), or annotate the Deployment "
    "with its runtime and pin its images.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for workload in serving_workloads(graph):
        runtime = workload.annotations.get("aistack.dev/runtime")
        containers = [
            *(workload.pod_spec.get("initContainers") or []),
            *(workload.pod_spec.get("containers") or []),
        ]
        unpinned = [c.get("name") for c in containers if reference_problem(str(c.get("image")))]
        if runtime not in RUNTIMES:
            yield fail(workload.resource, f"{workload.name}: no optimised runtime recorded.")
        elif unpinned:
            yield fail(workload.resource, f"{workload.name}: {unpinned} not pinned by digest.")
        else:
            yield ok(workload.resource, f"{workload.name}: {runtime}, images by digest.")

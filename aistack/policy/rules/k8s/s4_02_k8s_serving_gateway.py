"""AIS-S4-02: every serving pod answers through the aistack gateway sidecar."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s_serving import GATEWAY_CONF_DIR, serving_workloads


def _has_gateway(pod: dict) -> bool:
    for container in pod.get("containers") or []:
        command = [*(container.get("command") or []), *(container.get("args") or [])]
        if command[:1] == ["nginx"] and f"{GATEWAY_CONF_DIR}/nginx.conf" in command:
            return True
    return False


@rule(
    id="AIS-S4-02",
    checklist=["S4", "S3"],
    info="Every serving pod runs the aistack nginx gateway beside its model server.",
    why="The gateway is where repeated prompts are answered from the cache (S4), each "
    "client is rate limited with 429 and requests beyond the model server's concurrency are "
    "refused instead of queued without bound (S3). A model server exposed directly has none "
    "of it: every duplicate request costs GPU time.",
    fix="Use k8s.InferenceService, which adds the sidecar with the config of its gateway "
    "field, or add the container with aistack.gateway.serving.serving_nginx_conf.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for workload in serving_workloads(graph):
        if _has_gateway(workload.pod_spec):
            yield ok(workload.resource, f"{workload.name}: behind the aistack gateway.")
        else:
            yield fail(
                workload.resource, f"{workload.name}: no gateway: no cache, no per-client limit."
            )

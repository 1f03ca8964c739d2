"""AIS-C3-09: no ClusterQueue pins `stopPolicy: None`, which would undo the kill switch."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import kueue_objects, metadata_of


@rule(
    id="AIS-C3-09",
    checklist=["C3"],
    info="Every Kueue ClusterQueue leaves stopPolicy to the kill switch (unset, Hold or "
    "HoldAndDrain), never pinned to None.",
    why="The Kubernetes kill switch stops a queue by patching its spec.stopPolicy to "
    "HoldAndDrain (Kueue: no new admissions, admitted jobs evicted). A stack that pins "
    "stopPolicy: None owns the field: the next pulumi up that touches the queue, or any "
    "refresh that sees the drift, sets it back to None and restarts the spend the kill "
    "switch stopped. Left unset, the field belongs to whoever patched it.",
    fix="Drop stopPolicy from the ClusterQueue (k8s.TrainingQueue leaves it unset unless "
    "stop_policy is Hold or HoldAndDrain), and stop or resume the queue with its "
    "stop_command / resume_command.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for queue in kueue_objects(graph, "ClusterQueue"):
        name = metadata_of(queue).get("name") or queue.name
        policy = (queue.inputs.get("spec") or {}).get("stopPolicy")
        if policy == "None":
            yield fail(
                queue,
                f"ClusterQueue {name!r} pins stopPolicy None: a deploy resumes a stopped queue.",
            )
        else:
            yield ok(
                queue,
                f"ClusterQueue {name!r} stopPolicy is "
                f"{policy or 'unset (the kill switch owns it)'}.",
            )

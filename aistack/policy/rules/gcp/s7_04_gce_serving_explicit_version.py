"""AIS-S7-04: serving templates name an explicit model version, never `latest`."""

from collections.abc import Iterator

from aistack.contracts.model_versions import is_moving_label
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import node_environment, serving_templates


@rule(
    id="AIS-S7-04",
    checklist=["S7"],
    info="Serving GPU templates carry an explicit model version.",
    why="Two VMs started an hour apart under `latest` can serve different models, and "
    "nobody can say which one answered.",
    fix="Serve an explicit version (gcp.InferenceTier versions[].version, e.g. '1.4.0').",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in serving_templates(graph):
        metadata = template.inputs.get("metadata") or {}
        version = str(metadata.get("aistack-model-version") or "")
        synced = node_environment(template).get("AISTACK_DATASET_VERSION", version)
        if not version or is_moving_label(version) or is_moving_label(synced):
            yield fail(template, f"model version {version or 'unset'!r} is not explicit.")
        else:
            yield ok(template, f"serves model version {version}.")

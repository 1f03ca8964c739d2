"""AIS-D4-03: GPU VMs sync a pinned dataset version."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import gpu_templates, node_environment


@rule(
    id="AIS-D4-03",
    checklist=["D4"],
    info="A GPU instance template whose startup script syncs a dataset names the version, "
    "never 'latest'.",
    why="A run is reproducible only if it says which data it read. The node caches the "
    "dataset by version; 'latest' or nothing would let two VMs of one run read different "
    "data and no run record say which.",
    fix="Pin dataset_version (gcp.TrainingPool takes the dataset bucket's version).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for template in gpu_templates(graph):
        env = node_environment(template)
        if not env.get("AISTACK_DATASET_URI"):
            continue
        version = env.get("AISTACK_DATASET_VERSION", "")
        if version and version.lower() != "latest":
            yield ok(template, f"dataset version {version} is pinned.")
        else:
            yield fail(template, "the dataset version is not pinned.")

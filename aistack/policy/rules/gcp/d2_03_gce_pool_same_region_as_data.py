"""AIS-D2-03: GPU VMs sync their dataset from a bucket in their own region."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import GCS_BUCKET, gpu_templates, node_environment, template_region


@rule(
    id="AIS-D2-03",
    checklist=["D2"],
    info="The dataset bucket a GPU instance template's startup script syncs from is in the "
    "template's region.",
    why="Every sync of a dataset across regions is slow and billed as inter-region egress; "
    "a training pool next to its data reads it at regional bandwidth for nothing.",
    fix="Put the pool in the bucket's region, or the dataset in the pool's "
    "(gcp.TrainingPool refuses the mismatch).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    by_name = {
        str(b.outputs.get("name") or b.inputs.get("name")): b for b in graph.of_type(GCS_BUCKET)
    }
    for template in gpu_templates(graph):
        uri = node_environment(template).get("AISTACK_DATASET_URI", "")
        if not uri.startswith("gs://"):
            continue
        bucket = by_name.get(uri.removeprefix("gs://").split("/", 1)[0])
        region = template_region(template)
        if bucket is None or region is None:
            continue
        location = str(bucket.inputs.get("location") or "").lower()
        if location == region.lower():
            yield ok(template, f"the dataset bucket is in {region} too.")
        else:
            yield fail(template, f"VMs in {region} sync the dataset from {location}.")

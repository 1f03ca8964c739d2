"""AIS-D6-01: every dataset records where it came from, its licence and its version."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import BUCKET, tags

REQUIRED = ("aistack:dataset-source", "aistack:dataset-licence", "aistack:dataset-version")


@rule(
    id="AIS-D6-01",
    checklist=["D6"],
    info="Dataset buckets carry source, licence and version tags.",
    why="A model inherits its data's licence; without lineage nobody can answer whether it "
    "may ship, or rebuild it when the source changes.",
    fix="Set dataset: {name, version, source, licence} on the DatasetBucket.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for bucket in graph.of_type(BUCKET):
        tag = tags(bucket)
        if tag.get("aistack:workload") != "data-dataset" and "aistack:dataset-name" not in tag:
            continue
        missing = [key.split(":")[1] for key in REQUIRED if not tag.get(key)]
        if missing:
            yield fail(bucket, "dataset lacks " + ", ".join(missing) + ".")
        else:
            yield ok(
                bucket,
                f"{tag['aistack:dataset-source']} under {tag['aistack:dataset-licence']}, "
                f"version {tag['aistack:dataset-version']}.",
            )

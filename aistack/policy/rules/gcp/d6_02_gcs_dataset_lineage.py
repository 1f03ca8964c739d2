"""AIS-D6-02: every GCS dataset records where it came from, its licence and its version."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import (
    DATASET_MANIFEST,
    GCS_BUCKET,
    dataset_manifest,
    is_dataset_bucket,
    labels,
)

REQUIRED = ("source", "licence", "version")


@rule(
    id="AIS-D6-02",
    checklist=["D6"],
    info=f"GCS dataset buckets carry a {DATASET_MANIFEST} with source, licence and version, "
    "and label the version.",
    why="A model inherits its data's licence; without lineage nobody can answer whether it "
    "may ship, or rebuild it when the source changes. GCP label values hold 63 lowercase "
    "characters, so the source URL and licence live in the manifest object beside the data.",
    fix="Use gcp.DatasetBucket with dataset: {name, version, source, licence}.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for bucket in graph.of_type(GCS_BUCKET):
        if not is_dataset_bucket(bucket):
            continue
        manifest = dataset_manifest(graph, bucket)
        if manifest is None:
            yield fail(bucket, f"dataset without a readable {DATASET_MANIFEST}: no lineage.")
            continue
        missing = [key for key in REQUIRED if not str(manifest.get(key) or "").strip()]
        if not labels(bucket).get("aistack-dataset-version"):
            missing.append("version label")
        if missing:
            yield fail(bucket, "dataset lacks " + ", ".join(missing) + ".")
        else:
            yield ok(
                bucket,
                f"{manifest['source']} under {manifest['licence']}, version {manifest['version']}.",
            )

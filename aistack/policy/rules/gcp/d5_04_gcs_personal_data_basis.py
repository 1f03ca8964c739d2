"""AIS-D5-04: a GCS dataset holding personal data records its legal basis or anonymisation."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import (
    DATASET_MANIFEST,
    GCS_BUCKET,
    PERSONAL_DATA_LABEL,
    dataset_manifest,
    is_dataset_bucket,
    labels,
)


@rule(
    id="AIS-D5-04",
    checklist=["D5", "G1"],
    info=f"GCS dataset buckets label whether they hold personal data ({PERSONAL_DATA_LABEL}); "
    f"if they do, their {DATASET_MANIFEST} records a legal basis or that it is anonymised.",
    why="Personal data used for training without a documented basis is the one data mistake "
    "that regulators, not engineers, find first. A label cannot hold the basis ('legitimate "
    "interest: DPIA-42'), so the manifest beside the data does.",
    fix="Use gcp.DatasetBucket with dataset.containsPersonalData, and legalBasis (or "
    "anonymised: true); or exclude the personal data.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for bucket in graph.of_type(GCS_BUCKET):
        if not is_dataset_bucket(bucket):
            continue
        personal = labels(bucket).get(PERSONAL_DATA_LABEL)
        manifest = dataset_manifest(graph, bucket) or {}
        if personal not in ("true", "false"):
            yield fail(bucket, f"does not declare whether it holds personal data ({personal!r}).")
        elif personal == "false":
            yield ok(bucket, "declared free of personal data.")
        elif manifest.get("anonymised") is True:
            yield ok(bucket, "personal data, anonymised.")
        elif str(manifest.get("legalBasis") or "").strip().lower() not in ("", "none"):
            yield ok(bucket, f"personal data; basis recorded: {manifest['legalBasis']}.")
        else:
            yield fail(
                bucket,
                f"holds personal data and its {DATASET_MANIFEST} records no legal basis "
                "or anonymisation.",
            )

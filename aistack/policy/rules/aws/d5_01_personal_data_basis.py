"""AIS-D5-01: a dataset holding personal data records its legal basis or anonymisation."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import BUCKET, tags


@rule(
    id="AIS-D5-01",
    checklist=["D5", "G1"],
    info="Dataset buckets declare personal data, and then a legal basis or anonymisation.",
    why="Personal data used for training without a documented basis is the one data mistake "
    "that regulators, not engineers, find first.",
    fix="Set dataset.containsPersonalData, and legalBasis (or anonymised: true) on the "
    "DatasetBucket; or exclude the personal data.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for bucket in graph.of_type(BUCKET):
        tag = tags(bucket)
        if "aistack:dataset-name" not in tag:
            continue
        personal = tag.get("aistack:personal-data")
        if personal is None:
            yield fail(bucket, "does not declare whether it holds personal data.")
        elif (
            personal == "true"
            and tag.get("aistack:anonymised") != "true"
            and tag.get("aistack:legal-basis", "none") in ("", "none")
        ):
            yield fail(bucket, "holds personal data with no legal basis recorded.")
        elif personal == "true":
            basis = tag.get("aistack:legal-basis")
            yield ok(bucket, f"personal data; basis recorded: {basis}.")
        else:
            yield ok(bucket, "declared free of personal data.")

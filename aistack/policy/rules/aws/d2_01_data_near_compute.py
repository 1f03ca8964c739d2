"""AIS-D2-01: training reads its data from a bucket in its own region."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import BUCKET, region_of
from aistack.queries.aws_training import environment, training_job_definitions


@rule(
    id="AIS-D2-01",
    checklist=["D2"],
    info="Jobs read datasets and write checkpoints in buckets of their own region.",
    why="Cross-region reads are slow and billed per GB, every epoch.",
    fix="Create the DatasetBucket in the pool's region (aws.TrainingPool refuses otherwise).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    regions = {b.outputs.get("bucket"): region_of(b) for b in graph.of_type(BUCKET)}
    for job in training_job_definitions(graph):
        env = environment(job)
        job_region = region_of(job)
        for key in ("AISTACK_DATASET_URI", "AISTACK_CHECKPOINT_URI"):
            uri = env.get(key, "")
            if not uri.startswith("s3://"):
                continue
            bucket = uri.removeprefix("s3://").split("/", 1)[0]
            bucket_region = regions.get(bucket)
            if bucket_region is None:
                yield fail(
                    job, f"{key} bucket {bucket} is not in this stack; its region is unknown."
                )
            elif bucket_region != job_region:
                yield fail(job, f"{key} is in {bucket_region}, the job in {job_region}.")
            else:
                yield ok(job, f"{key} in the job's region {job_region}.")

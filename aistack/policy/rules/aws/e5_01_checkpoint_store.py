"""AIS-E5-01: checkpoints go to a versioned bucket of the stack, beside commit and config."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import BUCKET, bucket_config
from aistack.queries.aws_training import environment, run_parameters, training_job_definitions


@rule(
    id="AIS-E5-01",
    checklist=["E5"],
    info="Jobs write checkpoints to a versioned S3 bucket of this stack and know the commit "
    "and config to record with them.",
    why="Checkpoints on an instance die with it; checkpoints without their commit and "
    "config cannot be resumed or explained.",
    fix="Pass the checkpoints DatasetBucket to the pool (AISTACK_CHECKPOINT_URI).",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    buckets = {b.outputs.get("bucket"): b for b in graph.of_type(BUCKET)}
    for job in training_job_definitions(graph):
        uri = environment(job).get("AISTACK_CHECKPOINT_URI", "")
        name = uri.removeprefix("s3://").split("/", 1)[0] if uri.startswith("s3://") else ""
        bucket = buckets.get(name)
        versioned = bucket is not None and any(
            v.get("versioningConfiguration", "status") == "Enabled"
            for v in bucket_config(graph, bucket, "aws:s3/bucketVersioning:BucketVersioning")
        )
        if not versioned:
            yield fail(
                job, f"checkpoint URI {uri or '(none)'} is not a versioned bucket of this stack."
            )
        elif not {"code_commit", "config_hash"} <= run_parameters(job):
            yield fail(job, "checkpoints would not know their commit and config.")
        else:
            yield ok(job, f"checkpoints to {uri} with commit and config hash.")

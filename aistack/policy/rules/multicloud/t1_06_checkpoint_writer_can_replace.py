"""AIS-T1-06: the identity that runs the checkpoint flush can replace what the flush
rewrites, under the prefix it flushes to."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.checkpoint_flush import FlushNode, aws_allows, flush_nodes, flush_roles
from aistack.queries.checkpoint_flush import gcs_permissions as held_on

#: What `gcloud storage rsync` needs to replace a changed file in a bucket: list and read to
#: compare, create and delete to upload over the old object (Cloud Storage IAM permission
#: tables, cloud.google.com/storage/docs/access-control/iam-json).
GCS_REPLACE = ("storage.objects.create", "storage.objects.delete", "storage.objects.get")
GCS_LIST = "storage.objects.list"
#: What `aws s3 sync` needs: ListBucket to compare, PutObject to upload (S3 replaces the
#: object under its key, a new version in a versioned bucket; the multipart calls are
#: authorised as s3:PutObject: S3 user guide, "Multipart upload API and permissions").
S3_PUT, S3_LIST = "s3:PutObject", "s3:ListBucket"
#: An object the flush rewrites under the prefix (the node adds the run's id).
PROBE = "run-1/last.ckpt"


def _gcp(graph: StackGraph, node: FlushNode, bucket: str, key: str) -> Verdict:
    account = (node.resource.inputs.get("serviceAccount") or {}).get("email")
    if not account:
        return fail(node.resource, "the VM runs as no service account: the flush cannot write.")
    member = f"serviceAccount:{account}"
    bucket_path = f"projects/_/buckets/{bucket}"
    on_object = held_on(graph, member, bucket, f"{bucket_path}/objects/{key}")
    missing = [p for p in GCS_REPLACE if p not in on_object]
    if GCS_LIST not in held_on(graph, member, bucket, bucket_path):
        missing.append(GCS_LIST)
    if missing:
        return fail(
            node.resource,
            f"{member} lacks {', '.join(missing)} on gs://{bucket}/{key}: the second flush "
            "of a checkpoint kept under its name is refused (403).",
        )
    return ok(
        node.resource, f"{member} can replace objects under gs://{bucket}/{key.rsplit('/', 2)[0]}/."
    )


def _aws(graph: StackGraph, node: FlushNode, bucket: str, key: str) -> Verdict:
    roles = flush_roles(graph, node)
    if not roles:
        return fail(node.resource, "no role of the stack runs this node's flush.")
    for role in roles:
        put = aws_allows(graph, role, S3_PUT, f"arn:aws:s3:::{bucket}/{key}")
        listing = aws_allows(graph, role, S3_LIST, f"arn:aws:s3:::{bucket}")
        if not (put and listing):
            lacking = [a for a, held in ((S3_PUT, put), (S3_LIST, listing)) if not held]
            return fail(
                node.resource,
                f"role {role.name} (which runs the flush) lacks {', '.join(lacking)} on "
                f"s3://{bucket}/{key}.",
            )
    names = ", ".join(role.name for role in roles)
    return ok(node.resource, f"the flush runs as {names}, which can replace under s3://{bucket}/.")


@rule(
    id="AIS-T1-06",
    checklist=["T1"],
    info="The identity that runs a training node's checkpoint flush can overwrite (and so "
    "delete) what the flush replaces under its checkpoint prefix: on GCP the VM's service "
    "account holds storage.objects.create, .delete, .get and .list there; on AWS the role "
    "the flush runs as (the instance role, or on Batch the job role) holds s3:PutObject and "
    "s3:ListBucket.",
    why="A flush rewrites stable names (last.ckpt, an optimizer state): roles/storage."
    "objectCreator 'does not give permission to view, delete, or replace objects' "
    "(cloud.google.com/iam/docs/roles-permissions/storage), so the second `gcloud storage "
    "rsync` fails with 403 and the preemption's checkpoint is lost.",
    fix="Grant checkpoints with gcp.DatasetBucket.grant_write (replace is on for kind "
    "checkpoints) or aws.DatasetBucket.grant_write to the identity that flushes.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    for node in flush_nodes(graph):
        destination = node.destination
        if destination is None:
            continue  # a custom flush command: its own destination and identity
        bucket, prefix = destination
        key = f"{prefix}/{PROBE}" if prefix else PROBE
        yield (_gcp if node.cloud == "gcp" else _aws)(graph, node, bucket, key)

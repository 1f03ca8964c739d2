"""AIS-D2-02: a Workbench notebook reads buckets of its own region."""

from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.gcp import (
    GCS_BUCKET,
    WORKBENCH_INSTANCE,
    location_of,
    workbench_region,
    workbench_service_account,
)

BUCKET_MEMBERS = (
    "gcp:storage/bucketIAMMember:BucketIAMMember",
    "gcp:storage/bucketIAMBinding:BucketIAMBinding",
)


@rule(
    id="AIS-D2-02",
    checklist=["D2"],
    info="Every bucket a Workbench notebook's service account is granted is in the "
    "notebook's region.",
    why="A notebook reads its data again and again; from another region every read is "
    "slower and billed per GB as inter-region transfer, and the data leaves the region "
    "it was placed in.",
    fix="Create the notebook in the dataset bucket's region (gcp.Notebook refuses "
    "otherwise), or a bucket copy in the notebook's region.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    buckets = {}
    for stored in graph.of_type(GCS_BUCKET):
        for key in ("name", "id"):
            if stored.outputs.get(key):
                buckets[str(stored.outputs[key])] = stored
    for notebook in graph.of_type(WORKBENCH_INSTANCE):
        email = workbench_service_account(notebook)
        region = workbench_region(notebook)
        if email is None or region is None:
            continue
        member = f"serviceAccount:{email}"
        read = [
            grant
            for grant in graph.resources
            if grant.type in BUCKET_MEMBERS
            and member in (grant.inputs.get("member"), *(grant.inputs.get("members") or []))
        ]
        if not read:
            continue
        far, near = [], []
        for grant in read:
            bucket = buckets.get(str(grant.inputs.get("bucket") or ""))
            where = location_of(bucket) if bucket is not None else None
            if bucket is None or where is None:
                far.append(f"{grant.inputs.get('bucket')} (not in this stack, region unknown)")
            elif where != region:
                far.append(f"{bucket.outputs.get('name')} in {where}")
            else:
                near.append(str(bucket.outputs.get("name")))
        if far:
            yield fail(notebook, f"in {region}, it reads {', '.join(far)}.")
        else:
            yield ok(notebook, f"reads {', '.join(near)} in its own region {region}.")

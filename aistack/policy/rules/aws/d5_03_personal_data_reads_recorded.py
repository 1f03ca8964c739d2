"""AIS-D5-03 (advisory): reads of buckets with personal data are recorded by a trail.

S3 server access logs are delivered "on a best effort basis"; only CloudTrail data events
record every object read with who made it. A bucket tagged `aistack:personal-data=true`
(aws.DatasetBucket sets it) is covered when a trail in the stack selects S3 object data
events for it (advanced event selectors: `eventCategory` Data, `resources.type`
AWS::S3::Object, and no ARN filter or one starting with the bucket's ARN). Advisory: an
organisation trail outside the stack may record them.
"""

from __future__ import annotations

from collections.abc import Iterator

from aistack.contracts.aws import PERSONAL_DATA_TAG
from aistack.engine.graph import Resource, StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import BUCKET, as_list, tags

TRAIL = "aws:cloudtrail/trail:Trail"


def _field(selector: dict, name: str) -> dict | None:
    return next(
        (f for f in as_list(selector.get("fieldSelectors")) if f.get("field") == name), None
    )


def _records_objects_of(trail: Resource, bucket_arn: str) -> bool:
    for selector in as_list(trail.inputs.get("advancedEventSelectors")):
        category, kind = _field(selector, "eventCategory"), _field(selector, "resources.type")
        if not category or "Data" not in as_list(category.get("equals")):
            continue
        if not kind or "AWS::S3::Object" not in as_list(kind.get("equals")):
            continue
        arns = _field(selector, "resources.ARN")
        if arns is None:
            return True  # every bucket
        prefixes = as_list(arns.get("startsWiths")) + as_list(arns.get("equals"))
        if any(bucket_arn.startswith(str(p).rstrip("/")) for p in prefixes):
            return True
    return False


@rule(
    id="AIS-D5-03",
    checklist=["D5"],
    severity="advisory",
    info="Buckets holding personal data have their object reads recorded by a CloudTrail "
    "trail's S3 data events.",
    why="Who read personal data, and when, is what a breach investigation or a data "
    "subject's request asks; server access logs are best effort and can miss requests.",
    fix="Add aws.AuditTrail with data_buckets=[the personal-data buckets], or confirm that "
    "an organisation trail records their data events.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    trails = graph.of_type(TRAIL)
    for bucket in graph.of_type(BUCKET):
        if tags(bucket).get(PERSONAL_DATA_TAG) != "true":
            continue
        arn = str(bucket.outputs.get("arn") or "")
        if any(_records_objects_of(trail, arn) for trail in trails):
            yield ok(bucket, "object reads and writes recorded by a CloudTrail trail.")
        else:
            yield fail(bucket, "holds personal data, but no trail in the stack records its reads.")

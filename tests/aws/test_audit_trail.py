"""AuditTrail: a multi-region, encrypted, validated trail recording the personal-data
buckets' object reads, into a retained bucket only CloudTrail may write to."""

import fnmatch
import json

import pytest

from aistack import aws as aistack_aws
from aistack.errors import ConfigError

TRAIL = "aws:cloudtrail/trail:Trail"
PERSONAL = {
    "name": "tickets",
    "version": "v3",
    "source": "crm export",
    "licence": "internal",
    "containsPersonalData": True,
    "legalBasis": "contract",
}


def _stack(governance, **overrides):
    def program():
        dataset = aistack_aws.DatasetBucket(
            "data",
            {"kind": "dataset", "region": "us-east-1", "governance": governance,
             "dataset": PERSONAL},
        )  # fmt: skip
        aistack_aws.AuditTrail(
            "audit",
            {"governance": governance, "region": "us-east-1", **overrides},
            data_buckets=[dataset],
        )

    return program


def _statements(resource):
    return {s["Sid"]: s for s in json.loads(resource.inputs["policy"])["Statement"]}


def test_the_trail_records_every_region_and_validates_its_log_files(run, governance):
    graph = run(_stack(governance))
    (trail,) = graph.of_type(TRAIL)
    assert trail.inputs["isMultiRegionTrail"] is True
    assert trail.inputs["includeGlobalServiceEvents"] is True
    # Digest files let `aws cloudtrail validate-logs` detect a deleted or altered log file.
    assert trail.inputs["enableLogFileValidation"] is True
    assert trail.inputs["kmsKeyId"] == graph.named("audit-key").outputs["arn"]
    assert trail.inputs["s3BucketName"] == graph.named("audit-logs-bucket").outputs["bucket"]
    # CloudTrail checks at creation that the bucket policy lets it write.
    assert graph.named("audit-logs-policy").urn in trail.dependencies


def test_object_reads_of_the_given_buckets_are_recorded_as_data_events(run, governance):
    graph = run(_stack(governance))
    (trail,) = graph.of_type(TRAIL)
    selectors = {s["name"]: s["fieldSelectors"] for s in trail.inputs["advancedEventSelectors"]}
    management = selectors["Management events"]
    assert management == [{"field": "eventCategory", "equals": ["Management"]}]
    data = {f["field"]: f for f in selectors["Object reads and writes of personal-data buckets"]}
    # Advanced event selectors for S3 object events (CloudTrail User Guide, "Logging data
    # events"): eventCategory Data, resources.type AWS::S3::Object, an ARN prefix per bucket.
    assert data["eventCategory"]["equals"] == ["Data"]
    assert data["resources.type"]["equals"] == ["AWS::S3::Object"]
    assert data["resources.ARN"]["startsWiths"] == [graph.named("data-bucket").outputs["arn"] + "/"]


def test_only_this_accounts_trails_may_write_and_only_under_awslogs(run, governance):
    graph = run(_stack(governance))
    policy = _statements(graph.named("audit-logs-policy"))
    # CloudTrail User Guide, "Amazon S3 bucket policy for CloudTrail": GetBucketAcl on the
    # bucket and PutObject under AWSLogs/<account>/ with bucket-owner-full-control, held to
    # the account's trails by aws:SourceArn.
    acl, write = policy["AllowCloudTrailAclCheck"], policy["AllowCloudTrailWrite"]
    assert acl["Principal"] == write["Principal"] == {"Service": "cloudtrail.amazonaws.com"}
    assert acl["Action"] == "s3:GetBucketAcl"
    assert write["Action"] == "s3:PutObject"
    bucket_arn = graph.named("audit-logs-bucket").outputs["arn"]
    assert write["Resource"] == f"{bucket_arn}/AWSLogs/123456789012/*"
    assert write["Condition"]["StringEquals"] == {
        "aws:SourceAccount": "123456789012",
        "s3:x-amz-acl": "bucket-owner-full-control",
    }
    pattern = write["Condition"]["ArnLike"]["aws:SourceArn"]
    trail_arn = graph.of_type(TRAIL)[0].outputs["arn"]
    assert fnmatch.fnmatchcase(trail_arn, pattern)
    assert not fnmatch.fnmatchcase("arn:aws:cloudtrail:us-east-1:210987654321:trail/x", pattern)
    assert {"DenyInsecureTransport", "DenyOutdatedTls"} <= set(policy)


def test_cloudtrail_may_use_the_key_for_this_trail_only(run, governance):
    graph = run(_stack(governance))
    key = _statements(graph.named("audit-key"))
    trail_arn = graph.of_type(TRAIL)[0].outputs["arn"]
    # CloudTrail User Guide, "Configure AWS KMS key policies for CloudTrail".
    encrypt = key["CloudTrailEncryptsLogs"]
    assert encrypt["Principal"] == {"Service": "cloudtrail.amazonaws.com"}
    assert encrypt["Action"] == "kms:GenerateDataKey*"
    assert encrypt["Condition"]["StringEquals"] == {"aws:SourceArn": trail_arn}
    assert encrypt["Condition"]["StringLike"] == {
        "kms:EncryptionContext:aws:cloudtrail:arn": "arn:aws:cloudtrail:*:123456789012:trail/*"
    }
    assert key["CloudTrailDescribesKey"]["Action"] == "kms:DescribeKey"
    encryption = graph.named("audit-logs-encryption").inputs["rules"][0]
    assert encryption["applyServerSideEncryptionByDefault"] == {
        "sseAlgorithm": "aws:kms",
        "kmsMasterKeyId": graph.named("audit-key").outputs["arn"],
    }


def test_the_log_files_and_their_key_outlive_the_stack(run, governance):
    graph = run(_stack(governance))
    assert graph.named("audit-logs-bucket").retain_on_delete is True
    assert graph.named("audit-key").retain_on_delete is True
    lifecycle = graph.named("audit-logs-lifecycle").inputs["rules"]
    expire = next(r for r in lifecycle if r["id"] == "expire-current-objects")
    assert expire["expiration"]["days"] == 365
    shorter = run(_stack(governance, retentionDays=90))
    rules = shorter.named("audit-logs-lifecycle").inputs["rules"]
    assert next(r for r in rules if r["id"] == "expire-current-objects")["expiration"]["days"] == 90


def test_a_region_outside_the_allowed_ones_and_a_non_bucket_are_refused(governance):
    from aistack import engine

    def program():
        aistack_aws.AuditTrail(
            "audit", {"governance": governance, "region": "eu-west-1"}, data_buckets=["bucket"]
        )

    with pytest.raises(ConfigError) as error:
        engine.run(program, config={"aws:region": "us-east-1"})
    assert set(error.value.fields) == {"audit.region", "audit.data_buckets.0"}

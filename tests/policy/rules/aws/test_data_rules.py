"""Rules over buckets: D1, C4, D5/G1, D6, G6 - each with a compliant and a violating stack."""

import pulumi_aws as aws

from aistack import aws as aistack_aws

GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "research-1234",
    "allowedRegions": ["us-east-1"],
}
DATASET = {"name": "tickets", "version": "v3", "source": "crm export", "licence": "internal"}


def _dataset_bucket(**dataset):
    return aistack_aws.DatasetBucket(
        "data",
        {
            "kind": "dataset",
            "region": "us-east-1",
            "governance": GOVERNANCE,
            "dataset": {**DATASET, **dataset},
        },
    )


def test_d1_dataset_bucket_complies(verdicts):
    assert verdicts("AIS-D1-01", _dataset_bucket) == {"data-bucket": "compliant"}


def test_d1_plain_bucket_without_versioning_violates(verdicts):
    assert verdicts("AIS-D1-01", lambda: aws.s3.Bucket("raw")) == {"raw": "non-compliant"}


def test_d1_versioned_bucket_without_lifecycle_violates(verdicts):
    def program():
        bucket = aws.s3.Bucket("raw")
        aws.s3.BucketVersioning(
            "raw-v", bucket=bucket.id, versioning_configuration={"status": "Enabled"}
        )

    assert verdicts("AIS-D1-01", program) == {"raw": "non-compliant"}


def test_c4_bucket_in_allowed_region_complies(verdicts):
    result = verdicts("AIS-C4-01", _dataset_bucket)
    assert result == {"data-bucket": "compliant", "data-key": "compliant"}


def test_c4_bucket_outside_allowed_regions_violates(verdicts):
    def program():
        aws.s3.Bucket("raw", region="eu-west-1", tags={"aistack:allowed-regions": "us-east-1"})
        aws.s3.Bucket("untagged")

    assert verdicts("AIS-C4-01", program) == {"raw": "non-compliant", "untagged": "non-compliant"}


def test_d5_personal_data_with_basis_complies(verdicts):
    result = verdicts(
        "AIS-D5-01",
        lambda: _dataset_bucket(containsPersonalData=True, legalBasis="contract"),
    )
    assert result == {"data-bucket": "compliant"}


def test_d5_personal_data_without_basis_violates(verdicts):
    def program():
        aws.s3.Bucket("raw", tags={"aistack:dataset-name": "x", "aistack:personal-data": "true"})

    assert verdicts("AIS-D5-01", program) == {"raw": "non-compliant"}


def test_d5_does_not_apply_to_buckets_without_datasets(verdicts):
    assert verdicts("AIS-D5-01", lambda: aws.s3.Bucket("raw")) == {"": "not-applicable"}


def test_d6_dataset_with_lineage_complies(verdicts):
    assert verdicts("AIS-D6-01", _dataset_bucket) == {"data-bucket": "compliant"}


def test_d6_dataset_without_licence_violates(verdicts):
    def program():
        aws.s3.Bucket("raw", tags={"aistack:dataset-name": "x", "aistack:dataset-version": "1"})

    assert verdicts("AIS-D6-01", program) == {"raw": "non-compliant"}


def test_g6_governed_bucket_complies(verdicts):
    assert verdicts("AIS-G6-01", _dataset_bucket)["data-bucket"] == "compliant"


def test_g6_bucket_without_declaration_violates(verdicts):
    assert verdicts("AIS-G6-01", lambda: aws.s3.Bucket("raw")) == {"raw": "non-compliant"}


# ---- AIS-D5-03: reads of personal data recorded --------------------------------------------

PERSONAL = {"containsPersonalData": True, "legalBasis": "contract"}


def test_d5_personal_data_bucket_watched_by_an_audit_trail_complies(verdicts):
    def program():
        bucket = _dataset_bucket(**PERSONAL)
        aistack_aws.AuditTrail(
            "audit", {"governance": GOVERNANCE, "region": "us-east-1"}, data_buckets=[bucket]
        )

    assert verdicts("AIS-D5-03", program) == {"data-bucket": "compliant"}


def test_d5_personal_data_bucket_without_a_trail_violates(verdicts):
    assert verdicts("AIS-D5-03", lambda: _dataset_bucket(**PERSONAL)) == {
        "data-bucket": "non-compliant"
    }


def test_d5_a_trail_recording_other_buckets_or_management_only_violates(verdicts):
    def program():
        _dataset_bucket(**PERSONAL)
        other = aws.s3.Bucket("other")
        aws.cloudtrail.Trail(
            "trail",
            s3_bucket_name="trail-logs",
            advanced_event_selectors=[
                {"fieldSelectors": [{"field": "eventCategory", "equals": ["Management"]}]},
                {
                    "fieldSelectors": [
                        {"field": "eventCategory", "equals": ["Data"]},
                        {"field": "resources.type", "equals": ["AWS::S3::Object"]},
                        {
                            "field": "resources.ARN",
                            "startsWiths": [other.arn.apply(lambda a: a + "/")],
                        },
                    ]
                },
            ],
        )

    assert verdicts("AIS-D5-03", program) == {"data-bucket": "non-compliant"}


def test_d5_a_trail_recording_every_buckets_objects_complies(verdicts):
    def program():
        _dataset_bucket(**PERSONAL)
        aws.cloudtrail.Trail(
            "trail",
            s3_bucket_name="trail-logs",
            advanced_event_selectors=[
                {
                    "fieldSelectors": [
                        {"field": "eventCategory", "equals": ["Data"]},
                        {"field": "resources.type", "equals": ["AWS::S3::Object"]},
                    ]
                }
            ],
        )

    assert verdicts("AIS-D5-03", program) == {"data-bucket": "compliant"}

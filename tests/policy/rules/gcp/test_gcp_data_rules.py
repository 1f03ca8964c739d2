"""GCP data rules: D1 (versioned, lifecycle; never public) and C4 (residency)."""

import pulumi_gcp as gcp
import pytest

from aistack import gcp as aistack_gcp

GOVERNANCE = {"owner": "ml", "costCenter": "r-1", "allowedRegions": ["europe-west4"]}
LABELS = {"aistack-allowed-regions": "europe-west4"}


def _compliant():
    apis = aistack_gcp.ProjectServices("apis", {"project": "team-ml-prod"})
    aistack_gcp.DatasetBucket(
        "ckpt",
        {"kind": "checkpoints", "region": "europe-west4", "governance": GOVERNANCE},
        services=apis,
    )


def _bare(**overrides):
    def program():
        gcp.storage.Bucket("raw", **{"location": "europe-west4", "labels": LABELS, **overrides})

    return program


def test_d1_a_dataset_bucket_is_versioned_with_lifecycle(verdicts):
    assert verdicts("AIS-D1-02", _compliant) == {"ckpt-bucket": "compliant"}


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"versioning": {"enabled": True}},
        {
            "versioning": {"enabled": True},
            "lifecycle_rules": [
                {"action": {"type": "Delete"}, "condition": {"days_since_noncurrent_time": 30}}
            ],
        },
    ],
)
def test_d1_a_bucket_without_versioning_or_lifecycle_fails(verdicts, overrides):
    assert verdicts("AIS-D1-02", _bare(**overrides)) == {"raw": "non-compliant"}


def test_d1_public_access_is_prevented_on_a_dataset_bucket(verdicts):
    assert verdicts("AIS-D1-03", _compliant) == {"ckpt-bucket": "compliant"}


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"public_access_prevention": "inherited", "uniform_bucket_level_access": True},
        {"public_access_prevention": "enforced", "uniform_bucket_level_access": False},
    ],
)
def test_d1_a_bucket_that_can_be_made_public_fails(verdicts, overrides):
    assert verdicts("AIS-D1-03", _bare(**overrides)) == {"raw": "non-compliant"}


def test_c4_a_dataset_bucket_and_its_key_sit_in_the_allowed_region(verdicts):
    assert verdicts("AIS-C4-02", _compliant) == {
        "ckpt-bucket": "compliant",
        "ckpt-keyring": "compliant",
        "ckpt-key": "compliant",
    }


def test_c4_bucket_locations_compare_case_insensitively(verdicts):
    # GCS reports locations uppercase ("EUROPE-WEST4"); programs often write them so too.
    assert verdicts("AIS-C4-02", _bare(location="EUROPE-WEST4")) == {"raw": "compliant"}


@pytest.mark.parametrize(
    "overrides",
    [
        {"location": "EU"},  # a multi-region
        {"location": "us-central1"},
        {"labels": {}},
    ],
)
def test_c4_a_bucket_outside_the_allowed_regions_or_undeclared_fails(verdicts, overrides):
    assert verdicts("AIS-C4-02", _bare(**overrides)) == {"raw": "non-compliant"}


def test_c4_reads_allowed_regions_continued_in_numbered_labels(verdicts):
    long = ["europe-west1", "europe-west4", "europe-north1", "europe-central2", "europe-west9"]
    governance = {**GOVERNANCE, "allowedRegions": long}

    def program():
        apis = aistack_gcp.ProjectServices("apis", {"project": "team-ml-prod"})
        aistack_gcp.DatasetBucket(
            "far",
            {"kind": "checkpoints", "region": "europe-west9", "governance": governance},
            services=apis,
        )

    assert verdicts("AIS-C4-02", program)["far-bucket"] == "compliant"

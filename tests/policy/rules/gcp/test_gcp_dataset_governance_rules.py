"""GCP dataset and governance rules: personal data with a basis (D5, G1), lineage and
licence (D6), declared third parties (G6). Each: gcp.DatasetBucket complies, a bucket that
misses the point fails, and a stack without datasets is not concerned."""

import json

import pulumi_gcp as gcp
import pytest

from aistack import gcp as aistack_gcp

CONFIG = {"gcp:project": "team-ml-prod", "gcp:region": "europe-west4"}
GOVERNANCE = {
    "owner": "ml",
    "costCenter": "r-1",
    "allowedRegions": ["europe-west4"],
    "thirdPartyServices": [
        {"name": "wandb", "purpose": "experiment tracking", "dataShared": "run metrics"}
    ],
}
DATASET = {
    "name": "support-tickets",
    "version": "2026-11-01",
    "source": "https://crm.example.com/exports/tickets",
    "licence": "proprietary",
}
LABELS = {
    "aistack-workload": "data-dataset",
    "aistack-dataset-name": "tickets",
    "aistack-dataset-version": "v1",
}


def dataset_bucket(**dataset):
    def program():
        apis = aistack_gcp.ProjectServices("apis", {"project": "team-ml-prod"})
        aistack_gcp.DatasetBucket(
            "data",
            {"kind": "dataset", "region": "europe-west4", "governance": GOVERNANCE,
             "dataset": {**DATASET, **dataset}},
            services=apis,
        )  # fmt: skip

    return program


def hand_written(labels=None, manifest=None):
    """A dataset bucket with labels as written by hand, and maybe a manifest object."""

    def program():
        bucket = gcp.storage.Bucket(
            "raw", name="raw-tickets", location="europe-west4", labels={**LABELS, **(labels or {})}
        )
        if manifest is not None:
            gcp.storage.BucketObject(
                "raw-manifest",
                bucket=bucket.name,
                name=".aistack/manifest.json",
                content=json.dumps(manifest),
            )

    return program


def no_dataset():
    gcp.storage.Bucket("scratch", location="europe-west4", labels={"aistack-workload": "x"})


# ---- D5 / G1 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dataset",
    [
        {"containsPersonalData": False},
        {"containsPersonalData": True, "legalBasis": "contract: support terms s.4"},
        {"containsPersonalData": True, "anonymised": True},
    ],
)
def test_d5_a_dataset_bucket_declares_personal_data_and_its_basis(verdicts, dataset):
    assert verdicts("AIS-D5-04", dataset_bucket(**dataset), **CONFIG) == {
        "data-bucket": "compliant"
    }


@pytest.mark.parametrize(
    ("labels", "manifest"),
    [
        ({}, {**DATASET, "containsPersonalData": True}),
        ({"aistack-personal-data": "true"}, None),
        ({"aistack-personal-data": "true"}, {**DATASET, "legalBasis": "", "anonymised": False}),
        ({"aistack-personal-data": "true"}, {**DATASET, "legalBasis": "none"}),
    ],
)
def test_d5_personal_data_undeclared_or_without_a_basis_fails(verdicts, labels, manifest):
    assert verdicts("AIS-D5-04", hand_written(labels, manifest), **CONFIG) == {
        "raw": "non-compliant"
    }


def test_d5_a_stack_without_datasets_is_not_concerned(verdicts):
    assert verdicts("AIS-D5-04", no_dataset, **CONFIG) == {"": "not-applicable"}


# ---- D6 -----------------------------------------------------------------------------------


def test_d6_a_dataset_bucket_records_source_licence_and_version(verdicts):
    assert verdicts("AIS-D6-02", dataset_bucket(), **CONFIG) == {"data-bucket": "compliant"}


@pytest.mark.parametrize(
    "manifest",
    [None, {"name": "tickets", "version": "v1"}, {**DATASET, "licence": " "}],
)
def test_d6_a_dataset_without_manifest_source_or_licence_fails(verdicts, manifest):
    assert verdicts("AIS-D6-02", hand_written(manifest=manifest), **CONFIG) == {
        "raw": "non-compliant"
    }


def test_d6_a_stack_without_datasets_is_not_concerned(verdicts):
    assert verdicts("AIS-D6-02", no_dataset, **CONFIG) == {"": "not-applicable"}


# ---- G6 -----------------------------------------------------------------------------------


def test_g6_a_dataset_buckets_resources_declare_third_parties(verdicts):
    found = verdicts("AIS-G6-03", dataset_bucket(), **CONFIG)
    # The bucket, its key and its key ring (which GCP cannot label: its siblings speak).
    assert found == {
        "data-bucket": "compliant", "data-key": "compliant", "data-keyring": "compliant"
    }  # fmt: skip


def test_g6_an_unlabelled_bucket_or_key_ring_fails(verdicts):
    def program():
        gcp.storage.Bucket("raw", location="europe-west4")
        gcp.kms.KeyRing("ring", location="europe-west4")

    assert verdicts("AIS-G6-03", program, **CONFIG) == {
        "raw": "non-compliant", "ring": "non-compliant"
    }  # fmt: skip


def test_g6_a_stack_without_stateful_resources_is_not_concerned(verdicts):
    def program():
        gcp.serviceaccount.Account("sa", account_id="trainer")

    assert verdicts("AIS-G6-03", program, **CONFIG) == {"": "not-applicable"}

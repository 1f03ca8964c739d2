"""Governance on Google Cloud: GCP region names, and labels GCP accepts."""

import re

import pytest

from aistack.config import Governance

GOV = Governance(owner="ML Team", cost_center="R&D 42", allowed_regions=["europe-west4"])

#: GCP label rules (Resource Manager, "Labels overview": requirements): keys and values of
#: lowercase letters, digits, `_` and `-`, at most 63 characters, keys start with a letter.
LABEL_KEY = re.compile(r"[a-z][a-z0-9_-]{0,62}")
LABEL_VALUE = re.compile(r"[a-z0-9_-]{0,63}")


def test_gcp_region_names_are_valid_governance_regions():
    assert Governance(owner="a", cost_center="b", allowed_regions=["europe-west4", "us-east1"])


@pytest.mark.parametrize("region", ["us-east-1", "US", "EU", "nam4", "eur4"])
def test_aws_names_and_multi_regions_are_not_gcp_regions(region):
    problem = GOV.region_problem(region, "data.region", cloud="gcp")
    assert problem is not None and "not a Google Cloud region" in problem.message


def test_a_well_formed_gcp_region_outside_the_catalog_is_judged_on_residency_only():
    problem = GOV.region_problem("europe-west3", "data.region", cloud="gcp")
    assert problem is not None and "allowed_regions" in problem.message
    assert GOV.region_problem("europe-west4", "data.region", cloud="gcp") is None


def test_labels_obey_gcp_rules():
    labels = GOV.gcp_labels("Proj-Dev", **{"aistack:legal-basis": "Consent: a@b.com", "9": "x"})
    assert labels["aistack-stack"] == "proj-dev"
    assert "aistack:stack" not in labels
    for key, value in labels.items():
        assert LABEL_KEY.fullmatch(key), key
        assert LABEL_VALUE.fullmatch(value), value


def test_a_long_list_of_allowed_regions_continues_in_numbered_labels_not_truncated():
    regions = ["europe-west1", "europe-west4", "europe-north1", "europe-central2", "europe-west9"]
    labels = Governance(owner="a", cost_center="b", allowed_regions=regions).gcp_labels("s")
    parts = [labels["aistack-allowed-regions"], labels["aistack-allowed-regions-2"]]
    assert all(len(part) <= 63 for part in parts)
    assert "_".join(parts).split("_") == regions

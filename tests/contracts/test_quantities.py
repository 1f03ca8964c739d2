"""Kubernetes quantities in the spelling the API server stores: a rendered object in any
other spelling differs from its live copy on every later `pulumi up` (found through the
real engine: Kueue's ClusterQueue webhook wrote "3000G" back as "3T", e2e/)."""

import pytest

from aistack.contracts.k8s import canonical_quantity, parse_quantity, scale_quantity

#: apimachinery v0.36.3 pkg/api/resource/quantity_test.go, TestQuantityParseEmit
#: (lines 789-802): the input and the String() the API server writes back.
APIMACHINERY_PARSE_EMIT = [
    ("1Ki", "1Ki"),
    ("1Mi", "1Mi"),
    ("1Gi", "1Gi"),
    ("1024Mi", "1Gi"),
    ("1000M", "1G"),
    (".001Ki", "1024m"),
    (".000001Ki", "1024u"),
    (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
]


@pytest.mark.parametrize(("text", "stored"), APIMACHINERY_PARSE_EMIT)
def test_apimachinerys_own_cases(text, stored):
    assert canonical_quantity(text) == stored
    # The same test's negative half: the sign kept, rounding away from zero.
    assert canonical_quantity(f"-{text}") == f"-{stored}"


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("3000G", "3T"),  # what the e2e run saw Kueue store
        ("1000", "1k"),
        ("0.5", "500m"),
        ("1500m", "1500m"),
        ("1536Mi", "1536Mi"),  # 1.5Gi has a fraction: the smaller suffix stays
        ("512", "512"),
        ("1e3", "1e3"),  # the exponent form is kept
        ("0Gi", "0"),
    ],
)
def test_the_format_is_kept_and_the_largest_exact_suffix_chosen(text, stored):
    assert canonical_quantity(text) == stored
    assert parse_quantity(canonical_quantity(text)) == parse_quantity(text)


def test_a_scaled_quantity_is_canonical_in_its_own_format():
    assert scale_quantity("64Gi", 8) == "512Gi"
    assert scale_quantity("375G", 8) == "3T"
    assert scale_quantity("8", 16) == "128"
    with pytest.raises(ValueError, match="not a Kubernetes quantity"):
        scale_quantity("lots", 2)

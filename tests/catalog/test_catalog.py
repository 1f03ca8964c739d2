"""The GPU offer catalog: data integrity, queries, region choice (C2) and quota codes."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from aistack import catalog
from aistack.errors import ConfigError

AWS_REQUIRED = [
    *(f"g4dn.{s}" for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")),
    "g4dn.metal",
    *(
        f"{fam}.{s}"
        for fam in ("g5", "g6", "g6e")
        for s in (
            "xlarge",
            "2xlarge",
            "4xlarge",
            "8xlarge",
            "12xlarge",
            "16xlarge",
            "24xlarge",
            "48xlarge",
        )
    ),
    "p4d.24xlarge",
    "p4de.24xlarge",
    "p5.48xlarge",
    "p5e.48xlarge",
    "p5en.48xlarge",
]
GCP_REQUIRED = [
    *(f"g2-standard-{n}" for n in (4, 8, 12, 16, 24, 32, 48, 96)),
    *(f"a2-highgpu-{n}g" for n in (1, 2, 4, 8)),
    "a2-megagpu-16g",
    *(f"a2-ultragpu-{n}g" for n in (1, 2, 4, 8)),
    *(f"a3-highgpu-{n}g" for n in (1, 2, 4, 8)),
    "a3-megagpu-8g",
]
AWS_MAJOR = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1"]
GCP_MAJOR = ["us-central1", "us-east4", "europe-west4", "europe-west1", "asia-northeast1"]

ALL = catalog.instance_types()


def _raw(cloud: str) -> dict:
    text = resources.files("aistack.catalog").joinpath("data", f"{cloud}.json").read_text()
    return json.loads(text)


# --------------------------------------------------------------------------- integrity


@pytest.mark.parametrize("cloud", ["aws", "gcp"])
def test_raw_data_regions_prices_and_zones_agree(cloud: catalog.Cloud) -> None:
    raw = _raw(cloud)
    sources = raw["sources"]
    for name, t in raw["instance_types"].items():
        assert t["regions"], name
        assert len(set(t["regions"])) == len(t["regions"]), name
        assert set(t["regions"]) == set(t["prices"]), f"{name}: regions vs priced regions"
        assert set(t["regions"]) == set(t["zones"]), f"{name}: regions vs zoned regions"
        for region, price in t["prices"].items():
            assert price["usd_per_hour"] > 0, (name, region)
            assert price["source"] in sources, (name, region, price["source"])
        for region, zones in t["zones"].items():
            assert zones and all(re.fullmatch(r"[a-z]", z) for z in zones), (name, region)


@pytest.mark.parametrize("cloud", ["aws", "gcp"])
def test_catalog_carries_sources_as_of_and_honest_notes(cloud: catalog.Cloud) -> None:
    (info,) = catalog.catalog_info(cloud)
    assert re.fullmatch(r"\d{4}-\d{2}", info.as_of)
    assert info.currency == "USD"
    notes = " ".join(info.notes).lower()
    assert "planning" in notes and "change" in notes
    assert "estimate" in notes
    for source in info.sources:
        assert source.description and source.url.startswith("https://")
        assert re.fullmatch(r"\d{4}-\d{2}", source.as_of)
    assert {s.key for s in catalog.price_sources(cloud)} == {s.key for s in info.sources}


def test_aws_notes_say_zones_are_for_planning_and_p5_needs_approval() -> None:
    (info,) = catalog.catalog_info("aws")
    notes = " ".join(info.notes)
    assert "DescribeInstanceTypeOfferings" in notes
    assert "approval" in notes and "L-417A185B" in notes and "L-7212CCBC" in notes


@pytest.mark.parametrize("t", ALL, ids=lambda t: t.name)
def test_every_type_is_consistent(t: catalog.InstanceType) -> None:
    assert t.gpu_count >= 1 and t.gpu_memory_gb > 0
    assert t.vcpus > 0 and t.memory_gib > 0 and t.network_gbps > 0
    assert t.nvme_disks >= 0 and (t.nvme_disk_gb > 0) == (t.nvme_disks > 0)
    assert 0 < t.spot_fraction < 1
    assert t.total_gpu_memory_gb == t.gpu_count * t.gpu_memory_gb
    for region in t.regions:
        assert t.offered_in(region)
        assert t.price(region) > 0
        assert t.price_info(region).as_of
        zones = t.zones(region)
        assert zones and all(z.startswith(region) for z in zones)
        assert len(zones) == len(set(zones))
    if t.cloud == "aws":
        assert t.name.startswith(t.family + ".")
        assert t.quota_group in ("P", "G and VT")
        assert t.quota_group == ("P" if t.family.startswith("p") else "G and VT")
    else:
        assert t.name.startswith(t.family + "-")
        assert t.quota_group is None


@pytest.mark.parametrize("name", AWS_REQUIRED + GCP_REQUIRED)
def test_every_required_size_is_present(name: str) -> None:
    cloud: catalog.Cloud = "aws" if name in AWS_REQUIRED else "gcp"
    assert catalog.get(name, cloud).name == name


def test_no_unexpected_gpu_types_and_clouds_are_separate() -> None:
    aws = {t.name for t in catalog.instance_types("aws")}
    gcp = {t.name for t in catalog.instance_types("gcp")}
    assert set(AWS_REQUIRED) <= aws <= set(AWS_REQUIRED) | {"p5.4xlarge"}
    assert gcp == set(GCP_REQUIRED)


@pytest.mark.parametrize(
    ("names", "major"),
    [
        (["g4dn.xlarge", "g5.xlarge", "p4d.24xlarge"], AWS_MAJOR),
        (["g2-standard-4", "a3-highgpu-8g"], GCP_MAJOR),
    ],
)
def test_broad_families_priced_in_the_major_regions(names: list[str], major: list[str]) -> None:
    for name in names:
        t = catalog.get(name)
        assert set(major) <= set(t.regions), name
        assert len(t.regions) >= 5


@pytest.mark.parametrize(
    ("name", "model", "count", "per_gpu", "total", "vcpus"),
    [
        ("p4d.24xlarge", "A100", 8, 40, 320, 96),
        ("p4de.24xlarge", "A100", 8, 80, 640, 96),
        ("p5.48xlarge", "H100", 8, 80, 640, 192),
        ("p5e.48xlarge", "H200", 8, 141, 1128, 192),
        ("p5en.48xlarge", "H200", 8, 141, 1128, 192),
        ("g4dn.xlarge", "T4", 1, 16, 16, 4),
        ("g4dn.12xlarge", "T4", 4, 16, 64, 48),
        ("g4dn.metal", "T4", 8, 16, 128, 96),
        ("g5.48xlarge", "A10G", 8, 24, 192, 192),
        ("g6.12xlarge", "L4", 4, 24, 96, 48),
        ("g6e.48xlarge", "L40S", 8, 48, 384, 192),
        ("g2-standard-24", "L4", 2, 24, 48, 24),
        ("a2-highgpu-8g", "A100", 8, 40, 320, 96),
        ("a2-megagpu-16g", "A100", 16, 40, 640, 96),
        ("a2-ultragpu-8g", "A100", 8, 80, 640, 96),
        ("a3-highgpu-8g", "H100", 8, 80, 640, 208),
        ("a3-megagpu-8g", "H100", 8, 80, 640, 208),
    ],
)
def test_gpu_counts_and_memory(
    name: str, model: str, count: int, per_gpu: int, total: int, vcpus: int
) -> None:
    t = catalog.get(name)
    assert (t.gpu_model, t.gpu_count, t.gpu_memory_gb) == (model, count, per_gpu)
    assert t.total_gpu_memory_gb == total
    assert t.vcpus == vcpus


def test_local_disks() -> None:
    p5 = catalog.get("p5.48xlarge")
    assert (p5.nvme_disks, p5.nvme_disk_gb, p5.total_nvme_gb) == (8, 3840, 30720)
    assert catalog.get("p4d.24xlarge").total_nvme_gb == 8000
    assert catalog.get("a3-highgpu-8g").total_nvme_gb == 6000
    assert catalog.get("g2-standard-4").nvme_disks == 0


def test_prices_scale_with_size_within_a_family() -> None:
    for family in ("g4dn", "g5", "g6", "g6e"):
        types = catalog.instance_types("aws", family=family, gpu_count=1)
        prices = [t.price("us-east-1") for t in sorted(types, key=lambda t: t.vcpus)]
        assert prices == sorted(prices), family
    g5 = catalog.get("g5.xlarge")
    assert g5.price("us-east-1") == pytest.approx(1.006)
    assert g5.price("eu-central-1") > g5.price("us-east-1")
    assert catalog.get("g2-standard-4").price("us-central1") == pytest.approx(0.70683)


def test_price_provenance_marks_estimates() -> None:
    g5 = catalog.get("g5.xlarge")
    listed = g5.price_info("us-east-1")
    assert not listed.estimated and listed.source == "aws-on-demand"
    derived = g5.price_info("eu-west-1")
    assert derived.estimated and derived.source == "aws-regional-estimate"
    sources = {s.key: s for s in catalog.price_sources("aws")}
    assert "eu-west-1" in sources["aws-regional-estimate"].details["regional_ratios"]


@pytest.mark.parametrize("cloud", ["aws", "gcp"])
def test_every_family_has_spot_fraction_and_quota(cloud: catalog.Cloud) -> None:
    raw = _raw(cloud)
    families = {t.family for t in catalog.instance_types(cloud)}
    assert families == set(raw["families"])
    for t in catalog.instance_types(cloud):
        assert catalog.spot_fraction(t.name) == t.spot_fraction
        if cloud == "aws":
            for market in ("on-demand", "spot"):
                assert catalog.vcpu_quota(t.name, market).quota_code.startswith("L-")
        else:
            assert catalog.gpu_quota(t.name, "on-demand").quota_code.startswith("NVIDIA_")


# --------------------------------------------------------------------------- lookups


def test_get_is_case_insensitive_and_filters_by_cloud() -> None:
    assert catalog.get(" G5.XLARGE ").name == "g5.xlarge"
    with pytest.raises(ConfigError, match="gcp instance type, not a aws"):
        catalog.get("a3-highgpu-8g", "aws")
    with pytest.raises(ConfigError, match="unknown cloud"):
        catalog.get("g5.xlarge", "azure")  # type: ignore[arg-type]


def test_unknown_type_suggests_nearest_names() -> None:
    with pytest.raises(ConfigError) as info:
        catalog.get("p5.48xlage")
    (problem,) = info.value.problems
    assert problem.field == "instance_type"
    assert "'p5.48xlarge'" in problem.fix
    with pytest.raises(ConfigError) as info:
        catalog.get("a3-higpu-8g")
    assert "'a3-highgpu-8g'" in info.value.problems[0].fix


def test_gpu_model_given_as_type_points_to_types_carrying_it() -> None:
    with pytest.raises(ConfigError) as info:
        catalog.get("h100")
    assert "p5.48xlarge" in info.value.problems[0].fix


def test_price_outside_offering_regions_names_those_regions() -> None:
    t = catalog.get("p4de.24xlarge")
    with pytest.raises(ConfigError) as info:
        t.price("eu-west-1")
    problem = info.value.problems[0]
    assert problem.field == "region"
    assert "us-east-1" in problem.message and "us-west-2" in problem.message
    assert not t.offered_in("eu-west-1")
    with pytest.raises(ConfigError):
        t.zones("eu-west-1")


def test_zone_names() -> None:
    assert catalog.get("g5.xlarge").zones("us-east-1") == tuple(f"us-east-1{s}" for s in "abcdf")
    assert catalog.get("a3-highgpu-8g").zones("us-central1") == ("us-central1-a", "us-central1-c")


# --------------------------------------------------------------------------- queries


def test_query_by_gpu_is_case_insensitive() -> None:
    l4 = catalog.instance_types(gpu="l4")
    assert {t.cloud for t in l4} == {"aws", "gcp"}
    assert all(t.gpu_model == "L4" for t in l4)
    assert len(catalog.instance_types("aws", gpu="L4")) == 8
    assert len(catalog.instance_types("gcp", gpu="L4")) == 8


def test_query_by_count_memory_family_and_region() -> None:
    eight_h100 = catalog.instance_types(gpu="H100", gpu_count=8)
    assert {t.name for t in eight_h100} == {"p5.48xlarge", "a3-highgpu-8g", "a3-megagpu-8g"}
    big = catalog.instance_types("aws", min_gpu_memory_gb=80)
    assert {t.family for t in big} == {"p4de", "p5", "p5e", "p5en"}
    assert {t.name for t in catalog.instance_types(gpu="A100-80GB")} == {
        "p4de.24xlarge",
        *(f"a2-ultragpu-{n}g" for n in (1, 2, 4, 8)),
    }
    g6 = catalog.instance_types(family="G6")
    assert [t.name for t in g6][:2] == ["g6.xlarge", "g6.2xlarge"]
    assert len(g6) == 8
    in_stockholm = catalog.instance_types("aws", region="eu-north-1", gpu="L40S")
    assert in_stockholm and all(t.family == "g6e" for t in in_stockholm)
    assert catalog.instance_types("gcp", gpu="A10G") == []


def test_query_rejects_unknown_gpu_and_family_together() -> None:
    with pytest.raises(ConfigError) as info:
        catalog.instance_types(gpu="H1000", family="g55", gpu_count=0)
    assert set(info.value.fields) == {"gpu", "family", "gpu_count"}


def test_regions_offering_and_gpu_models() -> None:
    assert catalog.regions_offering("p4de.24xlarge") == ("us-east-1", "us-west-2")
    assert "eu-west-1" in catalog.regions_offering("g5.xlarge")
    assert catalog.gpu_models("aws") == ("A100", "A10G", "H100", "H200", "L4", "L40S", "T4")
    assert catalog.gpu_models("gcp") == ("A100", "H100", "L4")
    with pytest.raises(ConfigError):
        catalog.regions_offering("x5.large")


# --------------------------------------------------------------------------- choose_region


def test_cheapest_allowed_region_wins() -> None:
    choice = catalog.choose_region(
        "A10G", allowed_regions=["ap-northeast-1", "eu-central-1", "eu-west-1"]
    )
    assert choice.region == "eu-west-1"
    assert choice.instance_type.name == "g5.xlarge"
    assert choice.price_per_hour == pytest.approx(catalog.get("g5.xlarge").price("eu-west-1"))
    assert [c.region for c in choice.candidates] == [
        "eu-west-1",
        "eu-central-1",
        "ap-northeast-1",
    ]
    prices = [c.price_per_gpu_hour for c in choice.candidates]
    assert prices == sorted(prices)
    for candidate in choice.candidates:
        assert "offers g5.xlarge at $" in candidate.reason.replace(" (1 x A10G 24GB)", "")
        assert "within allowed regions" in candidate.reason
    rejected = {r.region: r.reason for r in choice.rejected}
    assert "us-east-1" in rejected and "not in allowed_regions" in rejected["us-east-1"]


def test_unrestricted_choice_uses_cheapest_region_and_most_zones_on_ties() -> None:
    choice = catalog.choose_region("H100", gpu_count=8)
    assert choice.instance_type.name == "p5.48xlarge"
    # us-east-1, us-east-2 and us-west-2 share the list price; us-east-1 and us-west-2
    # have four zones each, and the name breaks the remaining tie.
    assert choice.region == "us-east-1"
    assert choice.price_per_gpu_hour == pytest.approx(55.04 / 8)
    assert "no region restriction" in choice.reason
    assert choice.rejected == ()


def test_gpu_count_picks_a_type_large_enough() -> None:
    choice = catalog.choose_region("L4", gpu_count=4, allowed_regions=["us-east-1"])
    assert choice.instance_type.gpu_count >= 4
    assert choice.instance_type.name == "g6.12xlarge"  # cheapest per GPU-hour of 4x/8x
    one = catalog.choose_region("L4", allowed_regions=["us-east-1"])
    assert one.instance_type.name == "g6.xlarge"


def test_gcp_choice() -> None:
    choice = catalog.choose_region(
        "A100-80GB", cloud="gcp", gpu_count=8, allowed_regions=["europe-west4", "us-central1"]
    )
    assert (choice.region, choice.instance_type.name) == ("us-central1", "a2-ultragpu-8g")
    assert choice.candidates[0].zones == ("us-central1-a", "us-central1-c")


def test_preferred_region_ranks_first() -> None:
    choice = catalog.choose_region(
        "L4",
        allowed_regions=["us-east-1", "eu-central-1"],
        preferred=["eu-central-1", "ap-south-1"],
    )
    assert choice.region == "eu-central-1"
    assert "preferred" in choice.reason
    assert [c.region for c in choice.candidates] == ["eu-central-1", "us-east-1"]


def test_allowed_regions_without_the_gpu_name_the_offering_regions() -> None:
    with pytest.raises(ConfigError) as info:
        catalog.choose_region("H100", allowed_regions=["eu-west-1", "eu-central-1"], gpu_count=8)
    (problem,) = info.value.problems
    assert problem.field == "allowed_regions"
    for region in catalog.regions_offering("p5.48xlarge"):
        assert region in problem.message
        assert region in problem.fix
    assert "eu-central-1" not in problem.fix


def test_rejected_lists_allowed_regions_that_lack_the_gpu() -> None:
    choice = catalog.choose_region("H200", allowed_regions=["us-east-2", "eu-west-1"])
    assert choice.region == "us-east-2"
    rejected = {r.region: r.reason for r in choice.rejected}
    assert "does not offer H200" in rejected["eu-west-1"]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"gpu": "H1000"}, "gpu"),
        ({"gpu": "A10G", "cloud": "gcp"}, "gpu"),
        ({"gpu": "T4", "gpu_count": 16}, "gpu_count"),
        ({"gpu": "T4", "gpu_count": 0}, "gpu_count"),
        ({"gpu": "T4", "allowed_regions": []}, "allowed_regions"),
        ({"gpu": "T4", "cloud": "azure"}, "cloud"),
    ],
)
def test_choose_region_bad_inputs(kwargs: dict, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        catalog.choose_region(**kwargs)
    assert field in info.value.fields


def test_unknown_gpu_suggests_nearest_model() -> None:
    with pytest.raises(ConfigError) as info:
        catalog.choose_region("H10")
    assert "'H100'" in info.value.problems[0].fix


# --------------------------------------------------------------------------- quotas & spot


def test_quota_codes_for_g5() -> None:
    spot = catalog.vcpu_quota("g5.xlarge", "spot")
    assert (spot.service_code, spot.quota_code, spot.family_group) == (
        "ec2",
        "L-3819A6DF",
        "G and VT",
    )
    assert spot.quota_name == "All G and VT Spot Instance Requests"
    assert spot.unit == "vCPU"
    on_demand = catalog.vcpu_quota("g5.48xlarge", "on-demand")
    assert on_demand.quota_code == "L-DB2E81BA"
    assert on_demand.quota_name == "Running On-Demand G and VT instances"


@pytest.mark.parametrize("name", ["p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p4d.24xlarge"])
def test_quota_codes_for_p(name: str) -> None:
    spot = catalog.vcpu_quota(name, "spot")
    assert (spot.quota_code, spot.family_group, spot.market) == ("L-7212CCBC", "P", "spot")
    assert catalog.vcpu_quota(name, "on-demand").quota_code == "L-417A185B"


def test_quota_errors() -> None:
    with pytest.raises(ConfigError, match="unknown instance type"):
        catalog.vcpu_quota("m5.large", "on-demand")
    with pytest.raises(ConfigError, match="gpu_quota"):
        catalog.vcpu_quota("a3-highgpu-8g", "spot")
    with pytest.raises(ConfigError, match="market"):
        catalog.vcpu_quota("g5.xlarge", "reserved")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="vcpu_quota"):
        catalog.gpu_quota("g5.xlarge", "spot")


def test_gcp_gpu_quota_metrics() -> None:
    assert catalog.gpu_quota("g2-standard-4", "on-demand").quota_code == "NVIDIA_L4_GPUS"
    spot = catalog.gpu_quota("a2-ultragpu-8g", "spot")
    assert spot.quota_code == "PREEMPTIBLE_NVIDIA_A100_80GB_GPUS"
    assert (spot.service_code, spot.unit) == ("compute.googleapis.com", "GPU")


def test_spot_fraction() -> None:
    assert catalog.spot_fraction("g4dn.xlarge") == pytest.approx(0.35)
    assert catalog.spot_fraction("g4dn.metal") == catalog.spot_fraction("g4dn.xlarge")
    t = catalog.get("g5.xlarge")
    assert t.spot_price("us-east-1") == pytest.approx(1.006 * t.spot_fraction)
    with pytest.raises(ConfigError):
        catalog.spot_fraction("t3.micro")


def test_instance_types_are_frozen_and_hashable() -> None:
    t = catalog.get("g6.xlarge")
    with pytest.raises(AttributeError):
        t.vcpus = 8  # type: ignore[misc]
    with pytest.raises(TypeError):
        t.prices["us-east-1"] = t.prices["us-east-1"]  # type: ignore[index]
    assert len({t, catalog.get("g6.xlarge")}) == 1

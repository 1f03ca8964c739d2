import pytest
from pydantic import Field

from aistack.config import STACK_TAG, AistackModel, Governance, gcp_label
from aistack.errors import ConfigError

GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "CC-1234",
    "allowedRegions": ["us-east-1", "eu-west-1"],
    "thirdPartyServices": [{"name": "wandb", "purpose": "tracking", "dataShared": "metrics"}],
}


class _Pool(AistackModel):
    max_nodes: int = Field(ge=1)
    name: str


def test_camel_and_snake_case_are_both_accepted():
    assert _Pool.parse({"maxNodes": 2, "name": "a"}) == _Pool.parse({"max_nodes": 2, "name": "a"})


def test_all_problems_are_reported_with_field_paths():
    with pytest.raises(ConfigError) as caught:
        _Pool.parse({"maxNodes": 0, "typo": 1}, where="pool")
    assert sorted(caught.value.fields) == ["pool.maxNodes", "pool.name", "pool.typo"]
    assert "Fix:" in str(caught.value)


def test_models_are_frozen():
    pool = _Pool.parse({"maxNodes": 2, "name": "a"})
    with pytest.raises(Exception):  # noqa: B017 - pydantic raises its own ValidationError
        pool.max_nodes = 3


def test_governance_renders_tags_with_the_stack_and_third_parties():
    tags = Governance.parse(GOVERNANCE).aws_tags("aistack-dev")
    assert tags[STACK_TAG] == "aistack-dev"
    assert tags["aistack:owner"] == "ml-platform"
    assert tags["aistack:third-party-services"] == "wandb"
    assert tags["aistack:environment"] == "dev"


def test_governance_tags_drop_characters_aws_rejects():
    tags = Governance.parse({**GOVERNANCE, "owner": "ml, platform (team)"}).aws_tags("s")
    assert tags["aistack:owner"] == "ml_ platform _team_"


def test_gcp_labels_follow_gcp_rules():
    labels = Governance.parse({**GOVERNANCE, "costCenter": "CC 1234/X" * 10}).gcp_labels("S")
    for key, value in labels.items():
        assert key[0].isalpha() and len(key) <= 63 and len(value) <= 63
        assert all(c.islower() or c.isdigit() or c in "_-" for c in key + value)
    assert gcp_label("9lives", is_key=True).startswith("k")


def test_region_outside_allowed_regions_is_a_problem_with_a_fix():
    governance = Governance.parse(GOVERNANCE)
    assert governance.region_problem("us-east-1", "region") is None
    problem = governance.region_problem("ap-south-1", "pool.region")
    assert problem is not None and problem.field == "pool.region"
    assert "C4" in problem.message and "us-east-1" in problem.fix


def test_governance_requires_allowed_regions_and_valid_names():
    with pytest.raises(ConfigError) as caught:
        Governance.parse({"owner": "a", "costCenter": "b", "allowedRegions": ["mars"]})
    assert caught.value.fields == ["allowedRegions"]
    with pytest.raises(ConfigError):
        Governance.parse({"owner": "a", "costCenter": "b", "allowedRegions": []})

"""ProjectServices: the APIs the components use, enabled once and never disabled on destroy."""

import pytest

from aistack import gcp
from aistack.errors import ConfigError
from aistack.gcp.project_services import COMPONENT_SERVICES

SERVICE = "gcp:projects/service:Service"


def test_every_api_the_components_use_is_enabled_by_default(run):
    graph = run(lambda: gcp.ProjectServices("apis", {"project": "team-ml-prod"}))
    enabled = {s.inputs["service"] for s in graph.of_type(SERVICE)}
    for apis in COMPONENT_SERVICES.values():
        assert set(apis) <= enabled
    assert {"serviceusage.googleapis.com", "iam.googleapis.com"} <= enabled
    assert graph.components()[0].type == "aistack:index:GcpProjectServices"


def test_apis_are_never_disabled_on_destroy(run):
    # Disabling an API on destroy disables what depends on it (terraform-provider-google
    # #3198: a dependent disable switched compute off) and breaks other stacks.
    graph = run(lambda: gcp.ProjectServices("apis", {"project": "team-ml-prod"}))
    for service in graph.of_type(SERVICE):
        assert service.inputs["disableOnDestroy"] is False
        assert service.inputs["disableDependentServices"] is False
        assert service.inputs["project"] == "team-ml-prod"


def test_extra_services_are_added_once(run):
    graph = run(
        lambda: gcp.ProjectServices(
            "apis",
            {
                "project": "team-ml-prod",
                "extraServices": ["bigquery.googleapis.com", "storage.googleapis.com"],
            },
        )
    )
    names = [s.inputs["service"] for s in graph.of_type(SERVICE)]
    assert "bigquery.googleapis.com" in names
    assert len(names) == len(set(names))


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"project": "Team ML"}, "apis.project"),
        ({"project": "team-ml-prod", "extraServices": ["bigquery"]}, "apis.extraServices"),
    ],
)
def test_bad_input_is_one_config_error_before_anything_is_registered(run, args, field):
    with pytest.raises(ConfigError) as caught:
        run(lambda: gcp.ProjectServices("apis", args))
    assert [p.field for p in caught.value.problems] == [field]

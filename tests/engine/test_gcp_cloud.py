"""The simulated cloud answers Google Cloud in GCP's formats, and refuses what GCP refuses."""

import re

import pulumi
import pulumi_gcp as gcp
import pytest

from aistack import engine
from aistack.engine.gcp_cloud import SimulatedGcpError, missing_api_dependencies
from aistack.errors import EngineError

# pulumi-gcp's compute module warns on import about its own misspelt deprecated names.
pytestmark = pytest.mark.filterwarnings("ignore:.*deprecated in favor of:DeprecationWarning")

CONFIG = {"gcp:project": "team-ml-prod", "gcp:region": "europe-west4"}

#: Cloud Storage docs, "Service agents" (cloud.google.com/storage/docs/projects): the
#: project's Cloud Storage service agent, from the project NUMBER (not its id).
STORAGE_AGENT = re.compile(r"service-(\d{12})@gs-project-accounts\.iam\.gserviceaccount\.com")


def _exported(program):
    return engine.run(program, config=CONFIG).stack_outputs


def test_the_project_has_a_twelve_digit_number_and_its_storage_agent_uses_it():
    def program():
        project = gcp.organizations.get_project_output()
        agent = gcp.storage.get_project_service_account_output()
        pulumi.export("number", project.number)
        pulumi.export("id", project.project_id)
        pulumi.export("agent", agent.email_address)
        pulumi.export("member", agent.member)

    out = _exported(program)
    assert out["id"] == "team-ml-prod"
    assert re.fullmatch(r"[1-9]\d{11}", out["number"])
    match = STORAGE_AGENT.fullmatch(out["agent"])
    assert match and match.group(1) == out["number"]
    assert out["member"] == f"serviceAccount:{out['agent']}"


def test_a_bucket_reads_back_as_gcs_reports_it():
    def program():
        bucket = gcp.storage.Bucket("raw", location="europe-west4")
        pulumi.export("bucket", bucket)

    graph = engine.run(program, config=CONFIG)
    bucket = graph.named("raw")
    name = bucket.outputs["name"]
    assert re.fullmatch(r"raw-[0-9a-f]{7}", name)  # pulumi-gcp autonaming
    assert bucket.id == name
    assert bucket.outputs["url"] == f"gs://{name}"
    assert bucket.outputs["selfLink"] == f"https://www.googleapis.com/storage/v1/b/{name}"
    # The Storage API returns locations uppercase; rules must compare case-insensitively.
    assert bucket.outputs["location"] == "EUROPE-WEST4"
    # pulumi-gcp 10's provider-side default when the program sets none.
    assert bucket.outputs["deletionPolicy"] == "DELETE"


@pytest.mark.parametrize("bad", ["Data", "googledata", "goog-data", "ab", "-data"])
def test_a_bucket_name_gcs_refuses_fails_the_registration(bad):
    with pytest.raises(Exception, match="refuses the bucket name"):
        engine.run(lambda: gcp.storage.Bucket("raw", name=bad, location="EU"), config=CONFIG)
    assert issubclass(SimulatedGcpError, Exception)


def test_ids_follow_gcp_formats():
    def program():
        ring = gcp.kms.KeyRing("ring", location="europe-west4")
        gcp.kms.CryptoKey("key", key_ring=ring.id)
        gcp.projects.Service("storage", service="storage.googleapis.com")

    graph = engine.run(program, config=CONFIG)
    ring, key = graph.named("ring"), graph.named("key")
    assert re.fullmatch(r"projects/team-ml-prod/locations/europe-west4/keyRings/ring-\w+", ring.id)
    assert re.fullmatch(re.escape(ring.id) + r"/cryptoKeys/key-\w+", key.id)
    assert graph.named("storage").id == "team-ml-prod/storage.googleapis.com"


def test_an_unknown_gcp_invoke_fails_loudly_with_its_token():
    def program():
        gcp.compute.get_network_output(name="default")

    with pytest.raises(engine.UnknownInvokeError, match="gcp:compute/getNetwork:getNetwork"):
        engine.run(program, config=CONFIG)


class _Box(pulumi.ComponentResource):
    def __init__(self, name, wait_for=None):
        super().__init__("aistack:index:GcpTestBox", name)
        gcp.storage.Bucket(
            f"{name}-bucket",
            location="europe-west4",
            opts=pulumi.ResourceOptions(parent=self, depends_on=wait_for or []),
        )


def test_a_component_resource_that_does_not_wait_for_its_api_fails_as_on_a_fresh_project():
    def program():
        gcp.projects.Service("storage", service="storage.googleapis.com")
        _Box("racing")

    with pytest.raises(EngineError, match="storage.googleapis.com has not been used"):
        engine.run(program, config=CONFIG)


def test_a_component_resource_that_waits_for_its_api_is_created():
    def program():
        api = gcp.projects.Service("storage", service="storage.googleapis.com")
        _Box("waiting", wait_for=[api])

    graph = engine.run(program, config=CONFIG)
    assert missing_api_dependencies(graph) == []


def test_team_resources_outside_components_are_not_held_to_it():
    # Their APIs may be enabled outside the stack; only aistack components promise it.
    graph = engine.run(lambda: gcp.storage.Bucket("raw", location="EU"), config=CONFIG)
    assert graph.named("raw")


def test_machine_types_of_a_zone_come_from_the_catalog_with_accelerators_and_bundled_ssds():
    def program():
        found = gcp.compute.get_machine_types_output(
            zone="europe-west4-b", filter="name = a3-highgpu-8g"
        )
        pulumi.export("types", found.machine_types)

    (a3,) = _exported(program)["types"]
    assert a3["name"] == "a3-highgpu-8g" and a3["guestCpus"] == 208
    assert a3["accelerators"] == [
        {"guestAcceleratorType": "nvidia-h100-80gb", "guestAcceleratorCount": 8}
    ]
    assert a3["bundledLocalSsds"] == [{"defaultInterface": "NVME", "partitionCount": 16}]


def test_a_zone_that_does_not_offer_a_type_lists_none():
    def program():
        found = gcp.compute.get_machine_types_output(
            zone="europe-west4-a", filter="name = a3-highgpu-8g"
        )
        pulumi.export("types", found.machine_types)

    assert _exported(program)["types"] == []


def test_gpu_quotas_of_a_new_project_are_zero_per_region_and_globally():
    def program():
        regional = gcp.cloudquota.get_s_quota_info_output(
            parent="projects/team-ml-prod",
            service="compute.googleapis.com",
            quota_id="NVIDIA-L4-GPUS-per-project-region",
        )
        ceiling = gcp.cloudquota.get_s_quota_info_output(
            parent="projects/team-ml-prod",
            service="compute.googleapis.com",
            quota_id="GPUS-ALL-REGIONS-per-project",
        )
        pulumi.export("regional", regional.dimensions_infos)
        pulumi.export("ceiling", ceiling.dimensions_infos)

    out = _exported(program)
    # As Cloud Quotas answers (QuotaInfo.dimensionsInfos): the default is one entry without
    # dimensions listing the locations it applies to; only a location with its own value
    # has an entry of its own, and a new project has none.
    (default,) = out["regional"]
    assert default["dimensions"] == {}
    assert "europe-west4" in default["applicableLocations"]
    # pulumi-gcp 10: `details` is a list of {value: str}, not one object.
    assert default["details"] == [{"value": "0"}]
    assert out["ceiling"] == [
        {"dimensions": {}, "details": [{"value": "0"}], "applicableLocations": ["global"]}
    ]


def test_a_metric_name_is_not_a_quota_id():
    def program():
        gcp.cloudquota.get_s_quota_info_output(
            parent="projects/team-ml-prod",
            service="compute.googleapis.com",
            quota_id="NVIDIA_L4_GPUS",
        )

    with pytest.raises(Exception, match="NVIDIA-L4-GPUS-per-project-region"):
        engine.run(program, config=CONFIG)


def test_a_failed_run_leaves_no_traceback_formatting_to_the_garbage_collector(caplog):
    import gc
    import logging

    caplog.set_level(logging.DEBUG)
    with pytest.raises(Exception, match="refuses the bucket name"):
        engine.run(lambda: gcp.storage.Bucket("raw", name="-data", location="EU"), config=CONFIG)
    gc.collect()  # the failed run's abandoned futures are finalised here
    # asyncio's default handler would log them at ERROR with a formatted traceback, which on
    # Python 3.11 calls ast.parse from inside a finalizer (CPython gh-106905).
    assert not [r for r in caplog.records if r.name == "asyncio" and r.levelno >= logging.ERROR]

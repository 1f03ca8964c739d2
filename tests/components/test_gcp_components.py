"""The GCP components through the provider: a TypeScript-shaped program wires
GcpDatasetBucket to GcpProjectServices by the project and the `enabledServices` Output, and
gets the graph the Python API builds, every resource still waiting for its APIs."""

import pulumi
import pytest
from pulumi.provider.experimental.component import ComponentInitError

from aistack import engine, gcp
from aistack.engine.gcp_cloud import missing_api_dependencies
from aistack.errors import ConfigError
from tests.components.test_construct import _floats
from tests.gcp.conftest import GOVERNANCE, PROJECT
from tests.gcp.test_dataset_bucket import DATASET

CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}
SERVICES = {"project": PROJECT}
BUCKET = {"kind": "dataset", "region": "europe-west4", "governance": GOVERNANCE, "dataset": DATASET}


def _through_provider(provider, bucket_args, *, logs=False):
    def program():
        services = provider.construct(
            "apis", "aistack:index:GcpProjectServices", _floats(SERVICES), None
        ).state
        wiring = {"project": PROJECT, "enabledServices": services["enabledServices"]}
        if logs:
            log_bucket = provider.construct(
                "logs",
                "aistack:index:GcpDatasetBucket",
                {**_floats({**BUCKET, "kind": "logs", "dataset": None}), **wiring},
                None,
            ).state
            wiring["accessLogsBucketName"] = log_bucket["bucketName"]
        provider.construct(
            "data", "aistack:index:GcpDatasetBucket", {**_floats(bucket_args), **wiring}, None
        )

    return program


def _python(bucket_args, *, logs=False):
    def program():
        services = gcp.ProjectServices("apis", SERVICES)
        access_logs = None
        if logs:
            access_logs = gcp.DatasetBucket(
                "logs", {**BUCKET, "kind": "logs", "dataset": None}, services=services
            )
        gcp.DatasetBucket("data", bucket_args, services=services, access_logs=access_logs)

    return program


def _by_urn(graph):
    return {r.urn: r for r in graph}


@pytest.mark.parametrize("logs", [False, True], ids=["alone", "with-access-logs"])
def test_bucket_through_the_provider_registers_the_python_graph(provider, logs):
    args = {**BUCKET, "noncurrentDays": 45, "keepNoncurrentVersions": 4}
    via_provider = engine.run(_through_provider(provider, args, logs=logs), config=CONFIG)
    via_python = engine.run(_python(args, logs=logs), config=CONFIG)

    ours, theirs = _by_urn(via_provider), _by_urn(via_python)
    assert sorted(ours) == sorted(theirs)
    for urn, resource in ours.items():
        assert resource.parent == theirs[urn].parent, urn
        assert resource.inputs == theirs[urn].inputs, urn
        # Across languages a resource waits for every API the ProjectServices enables (one
        # Output carries them all), the Python API only for the ones it uses: a superset.
        assert set(resource.dependencies) >= set(theirs[urn].dependencies), urn
    assert via_provider.named("data").type == "aistack:index:GcpDatasetBucket"
    assert not missing_api_dependencies(via_provider)


def test_every_bucket_resource_waits_for_the_services_across_languages(provider):
    graph = engine.run(_through_provider(provider, BUCKET), config=CONFIG)
    services = {r.urn for r in graph.of_type("gcp:projects/service:Service")}
    storage = graph.named("apis-storage").urn
    for resource in graph:
        if resource.type.startswith("gcp:") and resource.urn not in services:
            assert storage in resource.dependencies, resource.name
    bucket = graph.named("data-bucket")
    assert bucket.get("deletionPolicy") == "PREVENT"
    assert bucket.get("publicAccessPrevention") == "enforced"


def test_access_logs_wire_by_bucket_name(provider):
    graph = engine.run(_through_provider(provider, BUCKET, logs=True), config=CONFIG)
    logging = graph.named("data-bucket").get("logging")
    assert logging["logBucket"] == graph.named("logs-bucket").outputs["name"]
    assert logging["logObjectPrefix"] == "usage/data"


def test_project_services_output_resolves_to_the_enabled_apis(provider):
    results = {}

    def program():
        state = provider.construct(
            "apis", "aistack:index:GcpProjectServices", _floats(SERVICES), None
        ).state
        pulumi.Output.from_input(state["enabledServices"]).apply(
            lambda apis: results.update(apis=apis)
        )

    engine.run(program, config=CONFIG)
    assert "storage.googleapis.com" in results["apis"]
    assert "cloudkms.googleapis.com" in results["apis"]


def _error(build):
    with pytest.raises(Exception) as caught:
        engine.run(build, config=CONFIG)
    error = caught.value
    return error.inner if isinstance(error, ComponentInitError) else error


def test_bad_bucket_input_is_the_python_callers_config_error(provider):
    bad = {**BUCKET, "noncurrentDays": 4.5, "region": "us-east1"}
    through_provider = _error(_through_provider(provider, bad))
    from_python = _error(_python(bad))
    assert isinstance(through_provider, ConfigError)
    assert str(through_provider) == str(from_python)
    assert "data.noncurrentDays" in str(through_provider)
    assert "data.region" in str(through_provider)

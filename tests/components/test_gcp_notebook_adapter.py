"""GcpNotebook through the provider: a TypeScript-shaped program wires it to the network by
region and self-links, to the notebook tier's account by e-mail and to the dataset bucket by
name and region; the Workbench instance it registers is the one the Python API builds."""

import pytest
from pulumi.provider.experimental.component import ComponentInitError

from aistack import engine, gcp
from aistack.engine.gcp_cloud import missing_api_dependencies
from aistack.errors import ConfigError
from tests.components.test_construct import _floats
from tests.gcp.conftest import GOVERNANCE, PROJECT
from tests.gcp.test_notebook import DATASET

CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}
BUCKET = {"kind": "dataset", "region": "europe-west4", "governance": GOVERNANCE, "dataset": DATASET}
NETWORK = {
    "governance": GOVERNANCE,
    "region": "europe-west4",
    "trainingMachineTypes": ["g2-standard-8"],
    "notebook": True,
}
NOTEBOOK = {"governance": GOVERNANCE, "machineType": "g2-standard-8", "idleMinutes": 45}
EMAILS = {
    "training": f"trainer@{PROJECT}.iam.gserviceaccount.com",
    "notebook": f"notebook@{PROJECT}.iam.gserviceaccount.com",
}


def _python(notebook=NOTEBOOK):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        data = gcp.DatasetBucket("data", BUCKET, services=apis)
        net = gcp.Network("net", NETWORK, services=apis, service_accounts=EMAILS)
        gcp.Notebook("nb", notebook, services=apis, network=net, bucket=data)

    return program


def _through_provider(provider, state, notebook=NOTEBOOK, **extra):
    def construct(name, component, inputs):
        return provider.construct(name, f"aistack:index:{component}", inputs, None).state

    def program():
        services = construct("apis", "GcpProjectServices", _floats({"project": PROJECT}))
        wiring = {"project": PROJECT, "enabledServices": services["enabledServices"]}
        data = construct("data", "GcpDatasetBucket", {**_floats(BUCKET), **wiring})
        net = construct(
            "net", "GcpNetwork", {**_floats(NETWORK), **wiring, "serviceAccounts": EMAILS}
        )
        state["nb"] = construct(
            "nb",
            "GcpNotebook",
            {
                **_floats(notebook),
                **wiring,
                "networkRegion": "europe-west4",
                "networkSelfLink": net["networkSelfLink"],
                "notebookSubnetSelfLink": net["subnetSelfLinks"]["notebook"],
                "serviceAccountEmail": EMAILS["notebook"],
                "datasetBucketName": data["bucketName"],
                "datasetRegion": "europe-west4",
                **extra,
            },
        )

    return program


def test_the_notebook_through_the_provider_registers_the_python_instance(provider):
    state: dict = {}
    via_provider = engine.run(_through_provider(provider, state), config=CONFIG)
    via_python = engine.run(_python(), config=CONFIG)
    ours, theirs = via_provider.named("nb-instance"), via_python.named("nb-instance")
    assert ours.urn == theirs.urn
    assert ours.inputs == theirs.inputs
    assert via_provider.named("nb-log-writer").inputs == via_python.named("nb-log-writer").inputs
    # The read grant: under the bucket in Python, named for the notebook through the provider.
    read = via_provider.named("nb-dataset-read").inputs
    assert read == {**via_python.named("data-read-nb").inputs}
    assert not missing_api_dependencies(via_provider)
    assert {"instanceName", "proxyUri", "state", "serviceAccountEmail"} <= set(state["nb"])


def test_a_bad_notebook_is_the_python_callers_config_error(provider):
    bad = {**NOTEBOOK, "idleMinutes": 5, "zone": "europe-west4-z"}
    with pytest.raises(ConfigError) as from_python:
        engine.run(_python(bad), config=CONFIG)
    with pytest.raises(Exception) as caught:
        engine.run(_through_provider(provider, {}, bad), config=CONFIG)
    error = caught.value
    error = error.inner if isinstance(error, ComponentInitError) else error
    assert isinstance(error, ConfigError)
    assert error.fields == from_python.value.fields


def test_a_bucket_without_its_region_is_refused(provider):
    with pytest.raises(Exception) as caught:
        engine.run(_through_provider(provider, {}, datasetRegion=None), config=CONFIG)
    error = caught.value
    error = error.inner if isinstance(error, ComponentInitError) else error
    assert isinstance(error, ConfigError)
    assert "nb.datasetRegion" in error.fields

"""GcpTrainingPool through the provider: a TypeScript-shaped program wires the pool to
GcpProjectServices, a GcpNetwork's training tier and two GcpDatasetBuckets by names and
e-mails; it registers the graph the Python API builds for the same arguments."""

import pulumi
import pytest
from pulumi.provider.experimental.component import ComponentInitError

from aistack import engine, gcp
from aistack.engine.gcp_cloud import missing_api_dependencies
from aistack.errors import ConfigError
from tests.components.test_construct import _floats
from tests.gcp.conftest import GOVERNANCE, PROJECT
from tests.gcp.test_network import ACCOUNTS
from tests.gcp.test_training_pool import DATASET, pool_args

CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}
NET = {
    "governance": GOVERNANCE,
    "region": "europe-west4",
    "trainingMachineTypes": ["g2-standard-8"],
    "trainingHealthCheckPort": 22,
}
DATA = {"kind": "dataset", "region": "europe-west4", "governance": GOVERNANCE, "dataset": DATASET}
CKPT = {"kind": "checkpoints", "region": "europe-west4", "governance": GOVERNANCE}
POOL = {**pool_args(GOVERNANCE), "datasetVersion": "2024-06-01"}


def _python(pool=POOL):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        data = gcp.DatasetBucket("data", DATA, services=apis)
        ckpt = gcp.DatasetBucket("ckpt", CKPT, services=apis)
        net = gcp.Network("net", NET, services=apis, service_accounts=ACCOUNTS)
        gcp.TrainingPool("train", pool, services=apis, network=net, dataset=data, checkpoints=ckpt)

    return program


def _through_provider(provider, state, pool=POOL):
    def construct(name, component, inputs):
        return provider.construct(name, f"aistack:index:{component}", inputs, None).state

    def program():
        services = construct("apis", "GcpProjectServices", _floats({"project": PROJECT}))
        wiring = {"project": PROJECT, "enabledServices": services["enabledServices"]}
        data = construct("data", "GcpDatasetBucket", {**_floats(DATA), **wiring})
        ckpt = construct("ckpt", "GcpDatasetBucket", {**_floats(CKPT), **wiring})
        net = construct(
            "net", "GcpNetwork", {**_floats(NET), **wiring, "serviceAccounts": ACCOUNTS}
        )
        state["pool"] = construct(
            "train",
            "GcpTrainingPool",
            {
                **_floats(pool),
                **wiring,
                "trainingSubnetSelfLink": pulumi.Output.from_input(net["subnetSelfLinks"]).apply(
                    lambda s: s["training"]
                ),
                "trainingServiceAccountEmail": ACCOUNTS["training"],
                "trainingZones": ["europe-west4-a", "europe-west4-b", "europe-west4-c"],
                "trainingHealthCheckPort": 22.0,
                "datasetBucketName": data["bucketName"],
                "checkpointsBucketName": ckpt["bucketName"],
            },
        )

    return program


def test_the_pool_through_the_provider_registers_the_python_graph(provider):
    state: dict = {}
    via_provider = engine.run(_through_provider(provider, state), config=CONFIG)
    via_python = engine.run(_python(), config=CONFIG)
    ours = {r.urn: r for r in via_provider}
    theirs = {r.urn: r for r in via_python}
    pool_urns = {u for u in theirs if "GcpTrainingPool" in u}
    assert pool_urns <= set(ours)
    for urn in pool_urns:
        resource = ours[urn]
        expected = theirs[urn]
        if resource.type == "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager":
            # The zones: the provider program names them, Python plans them from the catalog.
            resource.inputs.pop("distributionPolicyZones")
            expected.inputs.pop("distributionPolicyZones")
            resource.inputs["updatePolicy"].pop("maxUnavailableFixed")
            expected.inputs["updatePolicy"].pop("maxUnavailableFixed")
        assert resource.inputs == expected.inputs, urn
        assert resource.parent == expected.parent, urn
    assert not missing_api_dependencies(via_provider)
    assert {"groupName", "serviceAccountEmail", "datasetUri", "checkpointUri"} <= set(state["pool"])


def test_without_a_dataset_version_the_wired_pool_is_refused(provider):
    pool = {k: v for k, v in POOL.items() if k != "datasetVersion"}
    with pytest.raises(Exception) as caught:
        engine.run(_through_provider(provider, {}, pool), config=CONFIG)
    error = caught.value
    error = error.inner if isinstance(error, ComponentInitError) else error
    assert isinstance(error, ConfigError) and "datasetVersion" in str(error)

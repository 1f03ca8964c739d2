"""GcpGkeCluster and GcpGpuNodePool through the provider: a TypeScript-shaped program
(camelCase, numbers as floats) wires the cluster to GcpProjectServices by project and
`enabledServices`, and the node pool to the cluster by its id, region and node account
e-mail; it registers the graph the Python API builds for the same arguments."""

import pytest
from pulumi.provider.experimental.component import ComponentInitError

from aistack import engine, gcp
from aistack.engine.gcp_cloud import missing_api_dependencies
from aistack.errors import ConfigError
from tests.components.test_construct import _floats
from tests.gcp.conftest import GOVERNANCE, PROJECT
from tests.gcp.test_gke_cluster import cluster_args

CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}
CLUSTER = cluster_args(GOVERNANCE)
POOL = {"governance": GOVERNANCE, "machineType": "g2-standard-8", "maxNodes": 4}


def _python(pool=POOL):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        cluster = gcp.GkeCluster("train", CLUSTER, services=apis)
        gcp.GpuNodePool("l4", pool, cluster=cluster)

    return program


def _through_provider(provider, state, pool=POOL):
    def construct(name, component, inputs):
        return provider.construct(name, f"aistack:index:{component}", inputs, None).state

    def program():
        services = construct("apis", "GcpProjectServices", _floats({"project": PROJECT}))
        wiring = {"project": PROJECT, "enabledServices": services["enabledServices"]}
        cluster = construct("train", "GcpGkeCluster", {**_floats(CLUSTER), **wiring})
        state["cluster"] = cluster
        state["pool"] = construct(
            "l4",
            "GcpGpuNodePool",
            {
                **_floats(pool),
                "project": PROJECT,
                "clusterRegion": "europe-west4",
                "clusterId": cluster["clusterId"],
                "nodeServiceAccountEmail": cluster["nodeServiceAccountEmail"],
                "nodeDiskKey": cluster["nodeDiskKey"],
            },
        )

    return program


def test_the_cluster_and_pool_through_the_provider_register_the_python_graph(provider):
    state: dict = {}
    via_provider = engine.run(_through_provider(provider, state), config=CONFIG)
    via_python = engine.run(_python(), config=CONFIG)
    ours = {r.urn: r for r in via_provider}
    theirs = {r.urn: r for r in via_python}
    assert sorted(ours) == sorted(theirs)
    for urn, resource in ours.items():
        assert resource.inputs == theirs[urn].inputs, urn
        assert resource.parent == theirs[urn].parent, urn
    pool = via_provider.named("l4-pool")
    assert via_provider.named("train-cluster").urn in pool.dependencies
    assert not missing_api_dependencies(via_provider)
    assert {"clusterId", "endpoint", "nodeServiceAccountEmail"} <= set(state["cluster"])
    assert "nodePoolId" in state["pool"]


def test_a_bad_pool_is_the_python_callers_config_error(provider):
    bad = {**POOL, "maxNodes": 2.5, "localSsds": 3}
    with pytest.raises(ConfigError) as from_python:
        engine.run(_python(bad), config=CONFIG)
    with pytest.raises(Exception) as caught:
        engine.run(_through_provider(provider, {}, bad), config=CONFIG)
    error = caught.value
    error = error.inner if isinstance(error, ComponentInitError) else error
    assert isinstance(error, ConfigError)
    assert error.fields == from_python.value.fields

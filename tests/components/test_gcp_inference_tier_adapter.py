"""GcpInferenceTier through the provider: a TypeScript-shaped program wires the tier to
GcpProjectServices, a GcpNetwork's inference tier and a models GcpDatasetBucket by names,
ids and e-mails; it registers the graph the Python API builds for the same arguments."""

import pulumi
import pytest
from pulumi.provider.experimental.component import ComponentInitError

from aistack import engine, gcp
from aistack.engine.gcp_cloud import missing_api_dependencies
from aistack.errors import ConfigError
from tests.components.test_construct import _floats
from tests.gcp.conftest import GOVERNANCE, PROJECT
from tests.gcp.test_inference_tier import tier_args
from tests.gcp.test_network import ACCOUNTS

CONFIG = {"gcp:project": PROJECT, "gcp:region": "europe-west4"}
NET = {
    "governance": GOVERNANCE,
    "region": "europe-west4",
    "inferenceMachineTypes": ["g2-standard-8"],
    "proxyOnlySubnet": True,
}
MODELS = {"kind": "models", "region": "europe-west4", "governance": GOVERNANCE}
TIER = tier_args(GOVERNANCE)


def _python(tier=TIER):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        models = gcp.DatasetBucket("models", MODELS, services=apis)
        net = gcp.Network("net", NET, services=apis, service_accounts=ACCOUNTS)
        gcp.InferenceTier("serve", tier, services=apis, network=net, models=models)

    return program


def _through_provider(provider, state, tier=TIER, proxy="10.40.192.0/23"):
    def construct(name, component, inputs):
        return provider.construct(name, f"aistack:index:{component}", inputs, None).state

    def program():
        services = construct("apis", "GcpProjectServices", _floats({"project": PROJECT}))
        wiring = {"project": PROJECT, "enabledServices": services["enabledServices"]}
        models = construct("models", "GcpDatasetBucket", {**_floats(MODELS), **wiring})
        net = construct(
            "net", "GcpNetwork", {**_floats(NET), **wiring, "serviceAccounts": ACCOUNTS}
        )
        state["tier"] = construct(
            "serve",
            "GcpInferenceTier",
            {
                **_floats(tier),
                **wiring,
                "networkId": net["networkId"],
                "inferenceSubnetSelfLink": pulumi.Output.from_input(net["subnetSelfLinks"]).apply(
                    lambda s: s["inference"]
                ),
                "inferenceServiceAccountEmail": ACCOUNTS["inference"],
                "inferenceZones": ["europe-west4-a", "europe-west4-b", "europe-west4-c"],
                "gatewayPort": 8080.0,
                "proxySubnetCidr": proxy,
                "modelsBucketName": models["bucketName"],
            },
        )

    return program


def test_the_tier_through_the_provider_registers_the_python_graph(provider):
    state: dict = {}
    via_provider = engine.run(_through_provider(provider, state), config=CONFIG)
    via_python = engine.run(_python(), config=CONFIG)
    ours = {r.urn: r for r in via_provider}
    theirs = {r.urn: r for r in via_python}
    tier_urns = {u for u in theirs if "GcpInferenceTier" in u}
    assert tier_urns <= set(ours)
    for urn in tier_urns:
        assert ours[urn].inputs == theirs[urn].inputs, urn
        assert ours[urn].parent == theirs[urn].parent, urn
    assert not missing_api_dependencies(via_provider)
    assert {"endpoint", "serviceAccountEmail"} <= set(state["tier"])


def test_a_bad_tier_through_the_provider_is_the_python_config_error(provider):
    tier = {**TIER, "versions": [{"version": "latest", "weight": 100}]}
    with pytest.raises(Exception) as caught:
        engine.run(_through_provider(provider, {}, tier), config=CONFIG)
    error = caught.value
    error = error.inner if isinstance(error, ComponentInitError) else error
    assert isinstance(error, ConfigError) and "S7" in str(error)

"""AIS-G5-04: on a GKE Gateway every backend Service has a HealthCheckPolicy probing the
pods' readiness path and port (../shared/research/k8s-fidelity-audit.md, defect 10: with
none, GKE probes GET / on the serving port, the model answers 404, the Gateway 503).
Compliant for k8s.InferenceService given the Gateway's class and on the GKE example
stacks; violated without the policies and with a policy probing elsewhere."""

import copy

import pytest

from aistack import k8s
from aistack.queries.k8s import custom_manifests
from aistack.scan.crd_schemas import validate_custom_resource
from tests._harness import previews
from tests.k8s.test_inference_service import _args, _team
from tests.policy.rules.shared_verdicts import build, verdicts_of

GKE_GATEWAY = {"name": "internal", "namespace": "gateway", "gatewayClass": "gke-l7-rilb"}


def _graph(parent=GKE_GATEWAY):
    return build(lambda: k8s.InferenceService("chat", _args(parentGateway=parent), team=_team()))


def _policies(graph):
    return [d for _, d in custom_manifests(graph) if d["kind"] == "HealthCheckPolicy"]


def test_a_gke_gateway_gets_a_policy_per_version_probing_the_gateways_health_path():
    graph = _graph()
    policies = _policies(graph)
    assert sorted(p["spec"]["targetRef"]["name"] for p in policies) == ["chat-1-3-0", "chat-1-4-0"]
    for policy in policies:
        assert validate_custom_resource(policy) == []
        check = policy["spec"]["default"]["config"]["httpHealthCheck"]
        assert (check["requestPath"], check["port"]) == ("/healthz", 8080)
    assert verdicts_of("AIS-G5-04", graph) == {"chat-route": "compliant"}
    # The load balancer waits as long as the route does, not its 30 s default.
    route = next(d for _, d in custom_manifests(graph) if d["kind"] == "HTTPRoute")
    timeout = int(route["spec"]["rules"][0]["timeouts"]["request"].rstrip("s"))
    backends = [d for _, d in custom_manifests(graph) if d["kind"] == "GCPBackendPolicy"]
    assert sorted(b["spec"]["targetRef"]["name"] for b in backends) == ["chat-1-3-0", "chat-1-4-0"]
    for backend in backends:
        assert validate_custom_resource(backend) == []
        assert backend["spec"]["default"]["timeoutSec"] == timeout > 30


def test_another_gateway_class_gets_none():
    graph = _graph({"name": "internal", "namespace": "gateway", "gatewayClass": "istio"})
    assert _policies(graph) == []
    assert verdicts_of("AIS-G5-04", graph) == {"": "not-applicable"}


def _without_policies(graph):
    broken = copy.deepcopy(graph)
    broken.resources[:] = [r for r in broken.resources if not r.type.endswith(":HealthCheckPolicy")]
    return broken


def _probing(graph, path):
    broken = copy.deepcopy(graph)
    for resource in broken.resources:
        if resource.type.endswith(":HealthCheckPolicy"):
            resource.inputs["spec"]["default"]["config"]["httpHealthCheck"]["requestPath"] = path
    return broken


@pytest.mark.parametrize(
    ("breaking", "message"),
    [(_without_policies, "has no HealthCheckPolicy"), (lambda g: _probing(g, "/"), "probed at")],
    ids=["no-policy", "probes-elsewhere"],
)
def test_a_gke_route_whose_backends_are_probed_elsewhere_fails(breaking, message):
    graph = breaking(_graph())
    assert verdicts_of("AIS-G5-04", graph) == {"chat-route": "non-compliant"}
    from aistack.policy import all_rules

    [rule] = [r for r in all_rules() if r.id == "AIS-G5-04"]
    assert message in rule.evaluate(graph)[0].message


@pytest.mark.parametrize("stack", ["stacks/kubernetes", "stacks/kubernetes-gke"])
def test_the_gke_example_stacks_probe_their_backends_as_their_pods_are(stack):
    graph = previews.run_project(previews.ROOT / stack)
    verdicts = verdicts_of("AIS-G5-04", graph)
    assert verdicts and set(verdicts.values()) == {"compliant"}
    assert set(verdicts_of("AIS-G5-04", _without_policies(graph)).values()) == {"non-compliant"}

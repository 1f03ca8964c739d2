"""AIS-G5-04: every backend of an HTTPRoute on a GKE Gateway has a HealthCheckPolicy that
probes what the pods' readiness probe probes."""

from collections.abc import Iterator
from typing import Any

from aistack.contracts.k8s import GATEWAY_CLASS_ANNOTATION
from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries.k8s import builtin_manifests, custom_manifests, selector_matches
from aistack.queries.k8s_serving import routes

_HEALTH_CHECK = ("networking.gke.io/v1", "HealthCheckPolicy")


def _policies(graph: StackGraph) -> dict[tuple[str | None, str], dict[str, Any]]:
    """(namespace, Service name) -> the httpHealthCheck of the HealthCheckPolicy on it."""
    found = {}
    for _, document in custom_manifests(graph):
        if (document.get("apiVersion"), document.get("kind")) != _HEALTH_CHECK:
            continue
        spec = document.get("spec") or {}
        target = spec.get("targetRef") or {}
        if target.get("kind") == "Service":
            config = ((spec.get("default") or {}).get("config") or {}).get("httpHealthCheck")
            key = (document["metadata"].get("namespace"), str(target.get("name")))
            found[key] = config or {}
    return found


def _readiness(
    objects: list[dict[str, Any]], namespace: str | None, service: dict[str, Any]
) -> tuple[str, int] | None:
    """(path, port) of the readiness probe of the container that serves the Service's
    target port, in the pods the Service selects."""
    selector = (service.get("spec") or {}).get("selector") or {}
    target = ((service.get("spec") or {}).get("ports") or [{}])[0].get("targetPort")
    for workload in objects:
        if (
            workload.get("kind") != "Deployment"
            or workload["metadata"].get("namespace") != namespace
        ):
            continue
        template = (workload.get("spec") or {}).get("template") or {}
        labels = (template.get("metadata") or {}).get("labels") or {}
        if not selector_matches({"matchLabels": selector}, labels):
            continue
        for container in (template.get("spec") or {}).get("containers") or []:
            ports = {p.get("name"): p.get("containerPort") for p in container.get("ports") or []}
            if target not in ports and target not in ports.values():
                continue
            probe = (container.get("readinessProbe") or {}).get("httpGet") or {}
            port = probe.get("port")
            return str(probe.get("path", "/")), int(ports.get(port, port) or 0)
    return None


@rule(
    id="AIS-G5-04",
    checklist=["G5"],
    info="Every backend Service of an HTTPRoute on a GKE Gateway (gke-l7-*) has a "
    "HealthCheckPolicy whose request path and port are the pods' readiness probe's.",
    why="GKE's Gateway controller does not derive the load balancer's health check from "
    "the pods' readiness probe: without a HealthCheckPolicy it probes HTTP GET / on the "
    "serving port (gke-gateway-api v1.4.0, httpHealthCheck.requestPath: 'If not specified "
    'or left empty, a default value of "/" is used\'). A model server answers / with 404, '
    "so every endpoint is unhealthy and the Gateway answers 503 while every pod is Ready.",
    fix="Give k8s.InferenceService parentGateway.gatewayClass (e.g. 'gke-l7-rilb'): it "
    "renders a HealthCheckPolicy per version Service on the gateway's health path.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    objects = [document for _, document in builtin_manifests(graph)]
    services = {
        (o["metadata"].get("namespace"), o["metadata"].get("name")): o
        for o in objects
        if o.get("kind") == "Service"
    }
    policies = _policies(graph)
    for resource, route in routes(graph):
        annotations = route["metadata"].get("annotations") or {}
        if not str(annotations.get(GATEWAY_CLASS_ANNOTATION, "")).startswith("gke-l7-"):
            continue
        namespace = route["metadata"].get("namespace")
        problems, checked = [], []
        for rule_ in (route.get("spec") or {}).get("rules") or []:
            for ref in rule_.get("backendRefs") or []:
                key = (ref.get("namespace", namespace), str(ref.get("name")))
                policy = policies.get(key)
                if policy is None:
                    problems.append(f"{key[1]} has no HealthCheckPolicy (GKE probes GET /)")
                    continue
                expected = _readiness(objects, key[0], services.get(key) or {})
                probed = (str(policy.get("requestPath", "/")), int(policy.get("port") or 0))
                if expected is not None and probed != expected:
                    problems.append(
                        f"{key[1]} is probed at {probed}, its pods are ready at {expected}"
                    )
                checked.append(key[1])
        name = route["metadata"].get("name")
        if problems:
            yield fail(resource, f"HTTPRoute {name!r}: " + "; ".join(problems) + ".")
        else:
            yield ok(
                resource, f"HTTPRoute {name!r}: {', '.join(checked)} probed as their pods are."
            )

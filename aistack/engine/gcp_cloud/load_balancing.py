"""Regional application load balancing, autoscaling, Cloud Armor and dashboards in the
simulated GCP: what `gcp.InferenceTier` registers.

Ids and self-links in Compute Engine's formats (`projects/<p>/regions/<r>/<collection>/<n>`
for regional health checks, autoscalers, backend services, URL maps, target HTTP(S)
proxies, forwarding rules and security policies, self-links under
`https://www.googleapis.com/compute/v1/`), the forwarding rule's `ipAddress` (from the
subnet for internal schemes), and Cloud Monitoring's `projects/<NUMBER>/dashboards/<id>`.
Refused as the APIs refuse them, each with its source:

- a URL map weighted backend service weight outside 0-1000 (Compute API, urlMaps
  `weightedBackendServices[].weight`: "The value must be from 0 to 1000");
- weighted backends on a scheme that is not Envoy-based (research gcp-k8s.md §A S6:
  weighted traffic splitting needs EXTERNAL_MANAGED or INTERNAL_MANAGED);
- a regional backend service with a global security policy (Cloud Armor: a regional
  backend service takes a regional security policy; research §D1.12), or a
  security policy on a scheme other than the managed ones;
- a RATE backend without a maximum rate (Compute API, backendServices
  `backends[].balancingMode`: RATE needs maxRate, maxRatePerInstance or maxRatePerEndpoint);
- an autoscaler whose maximum is below its minimum, or that has no maximum (Compute API,
  autoscalers `maxNumReplicas`: required, not lower than minNumReplicas);
- a Cloud Armor throttle without rate limit options, an exceed action other than
  deny(403|404|429|502) or redirect, an interval outside Cloud Armor's set, a count outside
  1-1,000,000, or HTTP_HEADER keys without a header name
  (docs.cloud.google.com/armor/docs/rate-limiting-overview and
  armor/docs/configure-rate-limiting; pulumi-gcp RegionSecurityPolicyRuleRateLimitOptions);
  two rules at one priority (security policy rules: priorities are unique);
- an HTTPS target proxy without a certificate (Compute API, regionTargetHttpsProxies:
  sslCertificates or certificateManagerCertificates required);
- a dashboard whose `dashboard_json` is not JSON.
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

from aistack.engine.gcp_cloud.project import SimulatedGcpError, digest, project_number

__all__ = ["LOAD_BALANCING_TYPES", "load_balancing_resource"]

COMPUTE = "https://www.googleapis.com/compute/v1/"
REGION_HEALTH_CHECK = "gcp:compute/regionHealthCheck:RegionHealthCheck"
AUTOSCALER = "gcp:compute/regionAutoscaler:RegionAutoscaler"
BACKEND = "gcp:compute/regionBackendService:RegionBackendService"
URL_MAP = "gcp:compute/regionUrlMap:RegionUrlMap"
HTTP_PROXY = "gcp:compute/regionTargetHttpProxy:RegionTargetHttpProxy"
HTTPS_PROXY = "gcp:compute/regionTargetHttpsProxy:RegionTargetHttpsProxy"
FORWARDING_RULE = "gcp:compute/forwardingRule:ForwardingRule"
SECURITY_POLICY = "gcp:compute/regionSecurityPolicy:RegionSecurityPolicy"
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
_COLLECTIONS = {
    REGION_HEALTH_CHECK: "healthChecks",
    AUTOSCALER: "autoscalers",
    BACKEND: "backendServices",
    URL_MAP: "urlMaps",
    HTTP_PROXY: "targetHttpProxies",
    HTTPS_PROXY: "targetHttpsProxies",
    FORWARDING_RULE: "forwardingRules",
    SECURITY_POLICY: "securityPolicies",
}
LOAD_BALANCING_TYPES = (*_COLLECTIONS, DASHBOARD)
MANAGED_SCHEMES = ("EXTERNAL_MANAGED", "INTERNAL_MANAGED")
THROTTLE_INTERVALS = (10, 30, 60, 120, 180, 240, 300, 600, 900, 1200, 1800, 2700, 3600)
_EXCEED = re.compile(r"^(deny\((403|404|429|502)\)|redirect)$")


def load_balancing_resource(
    typ: str, project: str, region: str, name: str, inputs: dict[str, Any], out: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    """The id and outputs of the types above; None for other types."""
    if typ == DASHBOARD:
        try:
            json.loads(str(inputs.get("dashboardJson") or ""))
        except ValueError:
            raise SimulatedGcpError(
                "googleapi: Error 400: Invalid JSON payload received: dashboard_json."
            ) from None
        resource_id = f"projects/{project_number(project)}/dashboards/{digest(name, length=32)}"
        return resource_id, out
    collection = _COLLECTIONS.get(typ)
    if collection is None:
        return None
    location = str(inputs.get("region") or region)
    resource_id = f"projects/{project}/regions/{location}/{collection}/{name}"
    out.update(name=name, selfLink=COMPUTE + resource_id)
    if typ == URL_MAP:
        _check_url_map(name, inputs)
        out.setdefault("mapId", int(digest(resource_id, length=12), 16))
        out.setdefault("fingerprint", digest(resource_id, "fp", length=12))
    elif typ == BACKEND:
        _check_backend(name, inputs)
        out.setdefault("generatedId", int(digest(resource_id, length=8), 16))
        out.setdefault("fingerprint", digest(resource_id, "fp", length=12))
    elif typ == AUTOSCALER:
        _check_autoscaler(name, inputs)
    elif typ == SECURITY_POLICY:
        _check_security_policy(name, inputs)
        out.setdefault("policyId", digest(resource_id, length=19))
        out.setdefault("fingerprint", digest(resource_id, "fp", length=12))
    elif typ == HTTPS_PROXY:
        if not (inputs.get("sslCertificates") or inputs.get("certificateManagerCertificates")):
            raise SimulatedGcpError(
                f"googleapi: Error 400: Invalid value for field 'resource.sslCertificates': "
                f"{name} needs at least one SSL certificate."
            )
        out.setdefault("proxyId", int(digest(resource_id, length=12), 16))
    elif typ == HTTP_PROXY:
        out.setdefault("proxyId", int(digest(resource_id, length=12), 16))
    elif typ == FORWARDING_RULE:
        out.setdefault("ipAddress", _address(resource_id, inputs))
        out.setdefault("pscConnectionStatus", "")
        out.setdefault("labelFingerprint", digest(resource_id, "labels", length=12))
    elif typ == REGION_HEALTH_CHECK:
        kind = next(
            (k for k in ("tcp", "http", "https", "http2", "grpc") if inputs.get(f"{k}HealthCheck")),
            "tcp",
        )
        out.update(type=kind.upper())
    return resource_id, out


def _check_url_map(name: str, inputs: dict[str, Any]) -> None:
    action = inputs.get("defaultRouteAction") or {}
    weighted = action.get("weightedBackendServices") or []
    for index, backend in enumerate(weighted):
        weight = int(backend.get("weight") or 0)
        if not 0 <= weight <= 1000:
            raise SimulatedGcpError(
                "googleapi: Error 400: Invalid value for field "
                f"'resource.defaultRouteAction.weightedBackendServices[{index}].weight': "
                f"'{weight}'. The value must be from 0 to 1000."
            )
    if weighted and inputs.get("defaultService"):
        raise SimulatedGcpError(
            f"googleapi: Error 400: {name}: only one of defaultService and "
            "defaultRouteAction.weightedBackendServices may be set."
        )


def _check_backend(name: str, inputs: dict[str, Any]) -> None:
    scheme = str(inputs.get("loadBalancingScheme") or "INTERNAL")
    policy = str(inputs.get("securityPolicy") or "")
    if policy:
        if scheme not in MANAGED_SCHEMES:
            raise SimulatedGcpError(
                f"googleapi: Error 400: {name}: a security policy attaches to backend "
                f"services of Envoy-based application load balancers, not {scheme}."
            )
        if "/regions/" not in policy:
            raise SimulatedGcpError(
                f"googleapi: Error 400: {name}: a regional backend service takes a regional "
                f"security policy; {policy} is global."
            )
    for index, backend in enumerate(inputs.get("backends") or []):
        if backend.get("balancingMode") == "RATE" and not any(
            backend.get(k) for k in ("maxRate", "maxRatePerInstance", "maxRatePerEndpoint")
        ):
            raise SimulatedGcpError(
                f"googleapi: Error 400: Invalid value for field 'resource.backends[{index}]': "
                "RATE balancing mode needs maxRate, maxRatePerInstance or maxRatePerEndpoint."
            )


def _check_autoscaler(name: str, inputs: dict[str, Any]) -> None:
    policy = inputs.get("autoscalingPolicy") or {}
    maximum = policy.get("maxReplicas")
    minimum = int(policy.get("minReplicas") or 0)
    if maximum is None:
        raise SimulatedGcpError(
            f"googleapi: Error 400: {name}: autoscalingPolicy.maxNumReplicas is required."
        )
    if int(maximum) < minimum:
        raise SimulatedGcpError(
            f"googleapi: Error 400: {name}: maxNumReplicas ({maximum}) cannot be less than "
            f"minNumReplicas ({minimum})."
        )


def _check_security_policy(name: str, inputs: dict[str, Any]) -> None:
    seen: set[int] = set()
    for rule in inputs.get("rules") or []:
        priority = int(rule.get("priority") or 0)
        if priority in seen:
            raise SimulatedGcpError(
                f"googleapi: Error 400: {name}: two rules have priority {priority}."
            )
        seen.add(priority)
        if rule.get("action") not in ("throttle", "rate_based_ban"):
            continue
        options = rule.get("rateLimitOptions")
        where = f"googleapi: Error 400: {name}, rule {priority}:"
        if not options:
            raise SimulatedGcpError(f"{where} a {rule['action']} rule needs rateLimitOptions.")
        if not _EXCEED.match(str(options.get("exceedAction") or "")):
            raise SimulatedGcpError(
                f"{where} exceedAction must be deny(403|404|429|502) or redirect."
            )
        threshold = options.get("rateLimitThreshold") or {}
        if int(threshold.get("intervalSec") or 0) not in THROTTLE_INTERVALS:
            raise SimulatedGcpError(
                f"{where} rateLimitThreshold.intervalSec must be one of {THROTTLE_INTERVALS}."
            )
        if not 1 <= int(threshold.get("count") or 0) <= 1_000_000:
            raise SimulatedGcpError(f"{where} rateLimitThreshold.count must be 1 to 1,000,000.")
        if options.get("enforceOnKey") in ("HTTP_HEADER", "HTTP_COOKIE") and not options.get(
            "enforceOnKeyName"
        ):
            raise SimulatedGcpError(f"{where} enforceOnKey {options['enforceOnKey']} needs a name.")


def _address(resource_id: str, inputs: dict[str, Any]) -> str:
    """An internal scheme's address comes from its subnet's range (unknown here: a stable
    10.x address); an external one is Google's."""
    number = int(digest(resource_id, length=6), 16)
    if str(inputs.get("loadBalancingScheme") or "").startswith("INTERNAL"):
        return str(ipaddress.IPv4Address(0x0A000000 + 2 + number % 0xFFFF))
    return f"34.{number % 200 + 10}.{(number >> 8) % 256}.{(number >> 16) % 254 + 1}"

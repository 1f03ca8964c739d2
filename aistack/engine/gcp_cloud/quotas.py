"""Cloud Quotas in the simulated GCP: the project's quota values (`SimulatedCloud.gcp_quotas`),
the getSQuotaInfo invoke, and QuotaPreferences, refused where the API refuses them."""

from __future__ import annotations

import re
from typing import Any

from pulumi.runtime import MockResourceArgs

from aistack.engine.context import SimContext
from aistack.engine.gcp_cloud.project import SimulatedGcpError, digest, physical_name

__all__ = [
    "FAMILY_QUOTA_ID",
    "QUOTA_PREFERENCE",
    "current_quota_value",
    "quota_info",
    "quota_preference",
]

QUOTA_PREFERENCE = "gcp:cloudquota/sQuotaPreference:SQuotaPreference"
#: Cloud Quotas quota ids (`NVIDIA-L4-GPUS-per-project-region`), not the metric names of
#: the older Compute quotas (`NVIDIA_L4_GPUS`): the API answers 404 to those.
_QUOTA_ID = re.compile(r"[A-Z0-9]+(-[A-Z0-9]+)*-per-project(-region|-zone)?")


def _quota_overrides(ctx: SimContext, quota_id: str) -> dict[tuple[str, ...], float]:
    """The simulated project's granted values for `quota_id` that differ from the
    default, by (region[, gpu_family]); `()` is the quota's own default."""
    quotas: dict[str, float] = getattr(ctx, "gcp_quotas", {})
    found: dict[tuple[str, ...], float] = {}
    for key, value in quotas.items():
        head, *rest = key.split("/")
        if head == quota_id:
            found[tuple(rest)] = float(value)
    return found


def current_quota_value(ctx: SimContext, quota_id: str, dimensions: dict[str, str]) -> float:
    """The value in force for `quota_id` at `dimensions`, by Cloud Quotas' precedence
    (docs/quotas/configure-dimensions, "Dimension precedence"): all dimensions given, then
    location only, then the default."""
    overrides = _quota_overrides(ctx, quota_id)
    region, family = dimensions.get("region"), dimensions.get("gpu_family")
    for key in ((region, family), (region,)):
        if all(key) and tuple(k for k in key if k) in overrides:
            return overrides[tuple(k for k in key if k)]
    return overrides.get((), 0.0)


def quota_info(ctx: SimContext, args: dict[str, Any]) -> dict[str, Any]:
    """A Cloud Quotas QuotaInfo (REST v1 `services.quotaInfos.get`), as pulumi-gcp's
    getSQuotaInfo returns it. The simulated project is new: every GPU quota is 0, and so is
    the global GPUS-ALL-REGIONS ceiling ("Quota 'GPUS_ALL_REGIONS' exceeded. Limit: 0.0
    globally"), unless `SimulatedCloud.gcp_quotas` says otherwise.

    As the API answers (QuotaInfo.dimensionsInfos reference): one DimensionsInfo with empty
    `dimensions` carries the default and lists, in `applicableLocations`, every location it
    applies to; each location (or location and gpu_family) with its own value has its own
    DimensionsInfo; a global quota's one entry applies to ["global"]. `details` is a list
    of one {value} in pulumi-gcp (the REST field is one QuotaDetails object; the provider
    flattens it as a one-element list), the value an int64 in a string."""
    from aistack import catalog

    quota_id = str(args.get("quotaId", ""))
    parent = str(args.get("parent", ""))
    service = str(args.get("service", ""))
    _check_quota_id(quota_id, service, "getSQuotaInfo")
    if not parent.startswith("projects/"):
        raise SimulatedGcpError(f"getSQuotaInfo: parent must be 'projects/<id>', not {parent!r}.")
    regional = quota_id.endswith("-per-project-region")
    family = quota_id == FAMILY_QUOTA_ID
    overrides = _quota_overrides(ctx, quota_id)
    default = overrides.get((), 0.0)
    if regional:
        regions = sorted({r for t in catalog.instance_types("gcp") for r in t.regions})
        overridden = {key[0] for key in overrides if len(key) == 1}
        infos = [
            {
                "dimensions": {},
                "details": [{"value": str(int(default))}],
                "applicableLocations": [r for r in regions if r not in overridden],
            }
        ]
        for key, value in sorted(overrides.items()):
            if not key:
                continue
            dims = {"region": key[0]}
            if len(key) > 1:
                dims["gpu_family"] = key[1]
            infos.append(
                {
                    "dimensions": dims,
                    "details": [{"value": str(int(value))}],
                    "applicableLocations": [key[0]],
                }
            )
    else:
        infos = [
            {
                "dimensions": {},
                "details": [{"value": str(int(default))}],
                "applicableLocations": ["global"],
            }
        ]
    name = f"{parent}/locations/global/services/{service}/quotaInfos/{quota_id}"
    return {
        "parent": parent,
        "service": service,
        "quotaId": quota_id,
        "name": name,
        "containerType": "PROJECT",
        "dimensions": (["gpu_family", "region"] if family else ["region"]) if regional else [],
        "dimensionsInfos": infos,
        "isConcurrent": False,
        "isFixed": False,
        "isPrecise": True,
        "metric": f"{service}/{quota_id.split('-per-')[0].lower().replace('-', '_')}",
        "metricDisplayName": quota_id,
        "metricUnit": "1",
        "quotaDisplayName": quota_id,
        "quotaIncreaseEligibilities": [{"isEligible": True, "ineligibilityReason": ""}],
        "refreshInterval": "",
        "serviceRequestQuotaUri": "",
        "id": name,
    }


def _check_quota_id(quota_id: str, service: str, what: str) -> None:
    if _QUOTA_ID.fullmatch(quota_id):
        return
    hint = ""
    bare = quota_id.removeprefix(f"{service}/").upper()
    if re.fullmatch(r"[A-Z0-9_]+", bare):
        hint = (
            f" {quota_id!r} is a metric name; the quota id is e.g. "
            f"{bare.replace('_', '-')}-per-project-region."
        )
    raise SimulatedGcpError(f"{what}: Error 404: quota {quota_id!r} of {service} not found.{hint}")


#: Cloud Quotas' GPU family quota (dimensions region and gpu_family).
FAMILY_QUOTA_ID = "GPUS-PER-GPU-FAMILY-per-project-region"
#: QuotaPreference dimensions the API refuses (QuotaPreference reference: preferences
#: apply across all values of "user" and "resource").
_REFUSED_DIMENSIONS = ("user", "resource")


def quota_preference(
    ctx: SimContext, args: MockResourceArgs, inputs: dict[str, Any], out: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """A QuotaPreference as Cloud Quotas creates it (REST v1 quotaPreferences.create),
    refusing what the API refuses: a metric name for a quota id, a parent that is not a
    project, folder or organization, a non-integer preferred value, user/resource
    dimensions, and an increase without a contact e-mail ("required for increase quota
    preferences"). Google decides on its own clock: the granted value stays the current
    one and `reconciling` is true while an increase is pending."""
    parent = str(inputs.get("parent") or "")
    service = str(inputs.get("service") or "")
    quota_id = str(inputs.get("quotaId") or "")
    where = f"SQuotaPreference {args.name!r}"
    if not re.fullmatch(r"(projects|folders|organizations)/[^/]+", parent):
        raise SimulatedGcpError(
            f"{where}: parent must be projects/<id>, folders/<id> or organizations/<id>, "
            f"not {parent!r}."
        )
    _check_quota_id(quota_id, service, where)
    dims = {str(k): str(v) for k, v in (inputs.get("dimensions") or {}).items()}
    refused = [d for d in dims if d in _REFUSED_DIMENSIONS]
    if refused:
        raise SimulatedGcpError(f"{where}: Error 400: dimensions {refused} cannot be set.")
    config = dict(inputs.get("quotaConfig") or {})
    preferred = config.get("preferredValue")
    if not isinstance(preferred, str) or not re.fullmatch(r"-1|\d+", preferred):
        raise SimulatedGcpError(
            f"{where}: quotaConfig.preferredValue must be an integer >= -1 in a string "
            f"(pulumi-gcp types it str), not {preferred!r}."
        )
    current = current_quota_value(ctx, quota_id, dims)
    # -1 is unlimited: asking for it is an increase unless the quota already is.
    increase = current != -1 and (int(preferred) == -1 or int(preferred) > current)
    if increase and not inputs.get("contactEmail"):
        raise SimulatedGcpError(
            f"{where}: Error 400: contact_email is required for a quota increase "
            f"({quota_id} {dims} from {current:g} to {preferred})."
        )
    # "There is only one QuotaPreference resource for a quota value targeting a unique set
    # of dimensions" (QuotaPreference reference): a second one is refused.
    identity = (parent, service, quota_id, tuple(sorted(dims.items())))
    # Kept in the run's memory: the engine builds a context per run (one simulated project).
    filed: dict[tuple[Any, ...], str] = ctx.memory.setdefault("_gcp_quota_preferences", {})
    if identity in filed and filed[identity] != args.name:
        raise SimulatedGcpError(
            f"{where}: Error 409: a QuotaPreference for {quota_id} {dims} already exists in "
            f"{parent} ({filed[identity]!r}): one preference per quota and dimensions."
        )
    filed[identity] = args.name
    name = str(inputs.get("name") or physical_name(args))
    resource_id = f"{parent}/locations/global/quotaPreferences/{name}"
    stamp = "2026-01-01T00:00:00Z"
    out.update(
        name=name,
        dimensions=dims,
        etag=f'W/"{digest(resource_id, preferred, length=16)}"',
        createTime=stamp,
        updateTime=stamp,
        reconciling=increase,
        quotaConfig={
            **config,
            "grantedValue": str(int(current)),
            "requestOrigin": "ORIGIN_UNSPECIFIED",
            "stateDetail": "",
            "traceId": digest("trace", resource_id, length=16) if increase else "",
            "annotations": config.get("annotations") or {},
        },
    )
    return resource_id, out

"""The simulated cloud's Google Cloud answers: ids, self-links and invokes in GCP's formats.

`SimulatedCloud` (aistack.engine.cloud) hands every `gcp:` registration and the GCP invokes
here. Formats follow the Google APIs the provider calls (each cited where it is built), so
rules and scanners see what a real `pulumi up` records:

- a bucket's id is its name, its `url` is `gs://<name>`, its `selfLink` is the JSON API's
  `https://www.googleapis.com/storage/v1/b/<name>`, and its `location` comes back
  UPPERCASE ("EUROPE-WEST4"), as the Storage API returns it;
- `deletionPolicy` reads back "DELETE" when the program left it unset (pulumi-gcp 10's
  provider-side default): a rule can tell an explicit "PREVENT" from the default;
- a bucket name GCS would refuse fails the registration, as the API's 400 fails `up`.
- a service account's id is `projects/<p>/serviceAccounts/<email>`, with a 21-digit
  `uniqueId`; workload identity pools and providers are named with the project NUMBER
  (`projects/<NUMBER>/locations/global/workloadIdentityPools/<id>[/providers/<id>]`);
  an Artifact Registry repository's id is `projects/<p>/locations/<l>/repositories/<id>`
  with `registryUri` `<l>-docker.pkg.dev/<p>/<id>`;
- ids GCP refuses (account ids, pool and provider ids, repository ids), a GitHub provider
  without an attribute condition, more than 10 cleanup policies and principals naming the
  project by ID fail the registration, each with the API's error.

The contract with the components about API enablement: the simulated project is fresh,
so a GCP resource inside an aistack component that does not depend on the
`projects.Service` enabling its API fails the run (`ApiRaceCheck`, run by the
engine's monitor), as its create fails on a real fresh project. Team resources outside
components are exempt: their APIs may be enabled out of band.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from pulumi.runtime import MockResourceArgs

from aistack.engine.graph import Resource, StackGraph
from aistack.errors import AistackError

if TYPE_CHECKING:
    from aistack.engine.cloud import SimulatedCloud

__all__ = [
    "API_OF_MODULE",
    "SimulatedGcpError",
    "ApiRaceCheck",
    "current_quota_value",
    "invokes",
    "missing_api_dependencies",
    "project_number",
    "resource",
]

SERVICE = "gcp:projects/service:Service"
QUOTA_PREFERENCE = "gcp:cloudquota/sQuotaPreference:SQuotaPreference"

#: The API a resource's module needs enabled on the project (Service Usage names).
API_OF_MODULE = {
    "storage": "storage.googleapis.com",
    "kms": "cloudkms.googleapis.com",
    "serviceaccount": "iam.googleapis.com",
    "iam": "iam.googleapis.com",
    "compute": "compute.googleapis.com",
    "container": "container.googleapis.com",
    "pubsub": "pubsub.googleapis.com",
    "monitoring": "monitoring.googleapis.com",
    "logging": "logging.googleapis.com",
    "artifactregistry": "artifactregistry.googleapis.com",
    "cloudquota": "cloudquotas.googleapis.com",
    "billing": "billingbudgets.googleapis.com",
    "cloudfunctionsv2": "cloudfunctions.googleapis.com",
    "cloudrunv2": "run.googleapis.com",
}

#: Resources that take pulumi-gcp 10's `deletion_policy` among those the simulation answers.
_DELETION_POLICY = {
    "gcp:storage/bucket:Bucket",
    "gcp:storage/bucketObject:BucketObject",
    "gcp:kms/cryptoKey:CryptoKey",
    SERVICE,
    "gcp:artifactregistry/repository:Repository",
    "gcp:serviceaccount/account:Account",
    "gcp:iam/workloadIdentityPool:WorkloadIdentityPool",
    "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider",
    "gcp:billing/budget:Budget",
    "gcp:pubsub/topic:Topic",
    "gcp:monitoring/notificationChannel:NotificationChannel",
    "gcp:monitoring/alertPolicy:AlertPolicy",
    "gcp:projects/iAMCustomRole:IAMCustomRole",
    "gcp:cloudfunctionsv2/function:Function",
}

#: GCS bucket naming (Cloud Storage docs, "Bucket naming requirements"): 3-63 characters
#: of lowercase letters, digits, `-`, `_` and `.`, starting and ending with a letter or
#: digit; no "goog" prefix and no "google" anywhere.
_BUCKET_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]")


class SimulatedGcpError(AistackError):
    """A registration Google Cloud would refuse."""


def _digest(*parts: str, length: int = 17) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:length]


def project_number(project: str) -> str:
    """A stable 12-digit project number for `project` (real numbers are 12 digits)."""
    return str(10**11 + int(_digest("project-number", project, length=12), 16) % (9 * 10**11))


def _physical_name(args: MockResourceArgs) -> str:
    explicit = args.inputs.get("name")
    if explicit:
        return str(explicit)
    # pulumi-gcp autonames `<logical name>-<7 hex>`.
    return f"{args.name}-{_digest(args.typ, args.name, length=7)}"


def _module_and_kind(token: str) -> tuple[str, str]:
    _, module_path, kind = token.split(":", 2)
    return module_path.split("/", 1)[0], kind


def resource(
    cloud: SimulatedCloud, args: MockResourceArgs, inputs: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The id and outputs GCP returns for one `gcp:` registration."""
    project = cloud.gcp_project(inputs, args.provider)
    region = cloud.gcp_region(inputs, args.provider)
    module, kind = _module_and_kind(args.typ)
    name = _physical_name(args)
    out = dict(inputs)
    out.setdefault("project", project)
    if args.typ in _DELETION_POLICY:
        out.setdefault("deletionPolicy", "DELETE")
    if isinstance(inputs.get("labels"), dict):
        default_labels = cloud.providers.get(args.provider or "", {}).get("defaultLabels") or {}
        if not isinstance(default_labels, dict):
            default_labels = {}
        merged = {**default_labels, **inputs["labels"]}
        out.setdefault("effectiveLabels", merged)
        out.setdefault("pulumiLabels", merged)
    typ = args.typ

    if typ == "gcp:storage/bucket:Bucket":
        _check_bucket_name(name, args.name)
        location = str(inputs.get("location") or "US")
        out.update(
            name=name,
            url=f"gs://{name}",
            # Storage JSON API: bucket resource `selfLink`.
            selfLink=f"https://www.googleapis.com/storage/v1/b/{name}",
            location=location.upper(),
            projectNumber=project_number(project),
            storageClass=inputs.get("storageClass") or "STANDARD",
        )
        return name, out
    if typ == "gcp:storage/bucketObject:BucketObject":
        bucket = str(inputs.get("bucket", ""))
        out.update(
            name=name,
            selfLink=f"https://www.googleapis.com/storage/v1/b/{bucket}/o/{quote(name, safe='')}",
            mediaLink=(
                f"https://storage.googleapis.com/download/storage/v1/b/{bucket}/o/"
                f"{quote(name, safe='')}?alt=media"
            ),
            outputName=name,
            generation=1,
        )
        return f"{bucket}-{name}", out
    if typ == SERVICE:
        # Terraform's google_project_service id: `<project>/<service>`.
        resource_id = f"{project}/{inputs.get('service', '')}"
        return resource_id, out
    if typ == "gcp:kms/keyRing:KeyRing":
        location = str(inputs.get("location") or region)
        resource_id = f"projects/{project}/locations/{location}/keyRings/{name}"
        out.update(name=name, location=location)
        return resource_id, out
    if typ == "gcp:kms/cryptoKey:CryptoKey":
        resource_id = f"{inputs.get('keyRing', '')}/cryptoKeys/{name}"
        out.update(name=name)
        return resource_id, out
    if typ == QUOTA_PREFERENCE:
        return _quota_preference(cloud, args, inputs, out)
    _check_principals(typ, inputs)
    identity = _identity_resource(typ, project, name, inputs, out)
    if identity is not None:
        return identity
    registry = _registry_resource(typ, project, region, inputs, out)
    if registry is not None:
        return registry
    budget_guard = _budget_guard_resource(typ, project, region, name, args.name, inputs, out)
    if budget_guard is not None:
        return budget_guard, out
    if typ == "gcp:cloudrunv2/serviceIamMember:ServiceIamMember":
        # Terraform's google_cloud_run_v2_service_iam_member id: `<service path> <role> <member>`.
        location = str(inputs.get("location") or region)
        service = f"projects/{project}/locations/{location}/services/{inputs.get('name', '')}"
        resource_id = f"{service} {inputs.get('role', '')} {inputs.get('member', '')}"
        out.setdefault("etag", f"BwY{_digest(resource_id, length=8)}=")
        return resource_id, out
    if kind.endswith("IAMMember") or kind.endswith("IAMBinding"):
        # IAM member ids as the provider writes them: `<resource> <role> <member>`
        # (plus the condition's title when there is one).
        target = next(
            (
                str(inputs[key])
                for key in ("cryptoKeyId", "bucket", "project", "serviceAccountId")
                if inputs.get(key)
            ),
            project,
        )
        if kind.startswith("Bucket"):
            target = f"b/{target}"
        member = inputs.get("member") or ",".join(inputs.get("members") or [])
        resource_id = " ".join(str(p) for p in (target, inputs.get("role", ""), member) if p)
        condition = inputs.get("condition") or {}
        if condition.get("title"):
            resource_id += f" {condition['title']}"
        out.setdefault("etag", f"BwY{_digest(resource_id, length=8)}=")
        return resource_id, out

    # Everything else: the generic `projects/<p>/<location>/<collection>/<name>` path.
    if "zone" in inputs:
        location = f"zones/{inputs['zone']}"
    elif kind in ("Network", "Firewall"):
        location = "global"
    else:
        location = f"regions/{region}"
    collection = kind[0].lower() + kind[1:] + "s"
    resource_id = f"projects/{project}/{location}/{collection}/{name}"
    out.setdefault("name", name)
    out.setdefault("selfLink", f"https://www.googleapis.com/{module}/v1/{resource_id}")
    out.setdefault("id", resource_id)
    return resource_id, out


#: Cloud Run's region codes in service URLs (`https://<service>-<hash>-<code>.a.run.app`,
#: Cloud Run docs, "Service URLs"), for the regions aistack's catalog lists.
_RUN_REGION_CODES = {
    "europe-west4": "ez",
    "europe-west1": "ew",
    "us-central1": "uc",
    "us-east1": "ue",
    "us-east4": "uk",
    "us-west1": "uw",
    "asia-southeast1": "as",
    "asia-northeast1": "an",
}
#: The resource name id segments of the Monitoring API are 19-digit integers.
_MONITORING_ID = 10**18


def _budget_guard_resource(
    typ: str,
    project: str,
    region: str,
    name: str,
    logical: str,
    inputs: dict[str, Any],
    out: dict[str, Any],
) -> str | None:
    """Ids and outputs of the budget guard's resource types, as their APIs return them;
    None for other types."""
    if typ == "gcp:billing/budget:Budget":
        # Budget API: `billingAccounts/<account>/budgets/<budget id>` (a UUID).
        digest = _digest("budget", logical, project, length=32)
        uuid = f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:]}"
        resource_id = f"billingAccounts/{inputs.get('billingAccount', '')}/budgets/{uuid}"
        out.update(name=resource_id)
        return resource_id
    if typ == "gcp:pubsub/topic:Topic":
        # Pub/Sub: `projects/<project>/topics/<topic>`; the provider's `name` is the short one.
        out.update(name=name)
        return f"projects/{project}/topics/{name}"
    if typ in (
        "gcp:monitoring/notificationChannel:NotificationChannel",
        "gcp:monitoring/alertPolicy:AlertPolicy",
    ):
        # Monitoring API: `projects/<project>/notificationChannels/<19 digits>` (and
        # alertPolicies); the id is the name.
        collection = "notificationChannels" if "Channel" in typ else "alertPolicies"
        number = _MONITORING_ID + int(_digest(typ, logical, project, length=15), 16)
        resource_id = (
            f"projects/{project}/{collection}/{number % (9 * _MONITORING_ID) + _MONITORING_ID}"
        )
        out.update(name=resource_id)
        if collection == "notificationChannels":
            out.setdefault("verificationStatus", "")
        return resource_id
    if typ == "gcp:projects/iAMCustomRole:IAMCustomRole":
        # IAM: custom project roles are `projects/<project>/roles/<role id>`.
        resource_id = f"projects/{project}/roles/{inputs.get('roleId', name)}"
        out.update(name=resource_id, deleted=False)
        return resource_id
    if typ == "gcp:cloudfunctionsv2/function:Function":
        # Cloud Functions v2: `projects/<p>/locations/<l>/functions/<name>`; a gen2 function
        # runs as the Cloud Run service of the same name.
        location = str(inputs.get("location") or region)
        resource_id = f"projects/{project}/locations/{location}/functions/{name}"
        service = dict(inputs.get("serviceConfig") or {})
        code = _RUN_REGION_CODES.get(location, "ez")
        service.update(
            service=f"projects/{project}/locations/{location}/services/{name}",
            uri=f"https://{name}-{_digest('run', project, length=10)}-{code}.a.run.app",
            gcfUri="",
        )
        out.update(
            name=name,
            environment="GEN_2",
            state="ACTIVE",
            url=f"https://{location}-{project}.cloudfunctions.net/{name}",
            serviceConfig=service,
        )
        if inputs.get("eventTrigger"):
            trigger = dict(inputs["eventTrigger"])
            trigger.setdefault(
                "trigger",
                f"projects/{project}/locations/{location}/triggers/{name}-{_digest(name)[:6]}",
            )
            out["eventTrigger"] = trigger
        return resource_id
    return None


def _check_bucket_name(name: str, logical: str) -> None:
    if (
        not _BUCKET_NAME.fullmatch(name)
        or name.startswith("goog")
        or "google" in name
        or ".." in name
    ):
        raise SimulatedGcpError(
            f"Google Cloud Storage refuses the bucket name {name!r} (resource {logical!r}): "
            "names are 3-63 lowercase letters, digits, '-', '_' or '.', start and end with "
            "a letter or digit, and contain no 'google' nor start with 'goog'."
        )


def invokes(
    cloud: SimulatedCloud,
) -> dict[str, Callable[[dict[str, Any], str], dict[str, Any]]]:
    """The GCP invokes the simulated cloud answers, by token."""

    def get_project(args: dict[str, Any], provider: str) -> dict[str, Any]:
        project = str(args.get("projectId") or cloud.gcp_project(args, provider))
        return {
            "projectId": project,
            "name": project,
            "number": project_number(project),
            "id": f"projects/{project}",
            "labels": {},
            "effectiveLabels": {},
            "autoCreateNetwork": True,
        }

    def storage_service_agent(args: dict[str, Any], provider: str) -> dict[str, Any]:
        # Cloud Storage docs, "Service agents": the project's Cloud Storage service agent
        # is service-<PROJECT_NUMBER>@gs-project-accounts.iam.gserviceaccount.com.
        project = cloud.gcp_project(args, provider)
        email = f"service-{project_number(project)}@gs-project-accounts.iam.gserviceaccount.com"
        return {
            "emailAddress": email,
            "member": f"serviceAccount:{email}",
            "project": project,
            "id": email,
        }

    def machine_types(args: dict[str, Any], provider: str) -> dict[str, Any]:
        return _machine_types(cloud, args, provider)

    def quota_info(args: dict[str, Any], provider: str) -> dict[str, Any]:
        return _quota_info(cloud, args)

    return {
        "gcp:organizations/getProject:getProject": get_project,
        "gcp:storage/getProjectServiceAccount:getProjectServiceAccount": storage_service_agent,
        "gcp:compute/getMachineTypes:getMachineTypes": machine_types,
        "gcp:cloudquota/getSQuotaInfo:getSQuotaInfo": quota_info,
    }


#: The accelerator type each catalogued machine family carries (Compute Engine docs, "GPU
#: machine types"): the name `guest_accelerators` and quota dimensions use.
ACCELERATOR_TYPES = {
    "g2-standard": "nvidia-l4",
    "a2-highgpu": "nvidia-tesla-a100",
    "a2-megagpu": "nvidia-tesla-a100",
    "a2-ultragpu": "nvidia-a100-80gb",
    "a3-highgpu": "nvidia-h100-80gb",
    "a3-megagpu": "nvidia-h100-mega-80gb",
}
_NAME_FILTER = re.compile(r'\s*name\s*=\s*"?([a-z0-9-]+)"?\s*')
#: Cloud Quotas quota ids (`NVIDIA-L4-GPUS-per-project-region`), not the metric names of
#: the older Compute quotas (`NVIDIA_L4_GPUS`): the API answers 404 to those.
_QUOTA_ID = re.compile(r"[A-Z0-9]+(-[A-Z0-9]+)*-per-project(-region|-zone)?")


def _machine_types(cloud: SimulatedCloud, args: dict[str, Any], provider: str) -> dict[str, Any]:
    """Machine types a zone offers, from the GPU catalog (GPU types only, as catalogued)."""
    from aistack import catalog

    zone = str(args.get("zone") or "")
    if not zone:
        raise SimulatedGcpError("getMachineTypes needs a zone, e.g. 'europe-west4-b'.")
    region = zone.rsplit("-", 1)[0]
    wanted: str | None = None
    if args.get("filter"):
        match = _NAME_FILTER.fullmatch(str(args["filter"]))
        if match is None:
            raise SimulatedGcpError(
                f"the simulated cloud answers getMachineTypes filters of the form "
                f"'name = <type>' only, not {args['filter']!r}."
            )
        wanted = match.group(1)
    project = cloud.gcp_project(args, provider)
    rows = []
    for known in catalog.instance_types("gcp"):
        if wanted and known.name != wanted:
            continue
        if not known.offered_in(region) or zone not in known.zones(region):
            continue
        link = (
            f"https://www.googleapis.com/compute/v1/projects/{project}/zones/{zone}/"
            f"machineTypes/{known.name}"
        )
        rows.append(
            {
                "name": known.name,
                "guestCpus": known.vcpus,
                "memoryMb": int(known.memory_gib * 1024),
                "accelerators": [
                    {
                        "guestAcceleratorType": ACCELERATOR_TYPES[known.family],
                        "guestAcceleratorCount": known.gpu_count,
                    }
                ],
                "bundledLocalSsds": (
                    [{"defaultInterface": "NVME", "partitionCount": known.nvme_disks}]
                    if known.nvme_disks
                    else []
                ),
                "architecture": "X86_64",
                "deprecateds": [],
                "description": f"{known.vcpus} vCPUs, {known.gpu_count} {known.gpu_label}",
                "isSharedCpus": False,
                "maximumPersistentDisks": 128,
                "maximumPersistentDisksSizeGb": 263168,
                "selfLink": link,
            }
        )
    return {
        "machineTypes": rows,
        "zone": zone,
        "project": project,
        "filter": args.get("filter") or "",
        "id": f"projects/{project}/zones/{zone}",
    }


def _quota_overrides(cloud: SimulatedCloud, quota_id: str) -> dict[tuple[str, ...], float]:
    """The simulated project's granted values for `quota_id` that differ from the
    default, by (region[, gpu_family]); `()` is the quota's own default."""
    quotas: dict[str, float] = getattr(cloud, "gcp_quotas", {})
    found: dict[tuple[str, ...], float] = {}
    for key, value in quotas.items():
        head, *rest = key.split("/")
        if head == quota_id:
            found[tuple(rest)] = float(value)
    return found


def current_quota_value(cloud: SimulatedCloud, quota_id: str, dimensions: dict[str, str]) -> float:
    """The value in force for `quota_id` at `dimensions`, by Cloud Quotas' precedence
    (docs/quotas/configure-dimensions, "Dimension precedence"): all dimensions given, then
    location only, then the default."""
    overrides = _quota_overrides(cloud, quota_id)
    region, family = dimensions.get("region"), dimensions.get("gpu_family")
    for key in ((region, family), (region,)):
        if all(key) and tuple(k for k in key if k) in overrides:
            return overrides[tuple(k for k in key if k)]
    return overrides.get((), 0.0)


def _quota_info(cloud: SimulatedCloud, args: dict[str, Any]) -> dict[str, Any]:
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
    overrides = _quota_overrides(cloud, quota_id)
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


def _quota_preference(
    cloud: SimulatedCloud, args: MockResourceArgs, inputs: dict[str, Any], out: dict[str, Any]
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
    current = current_quota_value(cloud, quota_id, dims)
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
    # Kept on the cloud object, which the engine builds per run (one simulated project).
    filed: dict[tuple[Any, ...], str] = cloud.__dict__.setdefault("_gcp_quota_preferences", {})
    if identity in filed and filed[identity] != args.name:
        raise SimulatedGcpError(
            f"{where}: Error 409: a QuotaPreference for {quota_id} {dims} already exists in "
            f"{parent} ({filed[identity]!r}): one preference per quota and dimensions."
        )
    filed[identity] = args.name
    name = str(inputs.get("name") or _physical_name(args))
    resource_id = f"{parent}/locations/global/quotaPreferences/{name}"
    stamp = "2026-01-01T00:00:00Z"
    out.update(
        name=name,
        dimensions=dims,
        etag=f'W/"{_digest(resource_id, preferred, length=16)}"',
        createTime=stamp,
        updateTime=stamp,
        reconciling=increase,
        quotaConfig={
            **config,
            "grantedValue": str(int(current)),
            "requestOrigin": "ORIGIN_UNSPECIFIED",
            "stateDetail": "",
            "traceId": _digest("trace", resource_id, length=16) if increase else "",
            "annotations": config.get("annotations") or {},
        },
    )
    return resource_id, out


def _api_of(resource: Resource) -> str | None:
    if not resource.type.startswith("gcp:") or resource.type == SERVICE:
        return None
    return API_OF_MODULE.get(_module_and_kind(resource.type)[0])


def missing_api_dependencies(graph: StackGraph) -> list[tuple[Resource, str]]:
    """GCP resources inside aistack components that do not wait for the `projects.Service`
    enabling their API, with that API. On a fresh project each would fail its first `up`
    (services enable asynchronously: pulumi/pulumi#12163, terraform-provider-google#11020)."""
    check = ApiRaceCheck()
    found: list[tuple[Resource, str]] = []
    for res in graph.resources:
        check.add(res)
    for res in graph.resources:
        api = check.unwaited_api(res)
        if api is not None:
            found.append((res, api))
    return found


class ApiRaceCheck:
    """The API-enablement contract, judged as registrations arrive (the engine's monitor
    calls `error_for` once per resource): the index grows with each one, so judging the
    latest costs its ancestors and dependencies, not a pass over the whole graph."""

    def __init__(self) -> None:
        self._by_urn: dict[str, Resource] = {}
        self._enables: dict[str, str] = {}

    def add(self, res: Resource) -> None:
        self._by_urn[res.urn] = res
        if res.type == SERVICE:
            self._enables[res.urn] = str(res.inputs.get("service", ""))

    def error_for(self, res: Resource) -> str | None:
        """Records `res` (just registered) and returns the error GCP gives it if it belongs
        to an aistack component and does not wait for its API, else None. The simulated
        project is fresh: only what the stack enables is on, and only once the Service
        exists."""
        self.add(res)
        api = self.unwaited_api(res)
        if api is None:
            return None
        return (
            f"{res.type} {res.name!r}: googleapi: Error 403: {api} has not been used in "
            f"project {res.outputs.get('project', '')} before or it is disabled. "
            "(aistack: the resource does not depend on the ProjectServices' Service for "
            f"{api}; pass depends_on=services.enabling({api!r}).)"
        )

    def _in_aistack_component(self, res: Resource) -> bool:
        parent = self._by_urn.get(res.parent or "")
        while parent is not None:
            if parent.type.startswith("aistack:"):
                return True
            parent = self._by_urn.get(parent.parent or "")
        return False

    def unwaited_api(self, res: Resource) -> str | None:
        api = _api_of(res)
        if api is None or not self._in_aistack_component(res):
            return None
        seen: set[str] = set()
        todo = list(res.dependencies)
        while todo:
            urn = todo.pop()
            if urn in seen:
                continue
            seen.add(urn)
            if self._enables.get(urn) == api:
                return None
            found = self._by_urn.get(urn)
            if found is not None:
                todo.extend(found.dependencies)
        return api


# ---- identity: service accounts, Workload Identity Federation -------------------------------

#: IAM API, projects.serviceAccounts.create: `accountId` "must be 6-30 characters long, and
#: match the regular expression [a-z]([-a-z0-9]*[a-z0-9])" (RFC 1035).
SERVICE_ACCOUNT_ID = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])")
#: IAM API, projects.locations.workloadIdentityPools(.providers).create: ids are 4-32
#: characters of [a-z0-9-]; the prefix `gcp-` is reserved by Google (pulumi-gcp docstring
#: of `workload_identity_pool_id` / `workload_identity_pool_provider_id`).
POOL_ID = re.compile(r"[a-z0-9-]{4,32}")
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"


def _identity_resource(
    typ: str, project: str, name: str, inputs: dict[str, Any], out: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    number = project_number(project)
    if typ == "gcp:serviceaccount/account:Account":
        # pulumi-gcp autonames a missing account id (AccountArgs leaves it optional):
        # the logical name cut to 22 characters, `-` and 7 random characters (30 in all).
        logical, _, suffix = name.rpartition("-")
        account_id = str(inputs.get("accountId") or f"{logical[:22]}-{suffix}")
        if not (6 <= len(account_id) <= 30 and SERVICE_ACCOUNT_ID.fullmatch(account_id)):
            raise SimulatedGcpError(
                f"googleapi: Error 400: account_id {account_id!r} is invalid: service account "
                "ids are 6-30 characters matching [a-z]([-a-z0-9]*[a-z0-9])."
            )
        email = f"{account_id}@{project}.iam.gserviceaccount.com"
        resource_id = f"projects/{project}/serviceAccounts/{email}"
        out.update(
            accountId=account_id,
            email=email,
            member=f"serviceAccount:{email}",
            name=resource_id,
            # Service account unique ids are 21-digit numbers (IAM API `uniqueId`).
            uniqueId=str(10**20 + int(_digest("sa", project, account_id, length=16), 16)),
            disabled=bool(inputs.get("disabled", False)),
        )
        return resource_id, out
    if typ == "gcp:iam/workloadIdentityPool:WorkloadIdentityPool":
        pool_id = str(inputs.get("workloadIdentityPoolId") or "")
        _check_pool_id(pool_id, "workload_identity_pool_id")
        # The pool's resource name uses the project NUMBER; Terraform's import id the ID.
        out.update(
            name=f"projects/{number}/locations/global/workloadIdentityPools/{pool_id}",
            state="ACTIVE",
            mode=inputs.get("mode") or "FEDERATION_ONLY",
        )
        return f"projects/{project}/locations/global/workloadIdentityPools/{pool_id}", out
    if typ == "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider":
        pool_id = str(inputs.get("workloadIdentityPoolId") or "")
        provider_id = str(inputs.get("workloadIdentityPoolProviderId") or "")
        if "/" in pool_id:
            # pulumi-gcp#1080: passing the pool's `id` or `name` instead of its short id.
            raise SimulatedGcpError(
                f"googleapi: Error 400: workload_identity_pool_id {pool_id!r} is a resource "
                "name; pass the pool's short id (pool.workload_identity_pool_id)."
            )
        _check_pool_id(provider_id, "workload_identity_pool_provider_id")
        oidc = inputs.get("oidc") or {}
        condition = str(inputs.get("attributeCondition") or "")
        if oidc.get("issuerUri") == GITHUB_ISSUER and "assertion." not in condition:
            # The API's answer to a GitHub provider without a condition
            # (terraform-google-github-actions-runners#261, chainguard-dev/
            # terraform-infra-common#672; IAM docs "Workload Identity Federation with
            # deployment pipelines", Conditions).
            raise SimulatedGcpError(
                "googleapi: Error 400: The attribute condition must reference one of the "
                "provider's claims. For more information, see https://cloud.google.com/iam/"
                "docs/workload-identity-federation-with-deployment-pipelines#conditions"
            )
        out.update(
            name=(
                f"projects/{number}/locations/global/workloadIdentityPools/{pool_id}"
                f"/providers/{provider_id}"
            ),
            state="ACTIVE",
        )
        resource_id = (
            f"projects/{project}/locations/global/workloadIdentityPools/{pool_id}"
            f"/providers/{provider_id}"
        )
        return resource_id, out
    return None


#: Federated principals (IAM docs, "Principal identifiers"): the pool path names the project
#: NUMBER, and the pool is a pool id or `<PROJECT_ID>.svc.id.goog` for GKE.
_PRINCIPAL = re.compile(
    r"principal(Set)?://iam\.googleapis\.com/projects/(?P<project>[^/]+)/locations/global/"
    r"workloadIdentityPools/(?P<pool>[a-z0-9.-]+)/(?P<rest>.+)"
)


def _check_principals(typ: str, inputs: dict[str, Any]) -> None:
    """IAM refuses a federated principal that names the project by ID, or is malformed."""
    if not (typ.endswith("IAMMember") or typ.endswith("IAMBinding") or typ.endswith("IamMember")):
        return
    members = [inputs.get("member")] + list(inputs.get("members") or [])
    for member in (str(m) for m in members if m):
        if not member.startswith(("principal://", "principalSet://")):
            continue
        match = _PRINCIPAL.fullmatch(member)
        if match is None or not match["project"].isdigit():
            raise SimulatedGcpError(
                f"googleapi: Error 400: Invalid principal {member!r}: federated principals are "
                "principal(Set)://iam.googleapis.com/projects/<PROJECT_NUMBER>/locations/"
                "global/workloadIdentityPools/<pool>/..., with the project number, not its ID."
            )


def _check_pool_id(value: str, field: str) -> None:
    if not POOL_ID.fullmatch(value) or value.startswith("gcp-"):
        raise SimulatedGcpError(
            f"googleapi: Error 400: {field} {value!r} is invalid: 4-32 characters of "
            "[a-z0-9-], not starting with the reserved prefix 'gcp-'."
        )


# ---- Artifact Registry ----------------------------------------------------------------------

#: Artifact Registry repository ids: lowercase letters, digits and hyphens, starting with a
#: letter and ending with a letter or digit, at most 63 characters (Artifact Registry docs,
#: "Create standard repositories", repository name rules).
REPOSITORY_ID = re.compile(r"[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?")
#: Service agents per API (IAM docs, "Service agents"): `service-<NUMBER>@<domain>`.
SERVICE_AGENT_DOMAINS = {
    "artifactregistry.googleapis.com": "gcp-sa-artifactregistry.iam.gserviceaccount.com",
    "containerscanning.googleapis.com": "gcp-sa-containerscanning.iam.gserviceaccount.com",
    "pubsub.googleapis.com": "gcp-sa-pubsub.iam.gserviceaccount.com",
    "cloudfunctions.googleapis.com": "gcf-admin-robot.iam.gserviceaccount.com",
    "container.googleapis.com": "container-engine-robot.iam.gserviceaccount.com",
}
#: Artifact Registry applies at most 10 cleanup policies to a repository (Artifact Registry
#: docs, "Configure cleanup policies": maximum number of cleanup policies per repository).
MAX_CLEANUP_POLICIES = 10


def _registry_resource(
    typ: str, project: str, region: str, inputs: dict[str, Any], out: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    if typ == "gcp:artifactregistry/repository:Repository":
        repository_id = str(inputs.get("repositoryId") or "")
        if not REPOSITORY_ID.fullmatch(repository_id):
            raise SimulatedGcpError(
                f"googleapi: Error 400: repository id {repository_id!r} is invalid: lowercase "
                "letters, digits and hyphens, starting with a letter, ending with a letter or "
                "digit, at most 63 characters."
            )
        policies = inputs.get("cleanupPolicies") or []
        if len(policies) > MAX_CLEANUP_POLICIES:
            raise SimulatedGcpError(
                f"googleapi: Error 400: {len(policies)} cleanup policies; a repository takes "
                f"at most {MAX_CLEANUP_POLICIES}."
            )
        location = str(inputs.get("location") or region)
        resource_id = f"projects/{project}/locations/{location}/repositories/{repository_id}"
        host = f"{location}-docker.pkg.dev" if inputs.get("format") == "DOCKER" else ""
        scanning = dict(inputs.get("vulnerabilityScanningConfig") or {})
        enabled = scanning.get("enablementConfig") != "DISABLED"
        scanning.setdefault("enablementConfig", "INHERITED")
        scanning.setdefault(
            "enablementState", "SCANNING_ACTIVE" if enabled else "SCANNING_DISABLED"
        )
        out.update(
            name=repository_id,
            location=location,
            mode=inputs.get("mode") or "STANDARD_REPOSITORY",
            registryUri=f"{host}/{project}/{repository_id}" if host else "",
            vulnerabilityScanningConfig=scanning,
            createTime="2026-01-01T00:00:00.000000Z",
            updateTime="2026-01-01T00:00:00.000000Z",
        )
        return resource_id, out
    if typ == "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember":
        location = str(inputs.get("location") or region)
        repository = str(inputs.get("repository") or "")
        target = (
            repository
            if repository.startswith("projects/")
            else f"projects/{project}/locations/{location}/repositories/{repository}"
        )
        resource_id = f"{target} {inputs.get('role', '')} {inputs.get('member', '')}"
        out.setdefault("etag", f"BwY{_digest(resource_id, length=8)}=")
        return resource_id, out
    if typ == "gcp:projects/serviceIdentity:ServiceIdentity":
        service = str(inputs.get("service") or "")
        domain = SERVICE_AGENT_DOMAINS.get(service)
        if domain is None:
            raise SimulatedGcpError(
                f"the simulated cloud knows no service agent of {service!r}; add it to "
                "SERVICE_AGENT_DOMAINS with its source."
            )
        email = f"service-{project_number(project)}@{domain}"
        out.update(email=email, member=f"serviceAccount:{email}")
        return f"projects/{project}/services/{service}", out
    return None

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

The contract with the components about API enablement: the simulated project is fresh,
so a GCP resource inside an aistack component that does not depend on the
`projects.Service` enabling its API fails the run (`api_race_error`, called by the
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
    "api_race_error",
    "invokes",
    "missing_api_dependencies",
    "project_number",
    "resource",
]

SERVICE = "gcp:projects/service:Service"

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
    "gcp:serviceaccount/account:Account",
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
    if module == "serviceaccount" and kind == "Account":
        account_id = str(inputs.get("accountId", name))
        email = f"{account_id}@{project}.iam.gserviceaccount.com"
        resource_id = f"projects/{project}/serviceAccounts/{email}"
        out.update(
            email=email,
            member=f"serviceAccount:{email}",
            name=resource_id,
            uniqueId=str(int(_digest(args.name, length=12), 16)),
        )
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


def _quota_info(cloud: SimulatedCloud, args: dict[str, Any]) -> dict[str, Any]:
    """A Cloud Quotas QuotaInfo. The simulated project is new: every GPU quota is 0, and
    so is the global GPUS-ALL-REGIONS ceiling ("Quota 'GPUS_ALL_REGIONS' exceeded. Limit:
    0.0 globally"), unless `SimulatedCloud.gcp_quotas` says otherwise."""
    from aistack import catalog

    quota_id = str(args.get("quotaId", ""))
    parent = str(args.get("parent", ""))
    service = str(args.get("service", ""))
    if not _QUOTA_ID.fullmatch(quota_id):
        hint = ""
        if re.fullmatch(r"[A-Z0-9_]+", quota_id):
            hint = (
                f" {quota_id!r} is a metric name; the quota id is e.g. "
                f"{quota_id.replace('_', '-')}-per-project-region."
            )
        raise SimulatedGcpError(
            f"getSQuotaInfo: Error 404: quota {quota_id!r} of {service} not found.{hint}"
        )
    if not parent.startswith("projects/"):
        raise SimulatedGcpError(f"getSQuotaInfo: parent must be 'projects/<id>', not {parent!r}.")
    quotas: dict[str, float] = getattr(cloud, "gcp_quotas", {})
    regional = quota_id.endswith("-per-project-region")
    regions = sorted({r for t in catalog.instance_types("gcp") for r in t.regions})
    infos = (
        [
            {
                "dimensions": {"region": region},
                "details": [{"value": str(int(quotas.get(f"{quota_id}/{region}", 0)))}],
                "applicableLocations": [region],
            }
            for region in regions
        ]
        if regional
        else [
            {
                "dimensions": {},
                "details": [{"value": str(int(quotas.get(quota_id, 0)))}],
                "applicableLocations": ["global"],
            }
        ]
    )
    return {
        "parent": parent,
        "service": service,
        "quotaId": quota_id,
        "name": f"{parent}/locations/global/services/{service}/quotaInfos/{quota_id}",
        "containerType": "PROJECT",
        "dimensions": ["region"] if regional else [],
        "dimensionsInfos": infos,
        "isConcurrent": False,
        "isFixed": False,
        "isPrecise": True,
        "metric": f"{service}/{quota_id.split('-per-')[0].lower().replace('-', '_')}",
        "metricDisplayName": quota_id,
        "metricUnit": "1",
        "quotaDisplayName": quota_id,
        "quotaIncreaseEligibilities": [{"isEligible": True, "ineligibilityReason": ""}],
        "refreshInterval": "day" if regional else "",
        "serviceRequestQuotaUri": "",
        "id": f"{parent}/locations/global/services/{service}/quotaInfos/{quota_id}",
    }


def _api_of(resource: Resource) -> str | None:
    if not resource.type.startswith("gcp:") or resource.type == SERVICE:
        return None
    return API_OF_MODULE.get(_module_and_kind(resource.type)[0])


def missing_api_dependencies(graph: StackGraph) -> list[tuple[Resource, str]]:
    """GCP resources inside aistack components that do not wait for the `projects.Service`
    enabling their API, with that API. On a fresh project each would fail its first `up`
    (services enable asynchronously: pulumi/pulumi#12163, terraform-provider-google#11020)."""
    found: list[tuple[Resource, str]] = []
    for res in graph.resources:
        api = _unwaited_api(graph, res)
        if api is not None:
            found.append((res, api))
    return found


def api_race_error(urn: str, records: list[Resource]) -> str | None:
    """The error GCP gives the resource `urn` (just registered) if it belongs to an
    aistack component and does not wait for its API, else None. The simulated project is
    fresh: only what the stack enables is on, and only once the Service exists."""
    graph = StackGraph("", "", list(records), {})
    try:
        latest = graph.by_urn(urn)
    except KeyError:
        return None
    api = _unwaited_api(graph, latest)
    if api is None:
        return None
    return (
        f"{latest.type} {latest.name!r}: googleapi: Error 403: {api} has not been used in "
        f"project {latest.outputs.get('project', '')} before or it is disabled. "
        "(aistack: the resource does not depend on the ProjectServices' Service for "
        f"{api}; pass depends_on=services.enabling({api!r}).)"
    )


def _unwaited_api(graph: StackGraph, res: Resource) -> str | None:
    api = _api_of(res)
    if api is None or not any(a.type.startswith("aistack:") for a in graph.ancestors(res)):
        return None
    enabled_by = {r.urn: str(r.inputs.get("service", "")) for r in graph.of_type(SERVICE)}
    seen: set[str] = set()
    todo = list(res.dependencies)
    while todo:
        urn = todo.pop()
        if urn in seen:
            continue
        seen.add(urn)
        if enabled_by.get(urn) == api:
            return None
        try:
            todo.extend(graph.by_urn(urn).dependencies)
        except KeyError:
            continue
    return api

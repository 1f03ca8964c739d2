"""Graph queries over Google Cloud resources, shared by rules (and cost estimators)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from aistack.config import ALLOWED_REGIONS_TAG, gcp_label
from aistack.contracts.gcp import TIER_MARK
from aistack.engine.graph import Resource, StackGraph

GCS_BUCKET = "gcp:storage/bucket:Bucket"
#: The governance label carrying the allowed regions, as GCP labels spell it.
ALLOWED_REGIONS_LABEL = gcp_label(ALLOWED_REGIONS_TAG, is_key=True)

_LOCATION_IN_ID = re.compile(r"/locations/([^/]+)/")
T = TypeVar("T")


def labels(resource: Resource) -> dict[str, str]:
    """The labels the program set: `labels` (pulumi-gcp 10 also reports `effectiveLabels`
    with the provider's defaults; rules judge what the resource itself declares). GKE
    clusters label with `resourceLabels`, node pools in `nodeConfig.resourceLabels`."""
    own = resource.inputs.get("labels")
    if own is None:
        config = resource.inputs.get("nodeConfig")
        own = resource.inputs.get("resourceLabels") or (
            config.get("resourceLabels") if isinstance(config, dict) else None
        )
    return dict(own or {})


def allowed_regions(resource: Resource) -> list[str] | None:
    """The regions the governance label allows (`europe-west4_us-central1`), or None."""
    own = labels(resource)
    if not own.get(ALLOWED_REGIONS_LABEL):
        return None
    # Governance continues a long list in `-2`, `-3`, ... (a label value holds 63 chars).
    values = [own[ALLOWED_REGIONS_LABEL]]
    index = 2
    while own.get(f"{ALLOWED_REGIONS_LABEL}-{index}"):
        values.append(own[f"{ALLOWED_REGIONS_LABEL}-{index}"])
        index += 1
    return [region for value in values for region in value.split("_")]


def location_of(resource: Resource) -> str | None:
    """A resource's location, lowercased: `location`/`region` in its inputs, else the
    `/locations/<l>/` of the key ring or parent it names. GCS reports bucket locations
    uppercase, so every comparison is case-insensitive."""
    for key in ("location", "region"):
        value = resource.inputs.get(key) or resource.outputs.get(key)
        if value:
            return str(value).lower()
    for key in ("keyRing", "parent"):
        match = _LOCATION_IN_ID.search(str(resource.inputs.get(key) or "") + "/")
        if match:
            return match.group(1).lower()
    return None


def declared_by_component(
    graph: StackGraph, resource: Resource, read: Callable[[Resource], T | None]
) -> T | None:
    """`read(resource)`, or, for a resource that carries no labels at all (GCP gives KMS key
    rings and log buckets none), what its enclosing component declares: itself
    (gcp.AuditLogs carries the governance labels) or one of its other resources."""
    own = read(resource)
    if own is not None or "labels" in resource.inputs or labels(resource):
        return own
    component = graph.component_of(resource)
    if component is None:
        return None
    for declaring in [component, *graph.descendants(component)]:
        found = read(declaring)
        if found is not None:
            return found
    return None


def declared_allowed_regions(graph: StackGraph, resource: Resource) -> list[str] | None:
    """The allowed regions a resource declares, itself or (unlabelled) through its
    component."""
    return declared_by_component(graph, resource, allowed_regions)


# ---- GPU capacity and quota preferences (checklist C1) -----------------------------------

GCE_INSTANCE = "gcp:compute/instance:Instance"
NODE_POOL = "gcp:container/nodePool:NodePool"
INSTANCE_TEMPLATES = (
    "gcp:compute/instanceTemplate:InstanceTemplate",
    "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate",
)
INSTANCE_GROUP_MANAGERS = (
    "gcp:compute/instanceGroupManager:InstanceGroupManager",
    "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager",
)
AUTOSCALERS = ("gcp:compute/autoscaler:Autoscaler", "gcp:compute/regionAutoscaler:RegionAutoscaler")
QUOTA_PREFERENCE = "gcp:cloudquota/sQuotaPreference:SQuotaPreference"
_ZONE = re.compile(r"([a-z]+-[a-z]+\d+)-[a-z]")


@dataclass(frozen=True)
class GpuCapacity:
    """What can launch GCP GPU machines, at its maximum: `max_nodes` x `machine_type`."""

    resource: Resource
    region: str
    machine_type: str
    market: str
    max_nodes: int
    #: How `max_nodes` comes about, for a finding's message.
    basis: str


def _region_of_location(location: str) -> str:
    match = _ZONE.fullmatch(location)
    return match.group(1) if match else location


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _machine_type(value: Any) -> str | None:
    # A machine type may be given as a self-link or `zones/<z>/machineTypes/<t>`.
    return str(value).rsplit("/", 1)[-1].lower() if value else None


def _market(scheduling: Any, *, spot_flag: Any = None, preemptible: Any = None) -> str:
    scheduling = scheduling if isinstance(scheduling, dict) else {}
    spot = (
        bool(spot_flag)
        or bool(preemptible)
        or bool(scheduling.get("preemptible"))
        or str(scheduling.get("provisioningModel") or "").upper() == "SPOT"
    )
    return "spot" if spot else "on-demand"


def gpu_capacities(graph: StackGraph) -> list[GpuCapacity]:
    """Every GCE instance, Workbench instance, GKE node pool and managed instance group whose
    machine type is a catalogued GPU machine type, each sized at its maximum node count."""
    from aistack import catalog

    found: list[GpuCapacity] = []

    def add(
        res: Resource, region: str | None, machine: str | None, market: str, nodes: int, basis: str
    ) -> None:
        if not region or not machine or catalog.find("gcp", machine) is None or nodes <= 0:
            return
        found.append(GpuCapacity(res, region, machine, market, nodes, basis))

    for res in graph.of_type(GCE_INSTANCE):
        zone = str(res.inputs.get("zone") or "")
        add(
            res,
            _region_of_location(zone) if zone else None,
            _machine_type(res.inputs.get("machineType")),
            _market(res.inputs.get("scheduling")),
            1,
            "one instance",
        )

    for res in graph.of_type(NODE_POOL):
        config = res.inputs.get("nodeConfig") or {}
        machine = _machine_type(config.get("machineType"))
        location = str(res.inputs.get("location") or "")
        region = _region_of_location(location) if location else None
        zones = list(res.inputs.get("nodeLocations") or [])
        if not zones and location and _ZONE.fullmatch(location):
            zones = [location]
        if not zones and region and machine and catalog.find("gcp", machine):
            t = catalog.get(machine, cloud="gcp")
            # A regional pool without node locations runs in the cluster's zones; at most
            # every zone of the region that offers the type.
            zones = list(t.zones(region)) if t.offered_in(region) else []
        per_zone_note = f"per zone x {len(zones)} zones" if zones else ""
        scaling = res.inputs.get("autoscaling") or {}
        total = _int(scaling.get("totalMaxNodeCount"))
        per_zone = _int(scaling.get("maxNodeCount"))
        fixed = _int(res.inputs.get("nodeCount"))
        if total:
            nodes, basis = total, f"autoscaling.totalMaxNodeCount {total}"
        elif per_zone:
            nodes = per_zone * max(len(zones), 1)
            basis = f"autoscaling.maxNodeCount {per_zone} {per_zone_note}".strip()
        else:
            count = fixed if fixed is not None else _int(res.inputs.get("initialNodeCount")) or 0
            nodes = count * max(len(zones), 1)
            basis = f"nodeCount {count} {per_zone_note}".strip()
        add(
            res,
            region,
            machine,
            _market(None, spot_flag=config.get("spot"), preemptible=config.get("preemptible")),
            nodes,
            basis,
        )

    # A Workbench instance is one VM of its machine type, on-demand, in its zone's region.
    for res in graph.of_type("gcp:workbench/instance:Instance"):
        setup = res.inputs.get("gceSetup") or {}
        zone = str(res.inputs.get("location") or "")
        add(
            res,
            _region_of_location(zone) if zone else None,
            _machine_type(setup.get("machineType") if isinstance(setup, dict) else None),
            "on-demand",
            1,
            "one Workbench instance",
        )

    templates = {}
    for res in graph.resources:
        if res.type in INSTANCE_TEMPLATES:
            for key in ("selfLink", "id", "selfLinkUnique", "name"):
                if res.outputs.get(key):
                    templates[str(res.outputs[key])] = res
            templates[res.id] = res
    autoscaled: dict[str, int] = {}
    for res in graph.resources:
        if res.type in AUTOSCALERS:
            most = _int((res.inputs.get("autoscalingPolicy") or {}).get("maxReplicas"))
            if most:
                autoscaled[str(res.inputs.get("target") or "")] = most
    for res in graph.resources:
        if res.type not in INSTANCE_GROUP_MANAGERS:
            continue
        location = str(res.inputs.get("region") or res.inputs.get("zone") or "")
        size = _int(res.inputs.get("targetSize")) or 0
        most = next(
            (
                autoscaled[k]
                for k in (res.outputs.get("selfLink"), res.id, res.outputs.get("id"))
                if k and str(k) in autoscaled
            ),
            None,
        )
        nodes = max(size, most or 0)
        basis = f"autoscaler maxReplicas {most}" if most and most >= size else f"targetSize {size}"
        for version in res.inputs.get("versions") or []:
            template = templates.get(str(version.get("instanceTemplate") or ""))
            if template is None:
                continue
            props = template.inputs
            add(
                res,
                _region_of_location(location) if location else None,
                _machine_type(props.get("machineType")),
                _market(props.get("scheduling")),
                nodes,
                basis,
            )
            break
    return found


def quota_preferences(graph: StackGraph) -> list[tuple[Resource, str, dict[str, str], float]]:
    """Every Cloud Quotas preference on a Compute quota: (resource, quota id, dimensions,
    preferred value; -1 unlimited)."""
    found = []
    for res in graph.of_type(QUOTA_PREFERENCE):
        if str(res.inputs.get("service") or "") != "compute.googleapis.com":
            continue
        try:
            value = float((res.inputs.get("quotaConfig") or {}).get("preferredValue", ""))
        except (TypeError, ValueError):
            continue
        dims = {str(k): str(v) for k, v in (res.inputs.get("dimensions") or {}).items()}
        found.append((res, str(res.inputs.get("quotaId") or ""), dims, value))
    return found


# ---- identity (C6) and registries (E1) --------------------------------------------------

SERVICE_ACCOUNT = "gcp:serviceaccount/account:Account"
SERVICE_ACCOUNT_KEY = "gcp:serviceaccount/key:Key"
HMAC_KEY = "gcp:storage/hmacKey:HmacKey"
WIF_POOL_PROVIDER = "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider"
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
ARTIFACT_REPOSITORY = "gcp:artifactregistry/repository:Repository"
PROJECT_SERVICE = "gcp:projects/service:Service"

#: Resources granting a role to a member on a project, folder or organisation.
HIERARCHY_IAM_MEMBERS = (
    "gcp:projects/iAMMember:IAMMember",
    "gcp:projects/iAMBinding:IAMBinding",
    "gcp:folder/iAMMember:IAMMember",
    "gcp:folder/iAMBinding:IAMBinding",
    "gcp:organizations/iAMMember:IAMMember",
    "gcp:organizations/iAMBinding:IAMBinding",
)


def iam_members(resource: Resource) -> list[str]:
    """The members an IAMMember (`member`) or IAMBinding (`members`) grants to."""
    if resource.inputs.get("member"):
        return [str(resource.inputs["member"])]
    return [str(m) for m in resource.inputs.get("members") or []]


def is_workload_member(member: str) -> bool:
    """A service account or a federated principal: something a workload runs as."""
    return member.startswith(("serviceAccount:", "principal://", "principalSet://"))


def enabled_services(graph: StackGraph) -> set[str]:
    """The APIs the stack's `projects.Service` resources enable."""
    return {str(s.inputs.get("service", "")) for s in graph.of_type(PROJECT_SERVICE)}


def docker_repositories(graph: StackGraph) -> list[Resource]:
    """Artifact Registry repositories in Docker format (standard, not remote/virtual)."""
    return [
        r
        for r in graph.of_type(ARTIFACT_REPOSITORY)
        if r.inputs.get("format") == "DOCKER"
        and (r.inputs.get("mode") or "STANDARD_REPOSITORY") == "STANDARD_REPOSITORY"
    ]


# ---- budgets and the budget guard (C3) --------------------------------------------------

BILLING_BUDGET = "gcp:billing/budget:Budget"
FUNCTION_V2 = "gcp:cloudfunctionsv2/function:Function"
ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
CUSTOM_ROLE = "gcp:projects/iAMCustomRole:IAMCustomRole"
SERVICE_ACCOUNT_KEY = "gcp:serviceaccount/key:Key"
PUBSUB_PUBLISHED = "google.cloud.pubsub.topic.v1.messagePublished"


def is_gcp(graph: StackGraph) -> bool:
    return any(resource.type.startswith("gcp:") for resource in graph.resources)


def functions_on_topic(graph: StackGraph, topic: str) -> list[Resource]:
    """Cloud Functions (2nd gen) triggered by messages published to `topic` (its id)."""
    return [
        function
        for function in graph.of_type(FUNCTION_V2)
        if (function.get("eventTrigger", "pubsubTopic") == topic)
        and function.get("eventTrigger", "eventType") == PUBSUB_PUBLISHED
    ]


def grants_to(graph: StackGraph, member: str) -> list[Resource]:
    """IAM member and binding resources (any scope) that grant a role to `member`."""
    return [
        resource
        for resource in graph.resources
        if resource.type.startswith("gcp:")
        and resource.type.rsplit(":", 1)[-1].lower().endswith(("iammember", "iambinding"))
        and (
            resource.inputs.get("member") == member
            or member in (resource.inputs.get("members") or [])
        )
    ]


def custom_role_permissions(graph: StackGraph, role: str) -> list[str] | None:
    """The permissions of the custom role named `role` (`projects/<p>/roles/<id>`) in the
    graph, or None when it is not a custom role of this stack."""
    for resource in graph.of_type(CUSTOM_ROLE):
        if role in (resource.id, resource.outputs.get("name")):
            return list(resource.inputs.get("permissions") or [])
    return None


# ---- VPC networking (S1) and GPU placement (C2) -------------------------------------------

FIREWALL = "gcp:compute/firewall:Firewall"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
#: Subnet purposes that hold no VMs: load balancer proxies (flow logs and Private Google
#: Access do not apply; checkov's CKV_GCP_26/74 skip them too).
PROXY_PURPOSES = ("INTERNAL_HTTPS_LOAD_BALANCER", "REGIONAL_MANAGED_PROXY", "GLOBAL_MANAGED_PROXY")
_WORLD = ("0.0.0.0/0", "::/0")
_TIER_IN_DESCRIPTION = re.compile(re.escape(TIER_MARK) + r"([a-z-]+)")


def network_tier(resource: Resource) -> str | None:
    """The tier gcp.Network wrote into a subnet's or firewall rule's description."""
    match = _TIER_IN_DESCRIPTION.match(str(resource.inputs.get("description") or ""))
    return match.group(1) if match else None


def firewall_allows(resource: Resource) -> list[dict[str, Any]]:
    return [a for a in resource.inputs.get("allows") or [] if isinstance(a, dict)]


def is_ingress(resource: Resource) -> bool:
    return str(resource.inputs.get("direction") or "INGRESS").upper() == "INGRESS"


def open_to_world(resource: Resource) -> bool:
    """An ingress rule admitting any address: 0.0.0.0/0 (or ::/0) among its sources, or no
        source at all (an ingress rule without source ranges, tags or service accounts applies to
    0.0.0.0/0: `gcloud compute firewall-rules create --source-ranges` reference)."""
    ranges = [str(r) for r in resource.inputs.get("sourceRanges") or []]
    if any(r in _WORLD for r in ranges):
        return True
    return not (
        ranges or resource.inputs.get("sourceTags") or resource.inputs.get("sourceServiceAccounts")
    )


def allows_port(allow: dict[str, Any], port: int) -> bool:
    """Whether one `allows` entry admits TCP `port`: protocol all, or tcp with no ports (every
    port), a matching port or a range covering it."""
    protocol = str(allow.get("protocol") or "").lower()
    if protocol not in ("all", "tcp", "6"):
        return False
    ports = [str(p) for p in allow.get("ports") or []]
    if not ports:
        return True
    for spec in ports:
        low, _, high = spec.partition("-")
        try:
            if int(low) <= port <= int(high or low):
                return True
        except ValueError:
            continue
    return False


def machine_type_zones(machine_type: str, region: str) -> set[str] | None:
    """The catalog's zones of `region` offering `machine_type`; None when not catalogued."""
    from aistack import catalog

    entry = catalog.find("gcp", machine_type)
    if entry is None:
        return None
    return set(entry.zones(region)) if entry.offered_in(region) else set()


@dataclass(frozen=True)
class GpuPlacement:
    """Zones a GPU machine type is asked to run in: a node pool's node locations, an
    instance's zone, a managed instance group's zone or distribution zones."""

    resource: Resource
    machine_type: str
    region: str
    zones: tuple[str, ...]


def gpu_placements(graph: StackGraph) -> list[GpuPlacement]:
    """Every placement of a catalogued GCP GPU machine type in explicit zones."""
    from aistack import catalog

    found: list[GpuPlacement] = []

    def add(res: Resource, machine: str | None, zones: list[str]) -> None:
        zones = [z for z in zones if _ZONE.fullmatch(z)]
        if machine and zones and catalog.find("gcp", machine) is not None:
            found.append(GpuPlacement(res, machine, _region_of_location(zones[0]), tuple(zones)))

    for res in graph.of_type(GCE_INSTANCE):
        add(res, _machine_type(res.inputs.get("machineType")), [str(res.inputs.get("zone") or "")])
    for res in graph.of_type(NODE_POOL):
        config = res.inputs.get("nodeConfig") or {}
        zones = [str(z) for z in res.inputs.get("nodeLocations") or []]
        if not zones:
            zones = [str(res.inputs.get("location") or "")]
        add(res, _machine_type(config.get("machineType")), zones)
    templates: dict[str, Resource] = {}
    for res in graph.resources:
        if res.type in INSTANCE_TEMPLATES:
            for key in ("selfLink", "id", "selfLinkUnique", "name"):
                if res.outputs.get(key):
                    templates[str(res.outputs[key])] = res
            templates[res.id] = res
    for res in graph.resources:
        if res.type not in INSTANCE_GROUP_MANAGERS:
            continue
        zones = [str(z) for z in res.inputs.get("distributionPolicyZones") or []]
        if not zones and res.inputs.get("zone"):
            zones = [str(res.inputs["zone"])]
        for version in res.inputs.get("versions") or []:
            template = templates.get(str(version.get("instanceTemplate") or ""))
            if template is not None:
                add(res, _machine_type(template.inputs.get("machineType")), zones)
                break
    return found


# ---- GKE clusters and node pools (C5, C6, D3, T5, S1) ------------------------------------

GKE_CLUSTER = "gcp:container/cluster:Cluster"
GKE_NODE_POOL = NODE_POOL
#: The Compute Engine default service account (`<NUMBER>-compute@developer...`): Editor on
#: the project unless someone removed it (IAM docs, "Default service accounts").
_DEFAULT_COMPUTE_SA = re.compile(r"^\d+-compute@developer\.gserviceaccount\.com$")


def node_config(resource: Resource) -> dict[str, Any]:
    """A node pool's (or a cluster's default pool's) `nodeConfig`, {} when unset."""
    config = resource.inputs.get("nodeConfig")
    return config if isinstance(config, dict) else {}


def is_gpu_node_pool(resource: Resource) -> bool:
    """A GKE node pool with GPUs: declared accelerators, or a catalogued GPU machine type."""
    from aistack import catalog

    if resource.type != GKE_NODE_POOL:
        return False
    config = node_config(resource)
    machine = _machine_type(config.get("machineType"))
    return bool(config.get("guestAccelerators")) or (
        machine is not None and catalog.find("gcp", machine) is not None
    )


def uses_default_compute_account(account: Any) -> bool:
    """Nodes without an explicit account, or with the Compute Engine default one, run as
    it (GKE docs, "Node service accounts": the default is the Compute Engine default SA)."""
    value = str(account or "").strip()
    return value in ("", "default") or bool(_DEFAULT_COMPUTE_SA.match(value))


# ---- Vertex AI Workbench notebooks (C5, S1, C6, D2) --------------------------------------

WORKBENCH_INSTANCE = "gcp:workbench/instance:Instance"


def workbench_setup(resource: Resource) -> dict[str, Any]:
    """A Workbench instance's `gceSetup`, {} when unset (then every field is the API's
    default: Compute Engine default account, an external IP, idle shutdown at 180 min)."""
    setup = resource.inputs.get("gceSetup")
    return setup if isinstance(setup, dict) else {}


def workbench_metadata(resource: Resource) -> dict[str, str]:
    metadata = workbench_setup(resource).get("metadata")
    return {str(k): str(v) for k, v in metadata.items()} if isinstance(metadata, dict) else {}


def workbench_service_account(resource: Resource) -> str | None:
    """The one service account a Workbench instance runs as, or None when unset."""
    accounts = workbench_setup(resource).get("serviceAccounts") or []
    first = accounts[0] if accounts and isinstance(accounts[0], dict) else {}
    return str(first["email"]) if first.get("email") else None


def region_of_location(location: str) -> str:
    """A zone's region (`europe-west4-a` -> `europe-west4`); a region or multi-region as is."""
    return _region_of_location(location)


def workbench_region(resource: Resource) -> str | None:
    """The region of a Workbench instance's zone (`location`)."""
    location = str(resource.inputs.get("location") or "")
    return _region_of_location(location).lower() if location else None


# ---- Compute Engine GPU VMs (gcp.TrainingPool, mig) -------------------------------------

LOG_BUCKET = "gcp:logging/projectBucketConfig:ProjectBucketConfig"
LOG_SINK = "gcp:logging/projectSink:ProjectSink"


@dataclass(frozen=True)
class LogRoute:
    """A log sink into one of the stack's log buckets: what it routes and where it keeps it."""

    sink: Resource
    filter: str
    location: str
    retention_days: int


def log_routes(graph: StackGraph) -> list[LogRoute]:
    """Every sink whose destination is a log bucket of the stack, with that bucket's location
    and retention (a bucket without retentionDays keeps 30 days, as Logging's default)."""
    buckets: dict[str, Resource] = {}
    for bucket in graph.of_type(LOG_BUCKET):
        location = str(bucket.inputs.get("location") or "global")
        buckets[f"locations/{location}/buckets/{bucket.inputs.get('bucketId')}"] = bucket
    routes = []
    for sink in graph.of_type(LOG_SINK):
        destination = str(sink.inputs.get("destination") or "")
        kept = next((b for key, b in buckets.items() if destination.endswith(key)), None)
        if kept is not None:
            routes.append(
                LogRoute(
                    sink,
                    str(sink.inputs.get("filter") or ""),
                    str(kept.inputs.get("location") or "global"),
                    int(kept.inputs.get("retentionDays") or 30),
                )
            )
    return routes


#: The Ops Agent's GPU utilisation metric (agent.googleapis.com/gpu/utilization).
OPS_AGENT_GPU_UTILIZATION = "agent.googleapis.com/gpu/utilization"
_ENV_BLOCK = re.compile(r"<<'AISTACK_ENV'\n(.*?)AISTACK_ENV\n", re.S)


def template_machine(template: Resource) -> str | None:
    """An instance template's machine type (templates name it plainly, or by self-link)."""
    properties = template.inputs.get("properties")
    source = properties if isinstance(properties, dict) else template.inputs
    return _machine_type(source.get("machineType"))


def is_gpu_template(template: Resource) -> bool:
    """An instance template whose VMs have GPUs: declared, or a catalogued GPU machine."""
    from aistack import catalog

    if template.type not in INSTANCE_TEMPLATES:
        return False
    machine = template_machine(template)
    return bool(template.inputs.get("guestAccelerators")) or (
        machine is not None and catalog.find("gcp", machine) is not None
    )


def gpu_templates(graph: StackGraph) -> list[Resource]:
    return [t for t in graph.resources if is_gpu_template(t)]


def startup_script(template: Resource) -> str:
    """The template's startup script: the `startup-script` metadata key, or the provider's
    `metadata_startup_script` argument; "" without one."""
    metadata = template.inputs.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    return str(metadata.get("startup-script") or template.inputs.get("metadataStartupScript") or "")


def node_environment(template: Resource) -> dict[str, str]:
    """The aistack node settings (`AISTACK_*`) the template's startup script writes, as
    aistack.node.render_startup_script renders them; {} for any other script."""
    import shlex

    match = _ENV_BLOCK.search(startup_script(template))
    if not match:
        return {}
    env: dict[str, str] = {}
    for line in match.group(1).splitlines():
        key, _, value = line.partition("=")
        if key.startswith("AISTACK_"):
            words = shlex.split(value) or [""]
            env[key] = words[0]
    return env


def groups_using(graph: StackGraph, template: Resource) -> list[Resource]:
    """The managed instance groups whose versions (or instance_template) name `template`."""
    names = {
        str(template.outputs.get(key))
        for key in ("selfLink", "id", "name")
        if template.outputs.get(key)
    }
    found = []
    for group in graph.resources:
        if group.type not in INSTANCE_GROUP_MANAGERS:
            continue
        versions = group.inputs.get("versions") or []
        used = {str(v.get("instanceTemplate")) for v in versions if isinstance(v, dict)}
        if group.inputs.get("instanceTemplate"):
            used.add(str(group.inputs["instanceTemplate"]))
        if used & names:
            found.append(group)
    return found


def gpu_groups(graph: StackGraph) -> list[tuple[Resource, Resource]]:
    """(group, template) for every managed instance group of GPU VMs."""
    return [(group, t) for t in gpu_templates(graph) for group in groups_using(graph, t)]


def is_serving_template(template: Resource) -> bool:
    """A template of serving VMs (gcp.InferenceTier labels them `aistack-workload:
    inference`): on-demand, autoscaled from a minimum of one, loaded once; the training
    rules on lifetime, empty groups, local SSD and GPU starvation do not apply to them."""
    labels = template.inputs.get("labels")
    return isinstance(labels, dict) and labels.get("aistack-workload") == "inference"


def training_gpu_templates(graph: StackGraph) -> list[Resource]:
    """GPU templates that are not serving templates."""
    return [t for t in gpu_templates(graph) if not is_serving_template(t)]


def training_gpu_groups(graph: StackGraph) -> list[tuple[Resource, Resource]]:
    """(group, template) for every managed instance group of GPU VMs that do not serve."""
    return [(g, t) for g, t in gpu_groups(graph) if not is_serving_template(t)]


def template_region(template: Resource) -> str | None:
    region = template.inputs.get("region")
    if region:
        return str(region)
    match = re.search(r"/regions/([^/]+)/", str(template.outputs.get("id") or ""))
    return match.group(1) if match else None


# ---- serving (gcp.InferenceTier): S1, S3, S5-S7, G2-G4, C6 ---------------------------------

#: URL maps, backend services and Cloud Armor policies of application load balancers.
URL_MAPS = ("gcp:compute/regionUrlMap:RegionUrlMap", "gcp:compute/uRLMap:URLMap")
BACKEND_SERVICES = (
    "gcp:compute/regionBackendService:RegionBackendService",
    "gcp:compute/backendService:BackendService",
)
SECURITY_POLICIES = (
    "gcp:compute/regionSecurityPolicy:RegionSecurityPolicy",
    "gcp:compute/securityPolicy:SecurityPolicy",
)
#: Envoy-based application load balancer schemes (weighted routing, Cloud Armor throttles).
MANAGED_SCHEMES = ("EXTERNAL_MANAGED", "INTERNAL_MANAGED")
#: Where gcp.InferenceTier's model-quality metric lives (G4).
QUALITY_METRIC_PREFIX = "custom.googleapis.com/aistack/"


def serving_templates(graph: StackGraph) -> list[Resource]:
    return [t for t in gpu_templates(graph) if is_serving_template(t)]


def resource_by_reference(
    graph: StackGraph, reference: Any, types: tuple[str, ...]
) -> Resource | None:
    """The resource of `types` whose self link, id or name `reference` is."""
    text = str(reference or "")
    if not text:
        return None
    for res in graph.resources:
        if res.type in types and text in {
            str(res.outputs.get(k)) for k in ("selfLink", "id", "name") if res.outputs.get(k)
        }:
            return res
    return None


def alert_filters(graph: StackGraph) -> list[tuple[Resource, str, dict[str, Any]]]:
    """(policy, filter, threshold condition) for every threshold condition of every alert."""
    found = []
    for policy in graph.resources:
        if policy.type != ALERT_POLICY:
            continue
        for condition in policy.inputs.get("conditions") or []:
            threshold = (condition or {}).get("conditionThreshold") or {}
            if threshold:
                found.append((policy, str(threshold.get("filter") or ""), threshold))
    return found


# ---- datasets, runs, serving nodes and third parties (D5, D6, E3-E5, T2, S2, S4, G5, G6) --

BUCKET_OBJECT = "gcp:storage/bucketObject:BucketObject"
#: Where gcp.DatasetBucket writes what a label cannot hold (source URL, licence, legal basis).
DATASET_MANIFEST = ".aistack/manifest.json"
THIRD_PARTIES_LABEL = gcp_label("aistack:third-party-services", is_key=True)
#: gcp.DatasetBucket's `true` / `false`: whether the dataset holds personal data (D5).
PERSONAL_DATA_LABEL = gcp_label("aistack:personal-data", is_key=True)
_STATEFUL_METADATA = re.compile(r"--stateful-metadata[= ]\"?([^\"\s]+)")


def is_dataset_bucket(bucket: Resource) -> bool:
    """A GCS bucket holding a dataset: gcp.DatasetBucket labels it `aistack-workload:
    data-dataset` and `aistack-dataset-name`."""
    own = labels(bucket)
    return own.get("aistack-workload") == "data-dataset" or "aistack-dataset-name" in own


def bucket_name(bucket: Resource) -> str:
    return str(bucket.outputs.get("name") or bucket.inputs.get("name") or "")


def dataset_manifest(graph: StackGraph, bucket: Resource) -> dict[str, Any] | None:
    """The dataset manifest object in `bucket` (`.aistack/manifest.json`), parsed; None
    without one or when it is not a JSON object. pulumi-gcp marks `content` secret."""
    import json

    from aistack.queries import revealed

    name = bucket_name(bucket)
    for obj in graph.of_type(BUCKET_OBJECT):
        if obj.inputs.get("bucket") != name or obj.inputs.get("name") != DATASET_MANIFEST:
            continue
        try:
            found = json.loads(str(revealed(obj.inputs.get("content")) or ""))
        except ValueError:
            return None
        return found if isinstance(found, dict) else None
    return None


def startup_files(template: Resource) -> dict[str, str]:
    """The files an aistack startup script unpacks (its `AISTACK_FILES` block, as the
    serving nodes of both clouds pack it), by name; {} for any other script."""
    import binascii
    import tarfile

    # The packer's own reader: both clouds' serving nodes are rendered by it.
    from aistack.node.serving import unpack_files

    script = startup_script(template)
    if "<<'AISTACK_FILES'" not in script:
        return {}
    try:
        return unpack_files(script)
    except (binascii.Error, tarfile.TarError, OSError, UnicodeDecodeError, IndexError):
        return {}


def run_commands(graph: StackGraph, group: Resource) -> list[str]:
    """The recorded ways of starting a run in `group`: strings among the stack's outputs and
    the components' registered outputs that create an instance in it
    (`gcloud compute instance-groups managed create-instance <group>`, as
    gcp.TrainingPool.submit_command writes)."""
    name = str(group.inputs.get("name") or group.outputs.get("name") or "")
    if not name:
        return []
    creates = re.compile(rf"instance-groups managed create-instance {re.escape(name)}(\s|$)")
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            if creates.search(value) and value not in found:
                found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    walk(graph.stack_outputs)
    walk(graph.registered_outputs)
    return found


def stateful_metadata_keys(command: str) -> set[str]:
    """The per-instance metadata keys a create-instance command sets (`--stateful-metadata
    key=value,...`): set again when autohealing recreates the VM
    (cloud.google.com/compute/docs/instance-groups/preserved-state)."""
    keys: set[str] = set()
    for match in _STATEFUL_METADATA.finditer(command):
        keys.update(pair.split("=", 1)[0] for pair in match.group(1).split(",") if "=" in pair)
    return keys

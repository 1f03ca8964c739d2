"""GKE node pools, Vertex AI Workbench and Compute Engine GPU VMs: their machines,
startup scripts, groups and the runs started in them."""

from __future__ import annotations

import re
from typing import Any

from aistack.engine.graph import Resource, StackGraph
from aistack.queries.gcp.common import (
    INSTANCE_GROUP_MANAGERS,
    INSTANCE_TEMPLATES,
    NODE_POOL,
    _machine_type,
    _region_of_location,
)

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


#: How a create-instance command sets per-instance metadata.
_STATEFUL_METADATA = re.compile(r"--stateful-metadata[= ]\"?([^\"\s]+)")


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

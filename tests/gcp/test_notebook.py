"""gcp.Notebook: a private Workbench instance that stops when idle, runs as its own account,
in the dataset bucket's region, with CMEK disks kept on destroy."""

from __future__ import annotations

import pytest

from aistack import gcp
from aistack.engine.gcp_cloud import SimulatedGcpError, missing_api_dependencies
from aistack.errors import ConfigError
from tests._harness.shared_graphs import shared
from tests.gcp.conftest import GOVERNANCE, PROJECT, run_stack

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("gcp-notebook")

INSTANCE = "gcp:workbench/instance:Instance"
DATASET = {
    "name": "imagenet",
    "version": "2024-01",
    "source": "https://example.com/imagenet",
    "licence": "CC-BY-4.0",
}


def stack(governance, notebook=None, *, region="europe-west4", bucket_region=None, net=None):
    """A team's network (with a notebook tier), dataset bucket and one notebook."""

    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        ids = gcp.WorkloadIdentity("ids", {"governance": governance}, services=apis)
        data = gcp.DatasetBucket(
            "data",
            {
                "kind": "dataset",
                "region": bucket_region or region,
                "governance": governance,
                "dataset": DATASET,
            },
            services=apis,
        )
        network = gcp.Network(
            "net",
            {
                "governance": governance,
                "region": region,
                "trainingMachineTypes": ["g2-standard-8"],
                "notebook": True,
                **(net or {}),
            },
            services=apis,
            identity=ids,
        )
        gcp.Notebook(
            "nb", {"governance": governance, **(notebook or {})}, services=apis,
            network=network, bucket=data,
        )  # fmt: skip

    return program


def instance(run, governance, **kwargs):
    graph = run(stack(governance, **kwargs))
    return graph, graph.named("nb-instance")


@pytest.fixture(scope="module")
def default_build():
    """The default notebook's stack and its instance, built once for the module: most tests
    read only this build."""
    with shared(run_stack(stack(dict(GOVERNANCE)))) as graph:
        yield graph, graph.named("nb-instance")


def test_the_notebook_stops_after_an_hour_idle_with_guest_attributes_on(default_build):
    _, nb = default_build
    metadata = nb.inputs["gceSetup"]["metadata"]
    assert metadata["idle-timeout-seconds"] == "3600"
    assert metadata["enable-guest-attributes"] == "true"
    assert nb.inputs["desiredState"] == "ACTIVE"
    assert nb.outputs["state"] == "ACTIVE"


@pytest.mark.parametrize("minutes", [9, 1441])
def test_idle_timeouts_outside_workbenchs_10_to_1440_minutes_are_refused(run, governance, minutes):
    with pytest.raises(ConfigError) as error:
        run(stack(governance, {"idleMinutes": minutes}))
    assert "nb.idleMinutes" in str(error.value)


def test_the_bounds_themselves_are_accepted(run, governance):
    for minutes, seconds in ((10, "600"), (1440, "86400")):
        _, nb = instance(run, governance, notebook={"idleMinutes": minutes})
        assert nb.inputs["gceSetup"]["metadata"]["idle-timeout-seconds"] == seconds


def test_no_external_ip_and_the_private_notebook_subnet(default_build):
    graph, nb = default_build
    setup = nb.inputs["gceSetup"]
    assert setup["disablePublicIp"] is True
    (nic,) = setup["networkInterfaces"]
    assert "accessConfigs" not in nic
    assert nic["subnet"] == graph.named("net-notebook").outputs["selfLink"]
    assert nic["network"] == graph.named("net-vpc").outputs["selfLink"]


def test_shielded_vm_with_secure_boot_vtpm_and_integrity_monitoring(default_build):
    _, nb = default_build
    assert nb.inputs["gceSetup"]["shieldedInstanceConfig"] == {
        "enableSecureBoot": True,
        "enableVtpm": True,
        "enableIntegrityMonitoring": True,
    }


def test_root_is_off_and_the_terminal_on_by_default(run, governance, default_build):
    _, nb = default_build
    metadata = nb.inputs["gceSetup"]["metadata"]
    assert metadata["notebook-disable-root"] == "true"
    assert metadata["notebook-disable-terminal"] == "false"
    _, locked = instance(run, governance, notebook={"allowTerminal": False})
    assert locked.inputs["gceSetup"]["metadata"]["notebook-disable-terminal"] == "true"


def test_the_proxy_stays_registered_so_users_reach_jupyterlab(default_build):
    _, nb = default_build
    assert nb.inputs["disableProxyAccess"] is False
    assert nb.outputs["proxyUri"].endswith("-dot-europe-west4.notebooks.googleusercontent.com")


def test_it_runs_as_the_networks_notebook_account_with_read_and_log_writing_only(default_build):
    graph, nb = default_build
    email = graph.named("ids-notebook").outputs["email"]
    assert nb.inputs["gceSetup"]["serviceAccounts"] == [{"email": email}]
    member = f"serviceAccount:{email}"
    grants = sorted(
        (r.type.rsplit(":", 1)[-1], r.inputs["role"])
        for r in graph.resources
        if r.inputs.get("member") == member
    )
    assert grants == [
        ("BucketIAMMember", "roles/storage.objectViewer"),
        ("IAMMember", "roles/logging.logWriter"),
    ]
    read = next(r for r in graph.resources if r.inputs.get("role") == "roles/storage.objectViewer"
                and r.inputs.get("member") == member)  # fmt: skip
    assert read.inputs["bucket"] == graph.named("data-bucket").outputs["name"]


def test_the_instance_waits_for_its_grants_and_its_apis(default_build):
    graph, nb = default_build
    waits = {graph.by_urn(urn).name for urn in nb.dependencies}
    assert {"nb-log-writer", "data-read-nb", "nb-key-compute-agent"} <= waits
    enabled = {graph.by_urn(u).inputs.get("service") for u in nb.dependencies}
    assert {"notebooks.googleapis.com", "compute.googleapis.com"} <= enabled
    assert missing_api_dependencies(graph) == []


def test_disks_are_cmek_encrypted_with_a_key_the_compute_agent_may_use(default_build):
    graph, nb = default_build
    key = graph.named("nb-key").id
    setup = nb.inputs["gceSetup"]
    for disk in (setup["bootDisk"], setup["dataDisks"]):
        assert disk["diskEncryption"] == "CMEK"
        assert disk["kmsKey"] == key
    grant = graph.named("nb-key-compute-agent")
    assert grant.inputs["cryptoKeyId"] == key
    assert grant.inputs["member"].endswith("@compute-system.iam.gserviceaccount.com")
    # CMEK keys live where the disks do: the instance's region.
    assert graph.named("nb-keyring").inputs["location"] == "europe-west4"


def test_google_managed_encryption_is_an_explicit_opt_out(run, governance):
    graph, nb = instance(run, governance, notebook={"allowGoogleManagedEncryption": True})
    assert nb.inputs["gceSetup"]["bootDisk"]["diskEncryption"] == "GMEK"
    assert not [r for r in graph.resources if r.name.startswith("nb-key")]


def test_the_disks_are_kept_on_destroy_unless_allowed(run, governance, default_build):
    _, nb = default_build
    assert nb.inputs["deletionPolicy"] == "PREVENT"
    assert nb.inputs["enableDeletionProtection"] is True
    assert nb.retain_on_delete
    _, loose = instance(run, governance, notebook={"allowDestroyWithData": True})
    assert loose.inputs["deletionPolicy"] == "DELETE"
    assert loose.inputs["enableDeletionProtection"] is False
    assert not loose.retain_on_delete


def test_governance_labels_the_instance(default_build):
    _, nb = default_build
    labels = nb.inputs["labels"]
    assert labels["aistack-workload"] == "notebook"
    assert labels["aistack-owner"] == "ml-platform"
    assert labels["aistack-allowed-regions"] == "europe-west4_us-central1"


def test_a_gpu_notebook_declares_its_l4_and_picks_a_zone_offering_it(run, governance):
    _, nb = instance(run, governance, notebook={"machineType": "g2-standard-8"})
    assert nb.inputs["gceSetup"]["acceleratorConfigs"] == [{"type": "NVIDIA_L4", "coreCount": "1"}]
    assert nb.inputs["location"] == "europe-west4-a"
    assert "install-nvidia-driver" not in nb.inputs["gceSetup"]["metadata"]


def test_a_zone_that_does_not_offer_the_gpu_is_refused(run, governance):
    # The catalog: europe-west4 offers A3 High (H100) in europe-west4-b only.
    with pytest.raises(ConfigError) as error:
        run(stack(governance, {"machineType": "a3-highgpu-1g", "zone": "europe-west4-c"}))
    assert "nb.zone" in str(error.value)
    assert "europe-west4-b" in str(error.value)
    _, nb = instance(run, governance, notebook={"machineType": "a3-highgpu-1g"})
    assert nb.inputs["location"] == "europe-west4-b"
    assert nb.inputs["gceSetup"]["acceleratorConfigs"][0]["type"] == "NVIDIA_H100_80GB"


def test_a_dataset_bucket_in_another_region_is_refused_before_anything_registers(run, governance):
    with pytest.raises(ConfigError) as error:
        run(stack(governance, bucket_region="us-central1"))
    assert "nb.zone" in str(error.value)
    assert "us-central1" in str(error.value)


def test_a_network_without_a_notebook_tier_is_refused(run, governance):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        ids = gcp.WorkloadIdentity("ids", {"governance": governance}, services=apis)
        network = gcp.Network(
            "net",
            {"governance": governance, "region": "europe-west4",
             "trainingMachineTypes": ["g2-standard-8"]},
            services=apis, identity=ids,
        )  # fmt: skip
        gcp.Notebook("nb", {"governance": governance}, services=apis, network=network)

    with pytest.raises(ConfigError) as error:
        run(program)
    assert "nb.network" in str(error.value)


def test_the_network_is_required(run, governance):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        gcp.Notebook("nb", {"governance": governance}, services=apis)

    with pytest.raises(ConfigError) as error:
        run(program)
    assert "nb.network" in str(error.value)


@pytest.mark.parametrize(
    "metadata, field",
    [
        ({"idle-timeout-seconds": "0"}, "aistack"),
        ({"install-nvidia-driver": "True"}, "reserved"),
    ],
)
def test_metadata_aistack_sets_or_workbench_reserves_is_refused(run, governance, metadata, field):
    with pytest.raises(ConfigError) as error:
        run(stack(governance, {"extraMetadata": metadata}))
    assert "nb.extraMetadata" in str(error.value)
    assert field in str(error.value)


def test_a_single_owner_sets_single_user_access(run, governance):
    _, nb = instance(run, governance, notebook={"owner": "ana@example.com"})
    assert nb.inputs["instanceOwners"] == ["ana@example.com"]


def test_the_simulated_api_answers_in_workbench_formats(default_build):
    _, nb = default_build
    assert nb.id == f"projects/{PROJECT}/locations/europe-west4-a/instances/nb-13d1dc"
    assert nb.outputs["name"] == "nb-13d1dc"
    assert nb.outputs["gceSetup"]["serviceAccounts"][0]["scopes"] == [
        "https://www.googleapis.com/auth/cloud-platform"
    ]


def test_the_simulated_api_refuses_a_regional_location(run):
    import pulumi_gcp as pgcp

    def program():
        pgcp.workbench.Instance("bad", name="bad", location="europe-west4")

    with pytest.raises(SimulatedGcpError, match="not a zone"):
        run(program)


def test_a_gpu_notebook_asks_gpu_quota_for_one_on_demand_vm(run, governance):
    seen = {}

    def with_quota():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        ids = gcp.WorkloadIdentity("ids", {"governance": governance}, services=apis)
        network = gcp.Network(
            "net",
            {"governance": governance, "region": "europe-west4",
             "trainingMachineTypes": ["g2-standard-8"], "notebook": True},
            services=apis, identity=ids,
        )  # fmt: skip
        gpu = gcp.Notebook("gpu", {"governance": governance, "machineType": "g2-standard-8"},
                           services=apis, network=network)  # fmt: skip
        cpu = gcp.Notebook("cpu", {"governance": governance}, services=apis, network=network)
        seen["needs"] = (gpu.quota_needs(), cpu.quota_needs())
        gcp.GpuQuota("quota", {"governance": governance, "contactEmail": "ml@example.com"},
                     services=apis, pools=[gpu, cpu])  # fmt: skip

    graph = run(with_quota)
    (need,), cpu_needs = seen["needs"]
    assert cpu_needs == []
    assert (need.region, need.machine_types, need.max_nodes, need.market) == (
        "europe-west4", ("g2-standard-8",), 1, "on-demand",
    )  # fmt: skip
    preferences = graph.of_type("gcp:cloudquota/sQuotaPreference:SQuotaPreference")
    assert any("L4" in str(p.inputs.get("quotaId")) for p in preferences)


def test_the_stack_answers_workbenchs_domains_with_the_private_google_access_addresses(
    default_build,
):
    """Workbench docs, "Create an instance" -> "Network configuration options"
    (docs.cloud.google.com/gemini-enterprise-agent-platform/notebooks/workbench/instances/
    create#network-options): with the private.googleapis.com VIP, add DNS entries for
    notebooks.cloud.google.com, notebooks.googleapis.com and *.notebooks.cloud.google.com,
    *.notebooks.googleusercontent.com, *.kernels.googleusercontent.com,
    *.notebooks.byoid.googleusercontent.com. The VM has no external IP and the network no
    internet route, so a name left to public DNS is unreachable."""
    graph, _ = default_build
    zones = {
        r.inputs["dnsName"]: r.inputs
        for r in graph.resources
        if r.type == "gcp:dns/managedZone:ManagedZone"
    }
    records = {
        (r.inputs["name"], r.inputs["type"]): r.inputs["rrdatas"]
        for r in graph.resources
        if r.type == "gcp:dns/recordSet:RecordSet"
    }
    private_ips = ["199.36.153.8", "199.36.153.9", "199.36.153.10", "199.36.153.11"]
    for required in (
        "notebooks.cloud.google.com",
        "x.notebooks.cloud.google.com",
        "x.notebooks.googleusercontent.com",
        "x.kernels.googleusercontent.com",
        "x.notebooks.byoid.googleusercontent.com",
        "notebooks.googleapis.com",
    ):
        # The most specific private zone that holds the name answers it (Cloud DNS).
        zone = max((z for z in zones if f"{required}.".endswith(z)), key=len, default=None)
        assert zone is not None, f"no private zone answers {required}"
        assert zones[zone]["visibility"] == "private"
        if zone == "googleapis.com.":
            assert records[("*.googleapis.com.", "CNAME")] == ["private.googleapis.com."]
            continue
        assert records[(zone, "A")] == private_ips, zone
        if required.startswith("x."):
            assert records[(f"*.{zone}", "CNAME")] == [zone]

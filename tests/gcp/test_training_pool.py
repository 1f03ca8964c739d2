"""gcp.TrainingPool (mig): Spot GPU VMs in a group that starts empty, caches on local SSD,
resumes, deletes its own idle VMs, alerts, and keeps its logs in the region."""

from __future__ import annotations

import base64
import gzip
import io
import re
import tarfile

import pytest

from aistack import gcp
from aistack.engine.gcp_cloud import SimulatedGcpError, missing_api_dependencies
from aistack.errors import ConfigError
from tests._harness.shared_graphs import shared
from tests.gcp.conftest import GOVERNANCE, run_stack
from tests.gcp.test_network import ACCOUNTS, TRAINER

# The module on one pytest-xdist worker, so that its module-scoped builds run once.
pytestmark = pytest.mark.xdist_group("gcp-training_pool")

PROJECT = "team-ml-prod"
TEMPLATE = "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate"
GROUP = "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager"
ALERT = "gcp:monitoring/alertPolicy:AlertPolicy"
IMAGE = "europe-west4-docker.pkg.dev/team/train/trainer@sha256:" + "a" * 64
BOOT_IMAGE = (
    "projects/deeplearning-platform-release/global/images/"
    "common-cu129-ubuntu-2204-nvidia-580-v20260909"
)
DATASET = {
    "name": "Support Tickets",
    "version": "2024-06-01",
    "source": "https://internal.example.com/exports/tickets",
    "licence": "proprietary",
    "containsPersonalData": False,
}


def pool_args(governance, **overrides):
    return {
        "governance": governance,
        "region": "europe-west4",
        "machineType": "g2-standard-8",
        "maxNodes": 4,
        "image": IMAGE,
        "sourceImage": BOOT_IMAGE,
        "maxRuntimeMinutes": 720,
        "datasetPrefix": "tickets",
        **overrides,
    }


def stack(governance, seen=None, bucket_region="europe-west4", network=None, **overrides):
    def program():
        apis = gcp.ProjectServices("apis", {"project": PROJECT})
        data = gcp.DatasetBucket(
            "data",
            {"kind": "dataset", "region": bucket_region, "governance": governance,
             "dataset": DATASET},
            services=apis,
        )  # fmt: skip
        ckpt = gcp.DatasetBucket(
            "ckpt",
            {"kind": "checkpoints", "region": bucket_region, "governance": governance},
            services=apis,
        )
        net = gcp.Network(
            "net",
            {
                "governance": governance,
                "region": "europe-west4",
                "trainingMachineTypes": [overrides.get("machineType", "g2-standard-8")],
                "trainingHealthCheckPort": 22,
                **(network or {}),
            },
            services=apis,
            service_accounts=ACCOUNTS,
        )
        pool = gcp.TrainingPool(
            "train",
            pool_args(governance, **overrides),
            services=apis,
            network=net,
            dataset=data,
            checkpoints=ckpt,
        )
        if seen is not None:
            seen["pool"] = pool
            pool.submit_command().apply(lambda c: seen.setdefault("submit", c))

    return program


@pytest.fixture(scope="module")
def default_build():
    """The default Spot pool, its component and its submit command, built once for the
    module: most tests read only this build."""
    seen: dict = {}
    with shared(run_stack(stack(dict(GOVERNANCE), seen))) as graph:
        yield graph, seen


@pytest.fixture
def default_graph(default_build):
    return default_build[0]


def template(graph):
    return graph.named("train-template").inputs


def unpack(startup_script: str) -> dict[str, str]:
    encoded = re.search(r"<<'AISTACK_SCRIPTS'.*?\n(.*?)\nAISTACK_SCRIPTS\n", startup_script, re.S)
    assert encoded
    archive = gzip.decompress(base64.b64decode(encoded.group(1)))
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        return {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers()}


def test_spot_vms_are_deleted_on_preemption_and_stop_for_host_maintenance(default_graph):
    scheduling = template(default_graph)["scheduling"]
    assert scheduling == {
        "provisioningModel": "SPOT",
        "preemptible": True,
        "automaticRestart": False,
        "onHostMaintenance": "TERMINATE",
        "instanceTerminationAction": "DELETE",
        "maxRunDuration": {"seconds": 720 * 60},
    }


def test_on_demand_vms_restart_but_still_stop_for_maintenance_and_end_at_the_limit(run, governance):
    scheduling = template(run(stack(governance, market="on-demand")))["scheduling"]
    assert scheduling["provisioningModel"] == "STANDARD"
    assert scheduling["onHostMaintenance"] == "TERMINATE"
    assert scheduling["instanceTerminationAction"] == "DELETE"
    assert scheduling["maxRunDuration"] == {"seconds": 43200}


def test_gpus_come_with_the_machine_type_and_are_not_declared(default_graph):
    inputs = template(default_graph)
    assert inputs["machineType"] == "g2-standard-8"
    assert not inputs.get("guestAccelerators")


def test_local_ssds_are_375_gb_nvme_scratch_disks_in_the_count_the_machine_takes(run, governance):
    disks = template(run(stack(governance, machineType="g2-standard-24")))["disks"]
    boot, *scratch = disks
    assert boot["boot"] is True and boot["sourceImage"] == BOOT_IMAGE
    assert scratch == [
        {"type": "SCRATCH", "diskType": "local-ssd", "interface": "NVME",
         "diskSizeGb": 375, "autoDelete": True}
    ] * 2  # fmt: skip


def test_machines_with_bundled_local_ssd_declare_none(run, governance):
    seen: dict = {}
    graph = run(stack(governance, seen, machineType="a3-highgpu-8g"))
    assert [d for d in template(graph)["disks"] if d.get("type") == "SCRATCH"] == []
    assert seen["pool"].local_ssds == 16


def test_a_wrong_local_ssd_count_is_refused(run, governance):
    with pytest.raises(ConfigError, match="train.localSsds"):
        run(stack(governance, machineType="g2-standard-24", localSsds=3))
    with pytest.raises(ConfigError, match="bundled"):
        run(stack(governance, machineType="a3-highgpu-8g", localSsds=4))


def test_the_vm_is_shielded_private_os_login_only_and_runs_as_the_training_account(default_graph):
    inputs = template(default_graph)
    assert inputs["shieldedInstanceConfig"] == {
        "enableSecureBoot": True,
        "enableVtpm": True,
        "enableIntegrityMonitoring": True,
    }
    (interface,) = inputs["networkInterfaces"]
    assert "accessConfigs" not in interface and interface["subnetwork"]
    assert inputs["metadata"]["enable-oslogin"] == "TRUE"
    assert inputs["metadata"]["block-project-ssh-keys"] == "TRUE"
    assert inputs["serviceAccount"]["email"] == TRAINER


def test_the_startup_script_is_the_gcp_node_bootstrap_wired_to_the_group(default_graph):
    metadata = template(default_graph)["metadata"]
    script = metadata["startup-script"]
    env = re.search(r"<<'AISTACK_ENV'\n(.*?)AISTACK_ENV\n", script, re.S).group(1)
    assert "AISTACK_CLOUD=gcp\n" in env and "AISTACK_SCHEDULER=mig\n" in env
    assert "AISTACK_INSTANCE_GROUP=train-mig-13d1dc\n" in env
    assert "AISTACK_DATASET_VERSION=2024-06-01\n" in env
    assert re.search(r"AISTACK_DATASET_URI=gs://data-[0-9a-z-]+/tickets\n", env)
    assert re.search(r"AISTACK_CHECKPOINT_URI=gs://ckpt-[0-9a-z-]+/runs\n", env)
    files = unpack(script)
    assert "ops-agent.yaml" in files and "cloudwatch-agent.json" not in files
    assert "gce_delete_through_group" in files["lib.sh"]
    assert metadata["aistack-dataset-version"] == "2024-06-01"
    assert metadata["aistack-image"] == IMAGE


def test_the_group_starts_empty_autoheals_and_keeps_a_running_size(default_graph):
    graph = default_graph
    group = graph.named("train-mig")
    assert group.inputs["targetSize"] == 0
    assert group.inputs["name"] == "train-mig-13d1dc"
    assert group.inputs["autoHealingPolicies"]["initialDelaySec"] == 600
    health = graph.named("train-health")
    assert group.inputs["autoHealingPolicies"]["healthCheck"] == (
        f"projects/{PROJECT}/global/healthChecks/{health.outputs['name']}"
    )
    assert health.inputs["tcpHealthCheck"] == {"port": 22}
    assert set(group.inputs["distributionPolicyZones"]) <= {
        "europe-west4-a", "europe-west4-b", "europe-west4-c"
    }  # fmt: skip
    assert (
        group.inputs["versions"][0]["instanceTemplate"]
        == graph.named("train-template").outputs["selfLink"]
    )


def test_pulumi_up_ignores_the_groups_target_size(run, governance, monkeypatch):
    import aistack.gcp.training_pool as module

    asked: list[dict] = []
    real = module.child_opts

    def spy(parent, **options):
        asked.append(options)
        return real(parent, **options)

    monkeypatch.setattr(module, "child_opts", spy)
    run(stack(governance))
    assert [o["ignore_changes"] for o in asked if "ignore_changes" in o] == [["targetSize"]]


def test_without_a_health_check_rule_on_the_network_the_pool_is_refused(run, governance):
    with pytest.raises(ConfigError, match="trainingHealthCheckPort"):
        run(stack(governance, network={"trainingHealthCheckPort": None}))


def test_the_vm_may_delete_only_itself_through_its_group(default_graph):
    graph = default_graph
    role = graph.named("train-watchdog")
    assert role.inputs["permissions"] == [
        "compute.instanceGroupManagers.get",
        "compute.instanceGroupManagers.update",
        "compute.instances.delete",
    ]
    grant = graph.named("train-watchdog-grant")
    assert grant.inputs["member"] == f"serviceAccount:{TRAINER}"
    expression = grant.inputs["condition"]["expression"]
    assert (
        "instanceGroupManagers/train-mig-13d1dc" in expression
        and '"train-mig-13d1dc-"' in expression
    )


def test_the_pool_must_be_in_its_buckets_region(run, governance):
    with pytest.raises(ConfigError) as error:
        run(stack(governance, bucket_region="us-central1"))
    assert "D2" in str(error.value) and "train.region" in str(error.value)


def test_gke_is_pointed_to_the_node_pool_components(run, governance):
    with pytest.raises(ConfigError, match="gcp.GpuNodePool"):
        run(stack(governance, scheduler="gke"))


def test_an_image_by_tag_and_a_family_boot_image_are_refused(run, governance):
    with pytest.raises(ConfigError) as error:
        run(
            stack(
                governance,
                image="trainer:latest",
                sourceImage="projects/deeplearning-platform-release/global/images/family/x",
            )
        )
    assert "train.image" in str(error.value) and "train.sourceImage" in str(error.value)


def test_alerts_on_gpu_starvation_and_idle_gpus_read_the_ops_agent_metric(default_graph):
    graph = default_graph
    starvation = graph.named("train-gpu-starvation").inputs
    idle = graph.named("train-gpu-idle").inputs
    for policy in (starvation, idle):
        (condition,) = policy["conditions"]
        threshold = condition["conditionThreshold"]
        assert 'metric.type="agent.googleapis.com/gpu/utilization"' in threshold["filter"]
        assert 'metadata.user_labels."aistack-pool"="train"' in threshold["filter"]
        assert threshold["comparison"] == "COMPARISON_LT"
    starve = starvation["conditions"][0]["conditionThreshold"]
    assert starve["thresholdValue"] == 40 and starve["duration"] == "1800s"
    assert starve["aggregations"][0]["crossSeriesReducer"] == "REDUCE_MEAN"
    idle_threshold = idle["conditions"][0]["conditionThreshold"]
    assert idle_threshold["aggregations"][0]["crossSeriesReducer"] == "REDUCE_MAX"
    assert idle_threshold["thresholdValue"] == 5 and idle_threshold["duration"] == "2700s"


def test_logs_go_to_a_regional_bucket_with_a_retention(default_graph):
    graph = default_graph
    bucket = graph.named("train-logs").inputs
    assert bucket["location"] == "europe-west4" and bucket["retentionDays"] == 90
    sink = graph.named("train-log-sink").inputs
    assert sink["destination"] == (
        f"logging.googleapis.com/projects/{PROJECT}/locations/europe-west4/buckets/train-logs-13d1dc"
    )
    assert "train-mig-" in sink["filter"] and sink["uniqueWriterIdentity"] is True


def test_the_submit_command_records_the_run_manifest_and_creates_one_vm(default_build):
    _, seen = default_build
    command = seen["submit"]
    assert "gcloud compute instance-groups managed create-instance train-mig-13d1dc" in command
    assert "--region=europe-west4" in command
    for key in ("aistack-run-id", "aistack-seed", "aistack-code-commit", "aistack-config-hash"):
        assert key in command
    assert "aistack-dataset-version=2024-06-01" in command
    assert "/$RUN_ID/manifest.json" in command and IMAGE in command


def test_quota_needs_report_the_pools_maximum(default_build):
    _, seen = default_build
    (need,) = seen["pool"].quota_needs()
    assert (need.region, need.max_nodes, need.market) == ("europe-west4", 4, "spot")
    assert need.machine_types == ("g2-standard-8",)


def test_every_resource_waits_for_the_apis_it_calls(default_graph):
    assert missing_api_dependencies(default_graph) == []


def test_the_simulated_compute_api_refuses_what_compute_engine_refuses(run):
    import pulumi
    import pulumi_gcp as g

    def bad(**scheduling):
        def program():
            g.compute.RegionInstanceTemplate(
                "t",
                region="europe-west4",
                machine_type="g2-standard-8",
                disks=[g.compute.RegionInstanceTemplateDiskArgs(boot=True, source_image="x")],
                scheduling=g.compute.RegionInstanceTemplateSchedulingArgs(**scheduling),
                opts=pulumi.ResourceOptions(),
            )

        return program

    with pytest.raises(SimulatedGcpError, match="automaticRestart false"):
        run(bad(provisioning_model="SPOT", automatic_restart=True, on_host_maintenance="TERMINATE"))
    with pytest.raises(SimulatedGcpError, match="live"):
        run(bad(on_host_maintenance="MIGRATE"))
    with pytest.raises(SimulatedGcpError, match="DELETE"):
        run(
            bad(
                on_host_maintenance="TERMINATE",
                instance_termination_action="STOP",
                max_run_duration=g.compute.RegionInstanceTemplateSchedulingMaxRunDurationArgs(
                    seconds=60
                ),
            )
        )


# A stand-in `gcloud` for the submit command: `describe` answers the group's target size
# from $STUB/size (as `--format='value(targetSize)'` prints it: the bare number), or fails
# when $STUB/describe.rc exists; `storage cp -` keeps what it reads; every call is logged.
GCLOUD_STAND_IN = r"""#!/bin/bash
printf '%s\n' "$*" >>"$STUB/calls"
case "$1 $2 $3 $4" in
  "compute instance-groups managed describe")
    if [[ -f $STUB/describe.rc ]]; then echo "ERROR: (gcloud) denied" >&2; exit 1; fi
    cat "$STUB/size" ;;
  "storage cp - "*) cat >"$STUB/manifest" ;;
esac
exit 0
"""
GIT_STAND_IN = "#!/bin/bash\necho 0123456789abcdef0123456789abcdef01234567\n"
SUBMIT_TOOLS = ("bash", "sh", "dash", "cat", "sha256sum", "cut")


def submit(command: str, tmp_path, shell: str, *, size: int | None = None, describe_fails=False):
    """Runs the rendered submit command in a real shell whose PATH holds only the stand-ins
    and a few coreutils (so the host's own gcloud is never reached)."""
    import shutil
    import subprocess

    bin_dir, stub = tmp_path / "bin", tmp_path / "stub"
    bin_dir.mkdir()
    stub.mkdir()
    for name, text in (("gcloud", GCLOUD_STAND_IN), ("git", GIT_STAND_IN)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    for tool in SUBMIT_TOOLS:
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    if size is not None:
        (stub / "size").write_text(f"{size}\n")
    if describe_fails:
        (stub / "describe.rc").write_text("1")
    (tmp_path / "config.yaml").write_text("lr: 0.1\n")
    env = {"PATH": str(bin_dir), "STUB": str(stub), "RUN_ID": "run7", "SEED": "42"}
    done = subprocess.run(
        [str(bin_dir / shell), "-c", command],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    calls = (stub / "calls").read_text().splitlines() if (stub / "calls").exists() else []
    return done, calls


SHELLS = [s for s in ("bash", "dash") if __import__("shutil").which(s)]


@pytest.mark.parametrize("shell", SHELLS)
def test_a_submit_at_max_nodes_is_refused_and_creates_nothing(default_build, tmp_path, shell):
    """The group has no autoscaler: the submit command is where capacity is added, so it
    reads the target size first and refuses the fifth VM of a pool of maxNodes 4."""
    command = default_build[1]["submit"]
    done, calls = submit(command, tmp_path, shell, size=4)
    assert done.returncode != 0
    assert "refused: group train-mig-13d1dc already has 4 of at most 4 VMs" in done.stderr
    assert "maxNodes of training pool train" in done.stderr
    assert "raise maxNodes of pool train" in done.stderr and "pulumi up" in done.stderr
    assert calls == [
        "compute instance-groups managed describe train-mig-13d1dc --region=europe-west4 "
        "--format=value(targetSize)"
    ]  # no manifest written, no VM created


@pytest.mark.parametrize("shell", SHELLS)
def test_a_submit_below_max_nodes_writes_the_manifest_and_creates_one_vm(
    default_build, tmp_path, shell
):
    command = default_build[1]["submit"]
    done, calls = submit(command, tmp_path, shell, size=3)
    assert done.returncode == 0, done.stderr
    assert [c.split()[:3] for c in calls] == [
        ["compute", "instance-groups", "managed"],
        ["storage", "cp", "-"],
        ["compute", "instance-groups", "managed"],
    ]
    assert calls[0].split()[3] == "describe" and calls[2].split()[3] == "create-instance"
    assert calls[1].split()[3].endswith("/runs/run7/manifest.json")
    assert "--instance=train-mig-13d1dc-run7" in calls[-1]
    assert "aistack-run-id=run7,aistack-seed=42," in calls[-1]
    assert '"run_id":"run7","seed":"42"' in (tmp_path / "stub" / "manifest").read_text()


def test_a_submit_that_cannot_read_the_group_size_creates_nothing(default_build, tmp_path):
    command = default_build[1]["submit"]
    done, calls = submit(command, tmp_path, "bash", describe_fails=True)
    assert done.returncode != 0 and "denied" in done.stderr
    assert not any("create-instance" in c or "storage cp" in c for c in calls)


def test_the_submit_command_carries_the_pools_max_nodes(run, governance):
    seen: dict = {}
    run(stack(governance, seen, maxNodes=2))
    assert "AISTACK_MAX_NODES=2 &&" in seen["submit"]


def test_the_boot_disk_is_encrypted_with_a_key_the_compute_agent_may_use(default_graph):
    # Compute Engine docs, "Protect resources by using Cloud KMS keys": the Compute Engine
    # service agent (service-<NUMBER>@compute-system) encrypts the disks and must hold
    # Encrypter/Decrypter on the key before a VM is created from the template.
    template = default_graph.named("train-template")
    (boot,) = [d for d in template.inputs["disks"] if d.get("boot")]
    key = boot["diskEncryptionKey"]["kmsKeySelfLink"]
    assert "/locations/europe-west4/keyRings/" in key
    grant = default_graph.named("train-disks-key-compute")
    assert grant.inputs["cryptoKeyId"] == key
    assert grant.inputs["member"].endswith("@compute-system.iam.gserviceaccount.com")
    assert grant.urn in template.dependencies

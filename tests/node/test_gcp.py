"""The node scripts on GCP (AISTACK_CLOUD=gcp), under stubs: the GCP metadata server's real
answers (conftest GCE_STUB, cited there), `gcloud` copying to and from a bucket store on
disk, and local SSDs found by their /dev/disk/by-id symlinks.

What the issue asks the scripts to prove: resume after preemption (the checkpoint is
flushed on the notice and a fresh node pulls it), a second boot that downloads nothing,
idle deletion through the managed instance group and the wall clock.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from aistack.node import ops_agent_config, render_startup_script

from .conftest import GCE_NAME, Node

GROUP = "train-mig"
DATASETS = "gs://team-datasets/datasets/imagenet"
CHECKPOINTS = "gs://team-checkpoints/run-7"
#: gcloud's argv for deleting this VM through its regional group (`gcloud compute
#: instance-groups managed delete-instances`, which lowers the group's target size).
DELETE = [
    "compute",
    "instance-groups",
    "managed",
    "delete-instances",
    GROUP,
    f"--instances={GCE_NAME}",
    "--region=us-central1",
    "--quiet",
]


@pytest.fixture
def gcp_node(node: Node) -> Node:
    node.on_gcp(
        AISTACK_INSTANCE_GROUP=GROUP,
        AISTACK_CHECKPOINT_DIR=str(node.cache / "checkpoints"),
        AISTACK_CHECKPOINT_URI=CHECKPOINTS,
        AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS="0",
        AISTACK_TRAINER_PROCESS_NAME="torchrun",
    )
    return node


def metadata_requests(node: Node) -> list[list[str]]:
    return [call for call in node.calls("curl") if "/computeMetadata/v1/" in call[-1]]


def bucket(node: Node, uri: str) -> Path:
    return Path(node.env["GCS_ROOT"]) / uri.removeprefix("gs://")


def boot(node: Node, minutes_ago: int) -> None:
    (node.root / "proc-stat").write_text(f"btime {int(time.time()) - minutes_ago * 60}\n")


# --- the spot watch: preemption and host maintenance ---------------------------------


def test_no_notice_while_preempted_reads_false_and_maintenance_none(gcp_node):
    gcp_node.run("spot-watch.sh", "--once")
    assert gcp_node.calls("gcloud") == gcp_node.calls("pkill") == []
    paths = [call[-1].rsplit("/v1/", 1)[1] for call in metadata_requests(gcp_node)]
    assert paths == ["instance/preempted", "instance/maintenance-event"]
    # Every request carries the header the GCP metadata server insists on, none the IMDS
    # session token (there is none on GCP).
    assert all("Metadata-Flavor: Google" in call for call in metadata_requests(gcp_node))
    assert not [call for call in gcp_node.calls("curl") if "PUT" in call]


def test_a_preemption_signals_the_trainer_and_flushes_the_checkpoint_to_the_bucket_once(
    gcp_node,
):
    step = gcp_node.cache / "checkpoints" / "step-900.pt"
    step.parent.mkdir(parents=True)
    step.write_text("weights")
    gcp_node.gce("instance/preempted", "TRUE")
    gcp_node.run("spot-watch.sh", "--once")
    gcp_node.run("spot-watch.sh", "--once")
    assert gcp_node.calls("pkill") == [["--signal", "USR1", "-x", "--", "torchrun"]]
    assert gcp_node.calls("gcloud") == [
        ["storage", "rsync", "--recursive", str(step.parent), CHECKPOINTS]
    ]
    assert (bucket(gcp_node, CHECKPOINTS) / "step-900.pt").read_text() == "weights"
    assert "notice: interruption preempted" in gcp_node.log("spot-watch")


def test_a_host_maintenance_stop_is_an_interruption_a_migration_is_not(gcp_node):
    gcp_node.gce("instance/maintenance-event", "MIGRATE_ON_HOST_MAINTENANCE")
    gcp_node.run("spot-watch.sh", "--once")
    assert gcp_node.calls("gcloud") == []
    gcp_node.gce("instance/maintenance-event", "TERMINATE_ON_HOST_MAINTENANCE")
    gcp_node.run("spot-watch.sh", "--once")
    assert gcp_node.calls("pkill") and gcp_node.calls("gcloud")
    assert "maintenance TERMINATE_ON_HOST_MAINTENANCE" in gcp_node.log("spot-watch")


RUNS = "gs://team-checkpoints/runs"


def run_vm(root: Path, shared_bin: Path, gcs_root: str, run_id: str | None) -> Node:
    """A VM of the group booted by bootstrap.sh with the pool's env file, created by the
    submit command with the stateful metadata aistack-run-id (None: created otherwise)."""
    root.mkdir()
    vm = Node(root, shared_bin)
    env_file = root / "node.env"
    env_file.write_text(f"AISTACK_CHECKPOINT_URI='{RUNS}'\n")
    vm.on_gcp(
        AISTACK_INSTANCE_GROUP=GROUP,
        GCS_ROOT=gcs_root,
        AISTACK_ENV_FILE=str(env_file),
        AISTACK_SERVICE_MANAGER="systemd",
        AISTACK_SYSTEMD_DIR=str(root / "systemd"),
        AISTACK_MAX_RUNTIME_MINUTES="600",
        AISTACK_CHECKPOINT_DIR=str(vm.cache / "checkpoints"),
        AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS="0",
        AISTACK_TRAINER_PROCESS_NAME="torchrun",
    )
    if run_id is not None:
        vm.gce("instance/attributes/aistack-run-id", run_id)
    vm.run("bootstrap.sh")
    return vm


def test_resume_after_preemption_the_replacement_pulls_its_run_s_flushed_checkpoint(
    gcp_node, tmp_path
):
    gcs = gcp_node.env["GCS_ROOT"]
    # The run's VM boots, trains, and flushes on the preemption notice ...
    first = run_vm(tmp_path / "first", gcp_node.shared_bin, gcs, "run-7")
    (first.cache / "checkpoints" / "step-900.pt").write_text("weights")
    first.gce("instance/preempted", "TRUE")
    first.run("spot-watch.sh", "--once")
    assert (bucket(first, f"{RUNS}/run-7") / "step-900.pt").read_text() == "weights"
    # ... and the group's replacement (autohealing keeps the run id), a new VM with empty
    # local SSDs, finds that checkpoint where its trainer looks at boot.
    fresh = run_vm(tmp_path / "fresh", gcp_node.shared_bin, gcs, "run-7")
    assert (fresh.cache / "checkpoints" / "step-900.pt").read_text() == "weights"
    assert [
        "storage", "rsync", "--recursive", f"{RUNS}/run-7", str(fresh.cache / "checkpoints")
    ] in fresh.calls("gcloud")  # fmt: skip


def test_a_run_restores_only_its_own_checkpoints_and_the_trainer_learns_its_run_id(
    gcp_node, tmp_path
):
    gcs = gcp_node.env["GCS_ROOT"]
    for run, step in (("run-7", "step-900.pt"), ("run-8", "step-100.pt")):
        (Path(gcs) / "team-checkpoints" / "runs" / run).mkdir(parents=True)
        (Path(gcs) / "team-checkpoints" / "runs" / run / step).write_text(run)
    vm = run_vm(tmp_path / "vm", gcp_node.shared_bin, gcs, "run-8")
    assert sorted(p.name for p in (vm.cache / "checkpoints").iterdir()) == ["step-100.pt"]
    # Every later script sources the env file: its last lines name the run's prefix.
    env = (tmp_path / "vm" / "node.env").read_text()
    assert env.endswith(f"AISTACK_RUN_ID='run-8'\nAISTACK_CHECKPOINT_URI='{RUNS}/run-8'\n")
    # A second bootstrap with the same file does not nest the prefix.
    vm.run("bootstrap.sh")
    assert f"{RUNS}/run-8/run-8" not in (tmp_path / "vm" / "node.env").read_text()


def test_a_vm_without_a_run_id_keeps_its_checkpoints_under_its_own_name(gcp_node, tmp_path):
    vm = run_vm(tmp_path / "vm", gcp_node.shared_bin, gcp_node.env["GCS_ROOT"], None)
    (vm.cache / "checkpoints" / "step-1.pt").write_text("w")
    vm.gce("instance/preempted", "TRUE")
    vm.run("spot-watch.sh", "--once")
    assert (bucket(vm, f"{RUNS}/{GCE_NAME}") / "step-1.pt").read_text() == "w"
    assert f"run {GCE_NAME}: checkpoints under {RUNS}/{GCE_NAME}" in vm.log("bootstrap")


# --- ending the node through its managed instance group ------------------------------


def test_an_idle_vm_deletes_itself_through_its_group_so_the_group_does_not_recreate_it(
    gcp_node,
):
    gcp_node.answer("nvidia-smi", out="0\n1\n")
    gcp_node.answer("who", out="")
    for _ in range(3):
        gcp_node.run("idle-watchdog.sh", "--once", AISTACK_IDLE_MINUTES="3")
    assert gcp_node.calls("gcloud") == [DELETE]
    assert gcp_node.calls("shutdown") == [] and gcp_node.calls("aws") == []
    # The region came from instance/zone; the name from instance/name.
    asked = {call[-1].rsplit("/v1/", 1)[1] for call in metadata_requests(gcp_node)}
    assert {"instance/name", "instance/zone"} <= asked


def test_past_the_wall_clock_the_vm_is_deleted_through_its_group(gcp_node):
    boot(gcp_node, minutes_ago=61)
    gcp_node.run("wallclock-limit.sh", "--once", AISTACK_MAX_RUNTIME_MINUTES="60")
    assert gcp_node.calls("gcloud") == [DELETE]
    gcp_node.clear_calls()
    boot(gcp_node, minutes_ago=1)  # a reboot does not reset the clock
    gcp_node.run("wallclock-limit.sh", "--once", AISTACK_MAX_RUNTIME_MINUTES="60")
    assert gcp_node.calls("gcloud") == []  # asked already, less than 10 minutes ago


def test_a_configured_region_is_used_as_is(gcp_node):
    boot(gcp_node, minutes_ago=61)
    gcp_node.run(
        "wallclock-limit.sh", "--once", AISTACK_MAX_RUNTIME_MINUTES="60",
        AISTACK_REGION="europe-west4",
    )  # fmt: skip
    assert gcp_node.calls("gcloud")[0][-2] == "--region=europe-west4"


def test_when_the_group_deletion_fails_the_vm_halts(gcp_node):
    gcp_node.stub("gcloud", "exit 1")
    boot(gcp_node, minutes_ago=61)
    gcp_node.run("wallclock-limit.sh", "--once", AISTACK_MAX_RUNTIME_MINUTES="60")
    assert gcp_node.calls("shutdown") == [["-h", "now"]]
    assert "deleting through the instance group failed" in gcp_node.log("wallclock-limit")


def test_without_a_group_name_the_vm_halts_rather_than_keep_billing(gcp_node):
    boot(gcp_node, minutes_ago=61)
    gcp_node.run(
        "wallclock-limit.sh", "--once", AISTACK_MAX_RUNTIME_MINUTES="60",
        AISTACK_INSTANCE_GROUP="",
    )  # fmt: skip
    assert gcp_node.calls("gcloud") == []
    assert gcp_node.calls("shutdown") == [["-h", "now"]]


# --- dataset cache on local SSD -------------------------------------------------------


def seed_dataset(node: Node, version: str = "v3") -> None:
    shard = bucket(node, DATASETS) / version / "shard-0000.tar"
    shard.parent.mkdir(parents=True)
    shard.write_text("images")


def sync(node: Node, **env: str):
    return node.run(
        "dataset-sync.sh",
        AISTACK_DATASET_URI=DATASETS,
        AISTACK_DATASET_VERSION="v3",
        AISTACK_SYNC_RETRY_SECONDS="0",
        **env,
    )


def test_the_dataset_version_syncs_from_cloud_storage_and_a_second_boot_downloads_nothing(
    gcp_node,
):
    seed_dataset(gcp_node)
    sync(gcp_node)
    dest = gcp_node.cache / "datasets" / "imagenet" / "v3"
    assert gcp_node.calls("gcloud") == [
        ["storage", "rsync", "--recursive", f"{DATASETS}/v3/", str(dest)]
    ]
    assert gcp_node.calls("aws") == []
    assert (dest / "shard-0000.tar").read_text() == "images"
    assert (dest / ".aistack-complete").read_text().startswith("version=v3\n")
    gcp_node.clear_calls()
    result = sync(gcp_node)
    assert gcp_node.calls("gcloud") == []
    assert "cache hit" in result.stderr


def test_a_failed_sync_leaves_no_marker_and_fails(gcp_node):
    gcp_node.answer("gcloud-rsync", rc=1)
    result = gcp_node.run(
        "dataset-sync.sh",
        check=False,
        AISTACK_DATASET_URI=DATASETS,
        AISTACK_DATASET_VERSION="v3",
        AISTACK_SYNC_ATTEMPTS="2",
        AISTACK_SYNC_RETRY_SECONDS="0",
    )
    assert result.returncode != 0
    assert len(gcp_node.calls("gcloud")) == 2
    assert not (gcp_node.cache / "datasets" / "imagenet" / "v3" / ".aistack-complete").exists()


def test_an_s3_uri_is_refused_on_gcp(gcp_node):
    result = gcp_node.run(
        "dataset-sync.sh",
        check=False,
        AISTACK_DATASET_URI="s3://team-datasets/imagenet",
        AISTACK_DATASET_VERSION="v3",
    )
    assert result.returncode == 2
    assert "must be gs://bucket/prefix" in result.stderr


def local_ssds(node: Node, count: int) -> None:
    """Local SSDs as Compute Engine names them: /dev/disk/by-id/google-local-nvme-ssd-N,
    symlinks to ../../nvme0nK (the boot disk is nvme0n1 on NVMe machine types)."""
    by_id = node.dev / "disk" / "by-id"
    by_id.mkdir(parents=True)
    (by_id / "google-persistent-disk-0").symlink_to("../../nvme0n1")
    for index in range(count):
        (node.dev / f"nvme0n{index + 2}").touch()
        (by_id / f"google-local-nvme-ssd-{index}").symlink_to(f"../../nvme0n{index + 2}")
    (by_id / "google-local-nvme-ssd-0-part1").symlink_to("../../nvme0n2p1")
    node.env["AISTACK_DISK_BY_ID"] = str(by_id)


def test_the_local_ssds_are_striped_into_raid0_and_the_boot_disk_is_left_alone(gcp_node):
    local_ssds(gcp_node, 4)
    gcp_node.run("nvme-cache.sh")
    members = [str(gcp_node.dev / f"nvme0n{k}") for k in range(2, 6)]
    md = str(gcp_node.dev / "md0")
    assert gcp_node.calls("mdadm") == [
        ["--create", md, "--run", "--level=0", "--raid-devices=4", *members]
    ]
    assert gcp_node.calls("mount") == [["-o", "noatime", md, str(gcp_node.cache)]]
    assert gcp_node.calls("lsblk")[0] != ["-dn", "-o", "NAME,MODEL"]


def test_one_local_ssd_is_formatted_directly(gcp_node):
    local_ssds(gcp_node, 1)
    gcp_node.run("nvme-cache.sh")
    assert gcp_node.calls("mdadm") == []
    assert gcp_node.calls("mount") == [
        ["-o", "noatime", str(gcp_node.dev / "nvme0n2"), str(gcp_node.cache)]
    ]


def test_without_local_ssds_the_cache_is_a_directory(gcp_node):
    gcp_node.run("nvme-cache.sh", AISTACK_DISK_BY_ID=str(gcp_node.root / "no-such-dir"))
    assert gcp_node.calls("mdadm") == gcp_node.calls("mount") == []
    assert gcp_node.cache.is_dir()


# --- the rendered startup script, end to end ------------------------------------------


def test_the_rendered_startup_script_boots_twice_and_the_second_boot_downloads_nothing(
    node, tmp_path
):
    """The comment-stripped GCP copies in the startup script work: install, Ops Agent,
    local SSD cache, dataset sync; Compute Engine runs the script at every boot."""
    install = node.root / "opt" / "aistack"
    env_path = node.root / "etc" / "aistack" / "node.env"
    agent_path = node.root / "etc" / "google-cloud-ops-agent" / "config.yaml"
    config = {
        "cloud": "gcp",
        "instanceGroup": GROUP,
        "maxRuntimeMinutes": 600,
        "cacheDir": str(node.cache),
        "datasetUri": DATASETS,
        "datasetVersion": "v3",
        "checkpointUri": CHECKPOINTS,
        "idleMinutes": 30,
        "spotPollSeconds": 2,
    }
    script = render_startup_script(config, install_dir=str(install), env_file=str(env_path))
    (node.root / "startup-script").write_text(script)
    (node.root / "gcs").mkdir()
    seed_dataset(node)
    local_ssds(node, 2)
    node.answer("nvidia-smi", out="97\n")
    env = {
        "AISTACK_SERVICE_MANAGER": "systemd",
        "AISTACK_SYSTEMD_DIR": str(node.root / "systemd"),
        "AISTACK_OPS_AGENT_CONFIG": str(agent_path),
    }
    node.run("startup-script", script_dir=node.root, **env)
    assert "AISTACK_CLOUD=gcp\n" in env_path.read_text()
    assert f"AISTACK_INSTANCE_GROUP={GROUP}\n" in env_path.read_text()
    assert sorted(p.name for p in install.iterdir()) == sorted(
        ["lib.sh", "bootstrap.sh", "wallclock-limit.sh", "spot-watch.sh", "idle-watchdog.sh",
         "nvme-cache.sh", "dataset-sync.sh", "ops-agent.yaml"]
    )  # fmt: skip
    assert json.loads(agent_path.read_text()) == ops_agent_config(config)
    assert ["restart", "google-cloud-ops-agent"] in node.calls("systemctl")
    assert node.calls("mdadm")
    marker = node.cache / "datasets" / "imagenet" / "v3" / ".aistack-complete"
    assert marker.read_text().startswith("version=v3\n")
    assert node.calls("aws") == []
    # Second boot: the VM restarted (its local SSD kept, as after a host event it
    # survives); the dataset version is a cache hit, nothing is downloaded.
    node.clear_calls()
    node.answer("mountpoint", rc=0)
    node.run("startup-script", script_dir=node.root, **env)
    downloads = [c for c in node.calls("gcloud") if c[:2] == ["storage", "rsync"]]
    assert [c for c in downloads if c[-2].startswith(DATASETS)] == []
    assert "cache hit" in node.log("dataset-sync")


# --- settings and rendering -------------------------------------------------------------

GCP = {
    "cloud": "gcp",
    "instanceGroup": GROUP,
    "maxRuntimeMinutes": 720,
    "datasetUri": DATASETS,
    "datasetVersion": "v3",
    "checkpointUri": CHECKPOINTS,
}


def test_scheduler_defaults_to_the_clouds_own_and_the_other_clouds_are_refused():
    from aistack.errors import ConfigError
    from aistack.node import NodeBootstrapConfig

    assert NodeBootstrapConfig.parse(GCP).scheduler == "mig"
    assert NodeBootstrapConfig.parse({"maxRuntimeMinutes": 1, "logGroup": "g"}).scheduler == "asg"
    with pytest.raises(ConfigError) as gcp_asg:
        NodeBootstrapConfig.parse({**GCP, "scheduler": "asg"})
    assert "scheduler" in str(gcp_asg.value) and "'mig'" in str(gcp_asg.value)
    with pytest.raises(ConfigError) as aws_mig:
        NodeBootstrapConfig.parse({"maxRuntimeMinutes": 1, "logGroup": "g", "scheduler": "mig"})
    assert "'asg' or 'batch'" in str(aws_mig.value)


def test_a_mig_node_needs_its_group_and_gs_uris_in_a_gcp_region():
    from aistack.errors import ConfigError
    from aistack.node import NodeBootstrapConfig

    with pytest.raises(ConfigError) as error:
        NodeBootstrapConfig.parse(
            {**GCP, "instanceGroup": None, "datasetUri": "s3://b/x", "region": "us-east-1"}
        )
    text = str(error.value)
    assert "instanceGroup" in text and "datasetUri" in text and "region" in text
    assert NodeBootstrapConfig.parse({**GCP, "region": "europe-west4"}).region == "europe-west4"
    with pytest.raises(ConfigError):
        NodeBootstrapConfig.parse({"maxRuntimeMinutes": 1, "logGroup": "g", "datasetUri": DATASETS})


def test_an_aws_node_needs_a_log_group_a_gcp_node_gets_a_default_log_name():
    from aistack.errors import ConfigError
    from aistack.node import DEFAULT_GCP_LOG_NAME, NodeBootstrapConfig

    with pytest.raises(ConfigError, match="log_group"):
        NodeBootstrapConfig.parse({"maxRuntimeMinutes": 1})
    assert NodeBootstrapConfig.parse(GCP).log_group == DEFAULT_GCP_LOG_NAME


def test_the_gcp_environment_names_the_cloud_and_the_group_and_aws_is_unchanged():
    from aistack.node import NodeBootstrapConfig

    env = NodeBootstrapConfig.parse(GCP).environment()
    assert env["AISTACK_CLOUD"] == "gcp" and env["AISTACK_INSTANCE_GROUP"] == GROUP
    assert env["AISTACK_SCHEDULER"] == "mig"
    assert "AISTACK_LOG_GROUP" not in env and "AISTACK_METRICS_NAMESPACE" not in env
    aws = NodeBootstrapConfig.parse({"maxRuntimeMinutes": 1, "logGroup": "g"}).environment()
    assert "AISTACK_CLOUD" not in aws and "AISTACK_INSTANCE_GROUP" not in aws


def test_each_cloud_renders_with_its_own_function():
    from aistack.errors import ConfigError
    from aistack.node import render_user_data

    with pytest.raises(ConfigError, match="render_startup_script"):
        render_user_data(GCP)
    with pytest.raises(ConfigError, match="render_user_data"):
        render_startup_script({"maxRuntimeMinutes": 1, "logGroup": "g"})


def test_the_startup_script_fits_the_metadata_value_limit_and_is_deterministic():
    from aistack.node import STARTUP_SCRIPT_LIMIT_BYTES

    first = render_startup_script(GCP)
    assert render_startup_script(GCP) == first
    assert len(first.encode()) <= STARTUP_SCRIPT_LIMIT_BYTES
    assert first.startswith("#!/bin/bash\n") and "render_startup_script" in first


def test_the_ops_agent_ships_the_aistack_logs_and_dcgm_is_opt_in():
    nvml = ops_agent_config(GCP)
    assert nvml == {
        "logging": {
            "receivers": {
                "aistack_node": {
                    "type": "files",
                    "include_paths": ["/var/log/aistack/*.log", "/var/log/aistack/*.stderr"],
                }
            },
            "service": {"pipelines": {"aistack_node": {"receivers": ["aistack_node"]}}},
        }
    }
    dcgm = ops_agent_config({**GCP, "gpuMetrics": "dcgm"})
    assert dcgm["metrics"]["receivers"] == {"dcgm": {"type": "dcgm", "receiver_version": 2}}
    assert dcgm["metrics"]["service"]["pipelines"]["dcgm"] == {"receivers": ["dcgm"]}


def test_aws_nodes_get_the_scripts_without_the_gcp_blocks():
    from aistack.node import SCRIPTS, script

    for name in SCRIPTS:
        aws, source = script(name, "aws"), script(name, None)
        code = "\n".join(line for line in aws.splitlines() if not line.lstrip().startswith("#"))
        assert "gcloud" not in code and not re.search(r"AISTACK_CLOUD\b", code)
        assert "# [gcp]" not in [line.strip() for line in aws.splitlines()]
        markers = [line.strip() for line in source.splitlines()]
        assert markers.count("# [gcp]") == markers.count("# [/gcp]")
        if "# [gcp]" in source:
            assert "AISTACK_CLOUD" in source


def test_the_aws_copies_pass_shellcheck_too(tmp_path):
    import shutil
    import subprocess

    from aistack.node import SCRIPTS, script

    shellcheck = shutil.which("shellcheck")
    assert shellcheck
    for name in SCRIPTS:
        (tmp_path / name).write_text(script(name, "aws"))
    result = subprocess.run(
        [shellcheck, "-x", "--severity=style", *SCRIPTS],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_training_pools_startup_script_deletes_the_vm_through_its_own_group(node):
    """gcp.TrainingPool's rendered startup script, booted under stubs: past the wall clock
    the installed scripts delete this VM through the pool's group, in the pool's region."""
    from aistack import engine
    from tests.gcp.conftest import GOVERNANCE
    from tests.gcp.test_training_pool import PROJECT, stack

    graph = engine.run(
        stack(dict(GOVERNANCE)), config={"gcp:project": PROJECT, "gcp:region": "europe-west4"}
    )
    script = graph.named("train-template").inputs["metadata"]["startup-script"]
    install = node.root / "opt" / "aistack"
    # The node's paths, inside the sandbox (the env file's values win over the process's).
    script = (
        script.replace("/opt/aistack", str(install))
        .replace("/etc/aistack", str(node.root / "etc"))
        .replace("=/mnt/nvme", f"={node.cache}")
    )
    assert not re.search(r"(?<![\w/-])/(etc|opt|mnt)/", script.split("AISTACK_SCRIPTS")[0])
    (node.root / "startup-script").write_text(script)
    dataset = re.search(r"AISTACK_DATASET_URI=gs://(\S+)", script).group(1)
    shard = node.root / "gcs" / dataset / "2024-06-01" / "shard-0000.tar"
    shard.parent.mkdir(parents=True)
    shard.write_text("tickets")
    node.answer("nvidia-smi", out="97\n")
    env = {
        "AISTACK_SERVICE_MANAGER": "systemd",
        "AISTACK_SYSTEMD_DIR": str(node.root / "systemd"),
        "AISTACK_OPS_AGENT_CONFIG": str(node.root / "ops-agent.yaml"),
        "AISTACK_CACHE_DIR": str(node.cache),
    }
    node.run("startup-script", script_dir=node.root, **env)
    assert (node.cache / "datasets" / "tickets" / "2024-06-01" / "shard-0000.tar").exists()
    boot(node, minutes_ago=721)
    node.clear_calls()
    node.run(
        "wallclock-limit.sh",
        "--once",
        script_dir=install,
        AISTACK_ENV_FILE=str(node.root / "etc" / "node.env"),
    )
    group = graph.named("train-mig").inputs["name"]  # ends in the stack's digest
    assert node.calls("gcloud") == [
        ["compute", "instance-groups", "managed", "delete-instances", group,
         f"--instances={GCE_NAME}", "--region=europe-west4", "--quiet"]
    ]  # fmt: skip

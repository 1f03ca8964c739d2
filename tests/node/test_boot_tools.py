"""A GCP boot image that lacks a tool the node needs: the boot says so, never silently.

The real scripts run against the sandbox's stand-ins with the tool taken away. What each
image ships (and so which of these can happen on a real boot) is in docs/real-boot.md.
The marker the monitoring reads on GCP is a guest attribute under `aistack/`, written with
a PUT to the metadata server (cloud.google.com/compute/docs/metadata/
manage-guest-attributes: `curl -X PUT --data VALUE
http://metadata.google.internal/computeMetadata/v1/instance/guest-attributes/NS/KEY -H
"Metadata-Flavor: Google"`; it needs `enable-guest-attributes=TRUE` in the VM's metadata,
which gcp.TrainingPool's template sets).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import SCRIPTS_DIR, Node

GUEST_ATTRIBUTES = "http://metadata.google.internal/computeMetadata/v1/instance/guest-attributes"


@pytest.fixture
def vm(node: Node) -> Node:
    """A training VM of a group: the Ops Agent's unit exists (systemctl cat answers) and
    docker is installed, unless a test takes them away."""
    node.on_gcp(
        AISTACK_INSTANCE_GROUP="train-mig",
        AISTACK_SERVICE_MANAGER="systemd",
        AISTACK_SYSTEMD_DIR=str(node.root / "systemd"),
        AISTACK_ENV_FILE=str(node.root / "node.env"),
        AISTACK_OPS_AGENT_CONFIG=str(node.root / "etc" / "ops-agent.yaml"),
    )
    (node.root / "node.env").write_text("AISTACK_MAX_RUNTIME_MINUTES=600\n")
    node.stub("docker")
    return node


def boot(node: Node, *, check: bool = True):
    """bootstrap.sh from an install dir that, like a rendered startup script's, holds the
    packed Ops Agent config next to the scripts."""
    install = node.root / "opt"
    if not install.exists():
        shutil.copytree(SCRIPTS_DIR, install)
        (install / "ops-agent.yaml").write_text("{}\n")
    return node.run("bootstrap.sh", check=check, script_dir=Path(install))


def without_the_ops_agent(node: Node) -> None:
    # `systemctl cat UNIT` exits 1 with "No files found for UNIT" when the unit does not
    # exist (systemctl(1)); every other systemctl call succeeds as before.
    node.stub("systemctl", 'if [[ $1 == cat ]]; then echo "No files found for $2" >&2; exit 1; fi')


def attribute_puts(node: Node) -> dict[str, str]:
    """The guest attributes the VM wrote, by key: {key: value} from the PUTs it sent."""
    written = {}
    for call in node.calls("curl"):
        if "PUT" in call and call[-1].startswith(GUEST_ATTRIBUTES + "/aistack/"):
            written[call[-1].rsplit("/", 1)[1]] = call[call.index("--data") + 1]
    return written


def test_a_vm_without_gcloud_fails_its_boot_and_marks_itself_in_guest_attributes(vm):
    vm.hide("gcloud")
    result = boot(vm, check=False)
    assert result.returncode == 3, "the startup script exits non-zero"
    assert "AISTACK BOOT FAILED: gcloud: the Google Cloud CLI is not installed" in result.stderr
    assert "Fix: use a boot image with it" in result.stderr
    assert attribute_puts(vm) == {"boot-status": "failed", "missing-tools": "gcloud"}
    # Every PUT carries the header the metadata server requires.
    puts = [call for call in vm.calls("curl") if "PUT" in call]
    assert all("Metadata-Flavor: Google" in call for call in puts)
    assert vm.calls("lsblk") == [], "nothing after the failed check runs"


def test_a_vm_without_the_ops_agent_boots_degraded_and_says_so(vm):
    without_the_ops_agent(vm)
    boot(vm)
    log = vm.log("bootstrap")
    assert "AISTACK BOOT DEGRADED: google-cloud-ops-agent: the Ops Agent is not installed" in log
    assert "packages.cloud.google.com, is outside this network's private zones" in log
    assert attribute_puts(vm) == {
        "boot-status": "degraded",
        "missing-tools": "google-cloud-ops-agent",
    }
    # Not configured: a restart of a unit that does not exist would only fail.
    assert ["restart", "google-cloud-ops-agent"] not in vm.calls("systemctl")
    assert "bootstrap complete" in log


def test_a_guest_attribute_the_server_refuses_is_logged_not_fatal(vm):
    """With guest attributes off the metadata server refuses the PUT; the boot's own
    line and state files still say what is missing."""
    without_the_ops_agent(vm)
    boot(vm)
    # The stand-in answers 404 for keys it does not serve.
    assert "could not publish the boot status" in vm.log("bootstrap")
    assert (vm.state / "missing-tools").read_text() == "google-cloud-ops-agent\n"


def test_a_vm_with_the_ops_agent_and_every_tool_writes_no_marker(vm):
    boot(vm)
    assert attribute_puts(vm) == {}
    assert ["cat", "google-cloud-ops-agent.service"] in vm.calls("systemctl")
    assert ["restart", "google-cloud-ops-agent"] in vm.calls("systemctl")


def test_local_ssds_without_mdadm_stop_the_boot_before_the_dataset_sync(vm):
    """g2-standard-48 has 4 local SSDs: without mdadm they cannot be one cache."""
    by_id = vm.dev / "disk" / "by-id"
    by_id.mkdir(parents=True)
    for index in range(4):
        (vm.dev / f"nvme0n{index + 2}").touch()
        (by_id / f"google-local-nvme-ssd-{index}").symlink_to(f"../../nvme0n{index + 2}")
    vm.env["AISTACK_DISK_BY_ID"] = str(by_id)
    vm.hide("mdadm")
    with (vm.root / "node.env").open("a") as env:
        env.write("AISTACK_DATASET_URI=gs://team-datasets/datasets/imagenet\n")
    result = boot(vm, check=False)
    assert result.returncode == 3
    assert (
        "AISTACK BOOT FAILED: mdadm: mdadm is not installed: the 4 local disks cannot be "
        "striped" in result.stderr
    )
    assert attribute_puts(vm) == {"boot-status": "failed", "missing-tools": "mdadm"}
    assert vm.calls("mount") == [] and vm.calls("mkfs.xfs") == []
    assert not [c for c in vm.calls("gcloud") if c[:2] == ["storage", "rsync"]]


def test_one_local_ssd_needs_no_mdadm(vm):
    by_id = vm.dev / "disk" / "by-id"
    by_id.mkdir(parents=True)
    (vm.dev / "nvme0n2").touch()
    (by_id / "google-local-nvme-ssd-0").symlink_to("../../nvme0n2")
    vm.env["AISTACK_DISK_BY_ID"] = str(by_id)
    vm.hide("mdadm")
    boot(vm)
    assert vm.calls("mount") == [["-o", "noatime", str(vm.dev / "nvme0n2"), str(vm.cache)]]


def test_an_unreadable_gpu_is_reported_at_every_idle_check_on_gcp(vm):
    """idle-watchdog.sh keeps such a VM (busy on a guess) and says so each time."""
    vm.answer("nvidia-smi", rc=9)
    vm.answer("who", out="")
    for _ in range(2):
        vm.run("idle-watchdog.sh", "--once", AISTACK_IDLE_MINUTES="1")
    log = vm.log("idle-watchdog")
    assert log.count("AISTACK BOOT DEGRADED: nvidia-smi: GPU utilisation unreadable") == 2
    assert "only the wall clock (T5) does" in log
    assert attribute_puts(vm) == {"boot-status": "degraded", "missing-tools": "nvidia-smi"}
    assert vm.calls("gcloud") == [], "an unreadable GPU never ends the VM"


def test_an_unreadable_gpu_publishes_the_metric_on_aws(node):
    node.answer("nvidia-smi", rc=9)
    node.answer("who", out="")
    node.run("idle-watchdog.sh", "--once", AISTACK_IDLE_MINUTES="1")
    assert node.calls("aws") == [
        ["cloudwatch", "put-metric-data", "--namespace", "aistack/node",
         "--metric-name", "NodeToolMissing", "--unit", "Count", "--value", "1",
         "--dimensions", "InstanceId=i-0123456789abcdef0,Tool=nvidia-smi"]
    ]  # fmt: skip
    assert node.calls("shutdown") == []

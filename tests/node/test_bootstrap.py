"""bootstrap.sh: guards first, then the CloudWatch agent, the NVMe cache and the dataset."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from aistack.node import cloudwatch_agent_config

from .conftest import BASH, SCRIPTS_DIR

STORE = "Amazon EC2 NVMe Instance Storage"
GUARDS = ("wallclock-limit", "spot-watch", "idle-watchdog")


def prepare(node) -> None:
    node.answer("lsblk", out=f"nvme0n1 Amazon Elastic Block Store\nnvme1n1 {STORE}\n")
    node.stub("amazon-cloudwatch-agent-ctl")
    node.stub("docker")
    node.env.update(
        AISTACK_ENV_FILE=str(node.root / "node.env"),
        AISTACK_SYSTEMD_DIR=str(node.root / "systemd"),
        AISTACK_CLOUDWATCH_CONFIG=str(node.root / "etc" / "cloudwatch-agent.json"),
    )
    (node.root / "node.env").write_text(
        "AISTACK_MAX_RUNTIME_MINUTES=600\n"
        "AISTACK_LOG_GROUP=/aistack/training\n"
        "AISTACK_DATASET_URI=s3://team-datasets/datasets/imagenet\n"
        "AISTACK_DATASET_VERSION=v3\n"
    )


def test_bootstrap_starts_the_guards_as_systemd_units_then_caches_and_syncs(node):
    prepare(node)
    node.run("bootstrap.sh", AISTACK_SERVICE_MANAGER="systemd")
    units = [f"aistack-{guard}.service" for guard in GUARDS]
    assert node.calls("systemctl") == [["daemon-reload"], ["enable", "--now", *units]]
    for guard in GUARDS:
        unit = (node.root / "systemd" / f"aistack-{guard}.service").read_text()
        assert f"ExecStart={BASH} {SCRIPTS_DIR}/{guard}.sh\n" in unit
        assert f"Environment=AISTACK_ENV_FILE={node.root / 'node.env'}" in unit
        assert "Restart=always" in unit and "WantedBy=multi-user.target" in unit
    # The NVMe cache was mounted and the dataset synced into it.
    assert node.calls("mount") == [["-o", "noatime", str(node.dev / "nvme1n1"), str(node.cache)]]
    marker = node.cache / "datasets" / "imagenet" / "v3" / ".aistack-complete"
    assert marker.read_text().startswith("version=v3\n")
    # The guards were started before the slow steps.
    order = [call[0] for call in node.calls()]
    assert order.index("systemctl") < order.index("lsblk") < order.index("aws")
    # The bootstrap released its hold on the node.
    assert list((node.state / "hold").iterdir()) == []


def test_the_cloudwatch_agent_gets_the_same_config_python_renders(node):
    prepare(node)
    node.run("bootstrap.sh", AISTACK_SERVICE_MANAGER="systemd")
    config_path = node.root / "etc" / "cloudwatch-agent.json"
    assert node.calls("amazon-cloudwatch-agent-ctl") == [
        ["-a", "fetch-config", "-m", "ec2", "-s", "-c", f"file:{config_path}"]
    ]
    written = json.loads(config_path.read_text())
    expected = cloudwatch_agent_config(
        {"maxRuntimeMinutes": 600, "logGroup": "/aistack/training", "cacheDir": str(node.cache)},
        log_dir=str(node.logs),
    )
    assert written == expected


def test_without_the_agent_the_boot_goes_on_degraded_and_publishes_the_gap(node):
    """No agent: the node still trains, but says so in a line, a state file and the
    NodeToolMissing metric, which the node role may write in its own namespace."""
    prepare(node)
    node.unstub("amazon-cloudwatch-agent-ctl")
    node.run("bootstrap.sh", AISTACK_SERVICE_MANAGER="systemd")
    log = node.log("bootstrap")
    assert "AISTACK BOOT DEGRADED: amazon-cloudwatch-agent: the CloudWatch agent is not" in log
    assert "Fix: use an image with it, or add amazon-cloudwatch-agent" in log
    assert (node.state / "boot-status").read_text() == "degraded\n"
    assert [
        "cloudwatch", "put-metric-data", "--namespace", "aistack/node",
        "--metric-name", "NodeToolMissing", "--unit", "Count", "--value", "1",
        "--dimensions", "InstanceId=i-0123456789abcdef0,Tool=amazon-cloudwatch-agent",
    ] in node.calls("aws")  # fmt: skip
    assert (node.cache / "datasets" / "imagenet" / "v3" / ".aistack-complete").exists()


def test_a_failed_dataset_sync_fails_the_bootstrap_after_the_guards_started(node):
    prepare(node)
    node.answer("aws-s3-sync", rc=1)
    result = node.run(
        "bootstrap.sh",
        check=False,
        AISTACK_SERVICE_MANAGER="systemd",
        AISTACK_SYNC_ATTEMPTS="1",
    )
    assert result.returncode != 0
    assert ["daemon-reload"] in node.calls("systemctl")
    assert list((node.state / "hold").iterdir()) == []


def test_without_systemd_the_guards_run_as_background_loops(node):
    prepare(node)
    (node.root / "proc-stat").write_text(f"btime {int(time.time())}\n")
    node.answer("nvidia-smi", out="0\n")
    node.run(
        "bootstrap.sh",
        AISTACK_SERVICE_MANAGER="background",
        AISTACK_MAX_ITERATIONS="1",
        AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS="0",
    )
    assert node.calls("systemctl") == []
    pids = [int((node.state / f"{guard}.pid").read_text()) for guard in GUARDS]
    deadline = time.monotonic() + 10
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(running(pid) for pid in pids), "AISTACK_MAX_ITERATIONS=1 must end the loops"
    assert "deadline: 600 minutes after" in node.log("wallclock-limit")
    # One check ran: busy while bootstrap held the node, or idle once it had finished.
    assert re.search(
        r"(busy: held by bootstrap.pid|idle: check 1 of 30)$", node.log("idle-watchdog")
    )
    asked = [call[-1] for call in node.calls("curl")]
    assert "http://169.254.169.254/latest/meta-data/spot/instance-action" in asked
    assert node.calls("aws") == [
        ["configure", "set", "default.s3.max_concurrent_requests", "64"],
        [
            "s3",
            "sync",
            "s3://team-datasets/datasets/imagenet/v3/",
            str(node.cache / "datasets" / "imagenet" / "v3"),
            "--only-show-errors",
        ],
    ], "no guard may end the node on its first check"


def running(pid: int) -> bool:
    """Whether `pid` is alive; a zombie nobody reaped has finished."""
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_batch_hosts_run_only_the_spot_watch(node):
    """Batch owns a host's life; a host clock would kill jobs that started late on it."""
    prepare(node)
    with (node.root / "node.env").open("a") as env:
        env.write("AISTACK_SCHEDULER=batch\n")
    node.run("bootstrap.sh", AISTACK_SERVICE_MANAGER="systemd")
    assert node.calls("systemctl") == [
        ["daemon-reload"],
        ["enable", "--now", "aistack-spot-watch.service"],
    ]
    assert not (node.root / "systemd" / "aistack-wallclock-limit.service").exists()
    assert not (node.root / "systemd" / "aistack-idle-watchdog.service").exists()


# ---- the ECS-optimised AL2023 GPU AMI (AWS Batch hosts) ---------------------------------------
#
# Platform fact: that AMI is built from al2023-ami-minimal (aws/amazon-ecs-ami,
# release-al2023.auto.pkrvars.hcl: source_ami_al2023 = "al2023-ami-minimal-...") plus
#   packages_al2023 = "amazon-efs-utils amazon-ssm-agent amazon-ec2-net-utils acpid
#                      iproute-tc ec2-instance-connect"
# (aws/amazon-ecs-ami variables.pkr.hcl, commit 014e02d0fcf9a2a77675291556f486ea132b2613),
# docker, ecs-init and the NVIDIA driver: no aws CLI, no CloudWatch agent, no mdadm. AL2023
# ships those as the packages awscli-2, amazon-cloudwatch-agent and mdadm.
ECS_AL2023_PACKAGES = (
    "amazon-efs-utils",
    "amazon-ssm-agent",
    "amazon-ec2-net-utils",
    "acpid",
    "iproute-tc",
    "ec2-instance-connect",
)
HOST_PACKAGES = "awscli-2 amazon-cloudwatch-agent mdadm"


def ecs_al2023_host(node, *, mirror_reachable: bool = True) -> None:
    """A Batch host: none of aws, mdadm, the CloudWatch agent; dnf installs them."""
    prepare(node)
    node.hide("aws", "mdadm", "amazon-cloudwatch-agent-ctl")
    installs = (
        # What `dnf install` leaves behind: the commands appear on PATH.
        f"cp {node.shared_bin}/aws {node.shared_bin}/mdadm {node.bin}/\n"
        f"printf '#!{BASH}\\nexit 0\\n' >{node.bin}/amazon-cloudwatch-agent-ctl\n"
        f"chmod +x {node.bin}/amazon-cloudwatch-agent-ctl\n"
        if mirror_reachable
        # dnf's status when no repository answers (dnf(8): 1 on an error).
        else "echo 'Error: Failed to download metadata for repo' >&2; exit 1\n"
    )
    node.stub("dnf", installs)
    with (node.root / "node.env").open("a") as env:
        env.write(f"AISTACK_SCHEDULER=batch\nAISTACK_HOST_PACKAGES='{HOST_PACKAGES}'\n")


def test_the_ecs_al2023_ami_lacks_what_the_host_packages_install():
    for package in HOST_PACKAGES.split():
        assert package not in ECS_AL2023_PACKAGES


def test_a_batch_host_without_the_aws_cli_installs_it_before_the_cache_and_sync(node):
    ecs_al2023_host(node)
    node.run("bootstrap.sh", AISTACK_SERVICE_MANAGER="systemd")
    assert node.calls("dnf") == [["install", "-y", "-q", *HOST_PACKAGES.split()]]
    order = [call[0] for call in node.calls()]
    assert order.index("dnf") < order.index("lsblk") < order.index("aws")
    assert "CloudWatch agent started" in node.log("bootstrap")
    assert (node.cache / "datasets" / "imagenet" / "v3" / ".aistack-complete").exists()


def test_a_host_left_without_the_aws_cli_fails_its_boot_visibly(node):
    ecs_al2023_host(node, mirror_reachable=False)
    result = node.run("bootstrap.sh", check=False, AISTACK_SERVICE_MANAGER="systemd")
    assert result.returncode == 3
    # cloud-init copies user data's stderr to the console output and cloud-init-output.log.
    line = "AISTACK BOOT FAILED: aws: the aws CLI is not installed"
    assert line in result.stderr and line in node.log("bootstrap")
    assert "Fix: use an image with it, or set AISTACK_HOST_PACKAGES" in result.stderr
    assert (node.state / "boot-status").read_text() == "failed\n"
    assert (node.state / "missing-tools").read_text() == "aws\n"
    assert node.calls("lsblk") == [], "nothing after the failed install runs"
    # The guards started first, so the node still ends itself.
    assert ["daemon-reload"] in node.calls("systemctl")


def test_without_host_packages_a_missing_aws_cli_still_fails_the_boot(node):
    prepare(node)
    node.hide("aws")
    result = node.run("bootstrap.sh", check=False, AISTACK_SERVICE_MANAGER="systemd")
    assert result.returncode == 3
    assert "AISTACK BOOT FAILED: aws:" in result.stderr
    assert "AISTACK_HOST_PACKAGES is empty" in node.log("bootstrap")


# ---- tools the boot image may lack: the boot says so, never silently ---------------------
#
# What each image provides, with the sources, is in docs/real-boot.md.


def test_a_node_whose_nvidia_driver_does_not_load_fails_its_boot_before_the_cache(node):
    """nvidia-smi exits 9 when it cannot reach the driver, which is what an unsigned
    (DKMS-built) module under Secure Boot leaves (docs/real-boot.md). The boot stops with
    status 3, names the tool and the fix, and downloads nothing onto a useless node."""
    prepare(node)
    node.answer(
        "nvidia-smi",
        out="NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
        rc=9,
    )
    result = node.run("bootstrap.sh", check=False, AISTACK_SERVICE_MANAGER="systemd")
    assert result.returncode == 3
    assert (
        "AISTACK BOOT FAILED: nvidia-smi: nvidia-smi exited 9: NVIDIA-SMI has failed"
        in result.stderr
    )
    assert "Fix: use a boot image whose NVIDIA driver is built in" in result.stderr
    assert (node.state / "missing-tools").read_text() == "nvidia-smi\n"
    assert ["daemon-reload"] in node.calls("systemctl"), "the guards started first"
    assert node.calls("lsblk") == [] and not (node.cache / "datasets").exists()


def test_a_node_without_nvidia_smi_fails_its_boot(node):
    prepare(node)
    node.hide("nvidia-smi")
    result = node.run("bootstrap.sh", check=False, AISTACK_SERVICE_MANAGER="systemd")
    assert result.returncode == 3
    assert "AISTACK BOOT FAILED: nvidia-smi: nvidia-smi is not installed" in result.stderr


def test_without_docker_the_boot_goes_on_degraded(node):
    prepare(node)
    node.hide("docker")
    node.run("bootstrap.sh", AISTACK_SERVICE_MANAGER="systemd")
    assert "AISTACK BOOT DEGRADED: docker: docker is not installed" in node.log("bootstrap")
    assert (node.state / "missing-tools").read_text() == "docker\n"
    assert (node.cache / "datasets" / "imagenet" / "v3" / ".aistack-complete").exists()


def test_a_failure_after_a_degradation_leaves_the_boot_failed(node):
    prepare(node)
    node.hide("docker", "nvidia-smi")
    result = node.run("bootstrap.sh", check=False, AISTACK_SERVICE_MANAGER="systemd")
    assert result.returncode == 3
    assert (node.state / "boot-status").read_text() == "failed\n"
    assert (node.state / "missing-tools").read_text() == "docker nvidia-smi\n"


def test_a_healthy_node_reports_nothing(node):
    prepare(node)
    node.run("bootstrap.sh", AISTACK_SERVICE_MANAGER="systemd")
    assert "AISTACK BOOT" not in node.log("bootstrap")
    assert not (node.state / "boot-status").exists()
    assert [c for c in node.calls("aws") if c[0] == "cloudwatch"] == []

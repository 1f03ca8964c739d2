"""render_user_data, NodeBootstrapConfig and the packaged files."""

from __future__ import annotations

import base64
import email
import gzip
import io
import re
import subprocess
import tarfile

import pytest

from aistack.errors import AistackError, ConfigError
from aistack.node import (
    FILES,
    SCRIPTS,
    USER_DATA_LIMIT_BYTES,
    NodeBootstrapConfig,
    cloudwatch_agent_config,
    render_user_data,
    script,
)

from .conftest import BASH

BASE = {
    "maxRuntimeMinutes": 720,
    "logGroup": "/aistack/training",
    "datasetUri": "s3://team-datasets/datasets/imagenet",
    "datasetVersion": "v3",
    "checkpointUri": "s3://team-checkpoints/run-7",
}


def code_lines(text: str) -> list[str]:
    return [
        line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]


def unpack(user_data: str) -> dict[str, tuple[str, int]]:
    encoded = re.search(r"<<'AISTACK_SCRIPTS'.*?\n(.*?)\nAISTACK_SCRIPTS\n", user_data, re.S)
    assert encoded, "the scripts archive is missing from the user data"
    archive = gzip.decompress(base64.b64decode(encoded.group(1)))
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        return {
            member.name: (tar.extractfile(member).read().decode(), member.mode)
            for member in tar.getmembers()
        }


def env_file(user_data: str) -> str:
    found = re.search(r"<<'AISTACK_ENV'\n(.*?)AISTACK_ENV\n", user_data, re.S)
    assert found
    return found.group(1)


def test_user_data_is_a_shell_script_carrying_every_script_and_the_settings():
    user_data = render_user_data(BASE)
    assert user_data.startswith("#!/bin/bash\n")
    assert "set -euo pipefail\n" in user_data
    assert "cat >/etc/aistack/node.env <<'AISTACK_ENV'\n" in user_data
    assert user_data.endswith(
        "export AISTACK_ENV_FILE=/etc/aistack/node.env\nexec bash /opt/aistack/bootstrap.sh\n"
    )
    env = env_file(user_data)
    for line in (
        "AISTACK_SCHEDULER=asg",
        "AISTACK_MAX_RUNTIME_MINUTES=720",
        "AISTACK_IDLE_MINUTES=30",
        "AISTACK_IDLE_GPU_UTIL_PERCENT=5",
        "AISTACK_DATASET_URI=s3://team-datasets/datasets/imagenet",
        "AISTACK_DATASET_VERSION=v3",
        "AISTACK_CHECKPOINT_DIR=/mnt/nvme/checkpoints",
        "AISTACK_CHECKPOINT_URI=s3://team-checkpoints/run-7",
        "AISTACK_LOG_GROUP=/aistack/training",
        "AISTACK_TRAINER_CONTAINER_LABEL=aistack.checkpoint-signal",
    ):
        assert f"{line}\n" in env
    files = unpack(user_data)
    assert set(files) == set(FILES)
    for name in FILES:
        text, mode = files[name]
        assert code_lines(text) == code_lines(script(name)), f"{name} lost code in packing"
        assert mode == (0o755 if name.endswith(".sh") and name != "lib.sh" else 0o644)
    assert files["cloudwatch-agent.json"][0] == script("cloudwatch-agent.json")


def test_user_data_fits_the_ec2_limit_and_is_deterministic():
    first = render_user_data(BASE, multipart=True)
    assert len(first.encode()) <= USER_DATA_LIMIT_BYTES
    assert render_user_data(BASE, multipart=True) == first, "a re-render must not change"


def test_multipart_user_data_is_the_mime_document_aws_batch_requires():
    plain = render_user_data(BASE)
    document = render_user_data(BASE, multipart=True)
    headers = document.split("\n\n", 1)[0].splitlines()
    assert headers[0] == "MIME-Version: 1.0"
    boundary = re.fullmatch(r'Content-Type: multipart/mixed; boundary="(.+)"', headers[1])
    assert boundary
    assert document.rstrip("\n").endswith(f"--{boundary.group(1)}--")
    message = email.message_from_string(document)
    assert message.is_multipart()
    assert message.get_content_type() == "multipart/mixed"
    parts = message.get_payload()
    assert len(parts) == 1
    assert parts[0].get_content_type() == "text/x-shellscript"
    assert parts[0].get_payload() == plain


def test_values_are_quoted_so_the_shell_reads_them_back_exactly():
    command = """aws s3 sync "$AISTACK_CHECKPOINT_DIR" 's3://x/y z' && echo "it's $(date)" ; `id`"""
    user_data = render_user_data({**BASE, "checkpointFlushCommand": command})
    result = subprocess.run(
        [BASH, "-c", 'set -a; eval "$ENV_TEXT"; printf %s "$AISTACK_CHECKPOINT_FLUSH_CMD"'],
        env={"ENV_TEXT": env_file(user_data), "PATH": "/nonexistent"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == command


def test_the_rendered_user_data_runs_end_to_end(node):
    """The comment-stripped copies in the user data work: install, bootstrap, cache, sync."""
    install = node.root / "opt" / "aistack"
    env_path = node.root / "etc" / "aistack" / "node.env"
    config = {**BASE, "cacheDir": str(node.cache)}
    user_data = render_user_data(config, install_dir=str(install), env_file=str(env_path))
    (node.root / "user-data").write_text(user_data)
    node.answer("lsblk", out="nvme1n1 Amazon EC2 NVMe Instance Storage\n")
    node.stub("amazon-cloudwatch-agent-ctl")
    node.run(
        "user-data",
        script_dir=node.root,
        AISTACK_SERVICE_MANAGER="systemd",
        AISTACK_SYSTEMD_DIR=str(node.root / "systemd"),
        AISTACK_CLOUDWATCH_CONFIG=str(node.root / "etc" / "cloudwatch-agent.json"),
    )
    assert sorted(p.name for p in install.iterdir()) == sorted(FILES)
    assert env_path.read_text() == env_file(user_data)
    assert node.calls("systemctl")[-1][:2] == ["enable", "--now"]
    assert node.calls("mount") == [["-o", "noatime", str(node.dev / "nvme1n1"), str(node.cache)]]
    assert ["configure", "set", "default.s3.max_concurrent_requests", "64"] in node.calls("aws")
    marker = node.cache / "datasets" / "imagenet" / "v3" / ".aistack-complete"
    assert marker.read_text().startswith("version=v3\n")
    assert node.calls("amazon-cloudwatch-agent-ctl")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("datasetUri", "https://bucket.s3.amazonaws.com/x"),
        ("datasetUri", "s3://Bad_Bucket/x"),
        ("datasetUri", "s3://bucket/with space"),
        ("checkpointUri", "gs://bucket/ckpt"),
        ("checkpointUri", "s3://ab"),
    ],
)
def test_a_uri_that_is_not_s3_is_a_config_error_naming_the_field(field, value):
    with pytest.raises(ConfigError) as caught:
        render_user_data({**BASE, field: value})
    assert caught.value.fields == [field]
    assert "s3://bucket/prefix" in str(caught.value)


def test_every_bad_setting_is_reported_at_once():
    with pytest.raises(ConfigError) as caught:
        NodeBootstrapConfig.parse(
            {
                "logGroup": "/aistack/training",
                "idleMinutes": 2,
                "idleGpuUtilPercent": 101,
                "datasetUri": "s3://team-datasets/imagenet",
                "cacheDir": "relative/path",
                "scheduler": "slurm",
                "trainerProcessName": "a-process-name-too-long",
                "region": "moon-1",
            }
        )
    assert sorted(caught.value.fields) == sorted(
        [
            "maxRuntimeMinutes",
            "idleMinutes",
            "idleGpuUtilPercent",
            "dataset_version",  # not given, so pydantic names it by its Python name
            "cacheDir",
            "scheduler",
            "trainerProcessName",
            "region",
        ]
    )


@pytest.mark.parametrize("version", ["latest", "LATEST", "../v1", "v 1"])
def test_the_dataset_version_must_be_pinned_and_path_safe(version):
    with pytest.raises(ConfigError) as caught:
        NodeBootstrapConfig.parse({**BASE, "datasetVersion": version})
    assert caught.value.fields == ["datasetVersion"]


def test_a_multi_line_flush_command_is_refused():
    with pytest.raises(ConfigError) as caught:
        render_user_data({**BASE, "checkpointFlushCommand": "sync\nAISTACK_ENV\nrm -rf /"})
    assert caught.value.fields == ["checkpointFlushCommand"]


def test_user_data_over_the_ec2_limit_is_a_config_error():
    with pytest.raises(ConfigError) as caught:
        render_user_data({**BASE, "checkpointFlushCommand": "true " * 3000})
    assert caught.value.fields == ["user_data"]


def test_batch_nodes_signal_only_containers_that_opt_in_not_every_job():
    # Every Batch job container carries com.amazonaws.ecs.task-arn; selecting on it sent
    # SIGUSR1 to trainers without a handler, whose default action ends them (signal(7)).
    env = NodeBootstrapConfig.parse({**BASE, "scheduler": "batch"}).environment()
    assert env["AISTACK_SCHEDULER"] == "batch"
    assert env["AISTACK_TRAINER_CONTAINER_LABEL"] == "aistack.checkpoint-signal"


def test_a_label_filter_with_a_value_is_refused_the_value_names_the_signal():
    with pytest.raises(ConfigError) as caught:
        NodeBootstrapConfig.parse({**BASE, "trainerContainerLabel": "team=ml"})
    assert caught.value.fields == ["trainerContainerLabel"]


def test_an_install_path_with_shell_characters_is_refused():
    with pytest.raises(ConfigError) as caught:
        render_user_data(BASE, install_dir="/opt/$(reboot)")
    assert caught.value.fields == ["install_dir"]


def test_cloudwatch_config_collects_gpu_metrics_and_ships_logs():
    config = cloudwatch_agent_config(BASE)
    metrics = config["metrics"]
    assert metrics["namespace"] == "aistack/node"
    assert set(metrics["metrics_collected"]["nvidia_gpu"]["measurement"]) >= {
        "utilization_gpu",
        "utilization_memory",
        "memory_used",
        "temperature_gpu",
        "power_draw",
    }
    assert metrics["append_dimensions"]["InstanceId"] == "${aws:InstanceId}"
    assert metrics["append_dimensions"]["AutoScalingGroupName"] == "${aws:AutoScalingGroupName}"
    collected = config["logs"]["logs_collected"]["files"]["collect_list"]
    assert {entry["file_path"] for entry in collected} == {
        "/var/log/aistack/*.log",
        "/var/log/cloud-init-output.log",
        "/var/log/cloud-init.log",
    }
    assert {entry["log_group_name"] for entry in collected} == {"/aistack/training"}


def test_script_reads_the_packaged_files():
    assert script("bootstrap.sh").startswith("#!/usr/bin/env bash\n")
    assert set(SCRIPTS) < set(FILES)
    with pytest.raises(AistackError, match="no node script named"):
        script("../config.py")


def test_ecs_agent_settings_are_written_before_the_bootstrap_runs():
    from aistack.node import render_user_data

    text = render_user_data(
        {"maxRuntimeMinutes": 60, "logGroup": "/aistack/pool", "scheduler": "batch"},
        multipart=True,
        ecs_config={
            "ECS_ENABLE_SPOT_INSTANCE_DRAINING": "true",
            "ECS_CONTAINER_STOP_TIMEOUT": "110s",
        },
    )
    drain = text.index("echo ECS_ENABLE_SPOT_INSTANCE_DRAINING=true >>/etc/ecs/ecs.config")
    assert drain < text.index("exec bash /opt/aistack/bootstrap.sh")
    assert "ECS_CONTAINER_STOP_TIMEOUT=110s" in text


def test_ecs_settings_cannot_inject_shell():
    import pytest

    from aistack.errors import ConfigError
    from aistack.node import render_user_data

    with pytest.raises(ConfigError, match="ecs_config"):
        render_user_data(
            {"maxRuntimeMinutes": 60, "logGroup": "/x"}, ecs_config={"ECS_X": "true; rm -rf /"}
        )


def test_gpu_metrics_aggregate_per_pool_for_the_starvation_alarm():
    from aistack.node import cloudwatch_agent_config

    agent = cloudwatch_agent_config({"maxRuntimeMinutes": 60, "logGroup": "/x"})
    assert [] in agent["metrics"]["aggregation_dimensions"]

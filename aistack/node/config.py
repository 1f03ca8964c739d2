"""The settings of a GPU training node's bootstrap (`NodeBootstrapConfig`), validated here
so that a bad value fails at `pulumi up`, not on a node at 3 a.m.

Each setting becomes one `AISTACK_*` variable of the node's env file (`environment()`),
which the scripts in `scripts/` read and nothing else.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from aistack.config import AistackModel
from aistack.contracts.preemption import (
    FLUSH_TIMING,
    PREEMPTION_NOTICE_SECONDS,
    flush_budget_problem,
)

__all__ = [
    "CHECKPOINT_SIGNAL_ENV",
    "CHECKPOINT_SIGNAL_LABEL",
    "DEFAULT_GCP_LOG_NAME",
    "DEFAULT_METRICS_NAMESPACE",
    "ECS_AL2023_HOST_PACKAGES",
    "REQUEUE_EXIT_CODE",
    "NodeBootstrapConfig",
]

#: Where the CloudWatch agent publishes the node metrics unless configured otherwise.
DEFAULT_METRICS_NAMESPACE = "aistack/node"

#: What the ECS-optimised AL2023 AMI lacks of the commands the node scripts use (aws,
#: amazon-cloudwatch-agent-ctl, mdadm), by AL2023 package name. That AMI is al2023-ami-minimal
#: plus a short list (aws/amazon-ecs-ami, variables.pkr.hcl packages_al2023).
ECS_AL2023_HOST_PACKAGES: tuple[str, ...] = ("awscli-2", "amazon-cloudwatch-agent", "mdadm")

#: The label (or, as an environment variable, AISTACK_CHECKPOINT_SIGNAL) with which a
#: container asks the spot watch for a signal; its value names the signal.
CHECKPOINT_SIGNAL_LABEL = "aistack.checkpoint-signal"
CHECKPOINT_SIGNAL_ENV = "AISTACK_CHECKPOINT_SIGNAL"
#: The status of a process that SIGUSR1 ended (128 + 10, signal(7)), and the status a
#: trainer exits with after checkpointing on that signal: AWS Batch retries it.
REQUEUE_EXIT_CODE = 138
_MIME_BOUNDARY = "==AISTACK-USER-DATA-BOUNDARY=="

_S3_URI = re.compile(r"s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/[\x21-\x7e]*)?")
# Cloud Storage bucket names: 3-63 characters of [a-z0-9._-] (up to 222 with dots), starting
# and ending with a letter or digit (cloud.google.com/storage/docs/buckets#naming).
_GS_URI = re.compile(r"gs://[a-z0-9][a-z0-9._-]{1,220}[a-z0-9](/[\x21-\x7e]*)?")
_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d+")
_GCP_REGION = re.compile(r"[a-z]+-[a-z]+\d+")
# Compute Engine resource names (RFC 1035): the managed instance group's name.
_GCE_NAME = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
# An Ops Agent receiver id, which becomes the log name in Cloud Logging.
_LOG_NAME = re.compile(r"[A-Za-z0-9_]{1,100}")
#: The Cloud Logging log the Ops Agent writes the aistack node logs to on GCP by default.
DEFAULT_GCP_LOG_NAME = "aistack_node"
_SCHEDULERS = {"aws": ("asg", "batch"), "gcp": ("mig",)}
_PATH = re.compile(r"/[A-Za-z0-9._/-]*")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_LOG_GROUP = re.compile(r"[A-Za-z0-9._/#-]{1,512}")
_NAMESPACE = re.compile(r"[A-Za-z0-9._/#:-]{1,255}")
_LABEL = re.compile(r"[A-Za-z0-9._/-]{1,255}")
_PROCESS = re.compile(r"[A-Za-z0-9._+-]{1,15}")
_PACKAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")


def _check(pattern: re.Pattern[str], value: str, what: str, fix: str) -> str:
    if not pattern.fullmatch(value):
        raise ValueError(f"{value!r} is not {what}. Fix: {fix}")
    return value


class NodeBootstrapConfig(AistackModel):
    """Settings of a GPU training node's bootstrap; each becomes an `AISTACK_*` variable."""

    cloud: Literal["aws", "gcp"] = Field(
        "aws",
        description="The cloud the node runs on. 'gcp': the scripts read the GCP metadata "
        "server, sync with `gcloud storage`, ship logs and GPU metrics with the Ops Agent "
        "and end the VM through its managed instance group; render with "
        "render_startup_script.",
    )
    scheduler: Literal["asg", "batch", "mig"] | None = Field(
        None,
        validate_default=True,
        description="What launched the node. 'asg' (AWS, the default there): an idle or "
        "over-time node asks its auto scaling group to terminate it and lower the desired "
        "capacity. 'batch' (AWS): it halts (AWS Batch owns the capacity). 'mig' (GCP, the "
        "only one there): it deletes itself through its managed instance group "
        "(instance_group), which lowers the group's target size.",
    )
    region: str | None = Field(
        None,
        description="Region for aws or gcloud calls; default: the node's own, from metadata.",
    )
    instance_group: str | None = Field(
        None,
        validate_default=True,
        description="GCP: the regional managed instance group that owns the node, through "
        "which it deletes itself. Required with scheduler 'mig'.",
    )
    gpu_metrics: Literal["nvml", "dcgm"] = Field(
        "nvml",
        description="GCP: the Ops Agent's GPU metrics. 'nvml': its default GPU metrics "
        "(agent.googleapis.com/gpu/*, read through NVML), which the alert policies use. "
        "'dcgm': also its dcgm receiver (version 2; needs NVIDIA DCGM on the image).",
    )
    max_runtime_minutes: int = Field(
        ge=1,
        description="Hard wall-clock limit on the node's life from first boot (T5). Required: "
        "a run without a limit is how a forgotten node bills for a month.",
    )
    idle_minutes: int = Field(
        30,
        ge=5,
        description="Consecutive idle minutes before the node ends itself (C5). At least 5, "
        "so a job starting right after the previous one is not cut off.",
    )
    idle_gpu_util_percent: int = Field(
        5, ge=0, le=100, description="A GPU below this utilisation counts as idle."
    )
    idle_process_names: tuple[str, ...] = Field(
        ("ssm-session-worker",),
        description="Processes whose presence means busy (exact names, at most 15 "
        "characters as the kernel keeps them). The default covers SSM shell sessions.",
    )
    cache_dir: str = Field(
        "/mnt/nvme", description="Mount point of the instance-store NVMe cache (D3)."
    )
    cache_filesystem: Literal["xfs", "ext4"] = Field(
        "xfs", description="Filesystem made on the NVMe disks."
    )
    dataset_uri: str | None = Field(
        None,
        description="s3://bucket/prefix holding one sub-prefix per dataset version; the node "
        "syncs <uri>/<version>/ into <cache_dir>/datasets/<name>/<version> (D3).",
    )
    dataset_version: str | None = Field(
        None,
        validate_default=True,
        description="The pinned dataset version; required with dataset_uri. The cache is "
        "keyed by it, so a node that has it transfers nothing.",
    )
    dataset_name: str | None = Field(
        None, description="Directory name in the cache; default: last part of dataset_uri."
    )
    sync_concurrency: int = Field(
        64, ge=1, le=1000, description="Parallel S3 requests of the dataset sync."
    )
    checkpoint_dir: str | None = Field(
        None,
        description="Local directory the trainer checkpoints to; default <cache_dir>/checkpoints.",
    )
    checkpoint_uri: str | None = Field(
        None,
        description="s3:// destination the checkpoint directory is flushed to on a spot "
        "interruption or rebalance notice (T1).",
    )
    checkpoint_flush_command: str | None = Field(
        None,
        description="Shell command that flushes checkpoints instead of the default "
        "`aws s3 sync <checkpoint_dir> <checkpoint_uri>`.",
    )
    checkpoint_flush_delay_seconds: int | None = Field(
        None,
        ge=0,
        le=110,
        validate_default=True,
        description="Pause between signalling the trainer and flushing on a Spot notice, "
        "for it to write its checkpoint. Default by cloud (aistack.contracts.preemption): "
        "30 s on AWS (EC2 gives two minutes), 5 s on GCP (Compute Engine gives 30 s in "
        "all). With spot_poll_seconds it must leave half the notice to the upload.",
    )
    maintenance_flush_delay_seconds: int | None = Field(
        None,
        ge=0,
        le=600,
        validate_default=True,
        description="GCP: the same pause on a host-maintenance notice "
        "(TERMINATE_ON_HOST_MAINTENANCE, an hour before a GPU VM is stopped); default 30.",
    )
    trainer_signal: Literal["USR1", "USR2", "TERM", "INT", "HUP"] = Field(
        "USR1",
        description="Signal sent to trainer_process_name processes on an interruption "
        "notice. Containers name their own signal (trainer_container_label).",
    )
    trainer_container_label: str = Field(
        CHECKPOINT_SIGNAL_LABEL,
        description="Docker label with which a running container opts in to a signal on an "
        "interruption notice; its value names the signal (e.g. USR1). The environment "
        f"variable {CHECKPOINT_SIGNAL_ENV} opts in the same way (AWS Batch jobs carry no "
        "labels of their own). Containers that do not opt in are never signalled: every "
        "signal's default action ends the process. Empty: labels opt nothing in.",
    )
    trainer_process_name: str | None = Field(
        None,
        description="Processes with exactly this name also get trainer_signal; set it only "
        "for a trainer that handles that signal.",
    )
    act_on_rebalance: bool = Field(
        True,
        description="Flush checkpoints on a rebalance recommendation too: it often comes "
        "minutes before an interruption notice. No trainer is signalled for it, because a "
        "recommendation is not a reclaim and most are never followed by one.",
    )
    spot_poll_seconds: int | None = Field(
        None,
        ge=1,
        le=60,
        validate_default=True,
        description="Seconds between metadata polls for spot notices. Default by cloud: 5 "
        "on AWS (what AWS recommends), 2 on GCP.",
    )
    spot_stop_timeout_seconds: int | None = Field(
        None,
        ge=5,
        le=600,
        validate_default=True,
        description="TimeoutStopSec of the spot watch's unit: how long its last flush may "
        "run once the shutdown stops it. Default by cloud: 25 on GCP (the soft-off that "
        "comes with a preemption starts the shutdown; the power-off follows 30 s later), 90 "
        "on AWS (systemd's default).",
    )
    host_packages: tuple[str, ...] = Field(
        (),
        description="Packages bootstrap.sh installs with dnf (or apt-get) when the aws CLI, "
        "mdadm or the CloudWatch agent is missing from the image; the aws CLI is required, "
        "so a node still without it fails its boot. Default none: the Deep Learning AMI has "
        "the CLI. The ECS-optimised AL2023 AMI needs "
        f"{' '.join(ECS_AL2023_HOST_PACKAGES)!r}.",
    )
    log_group: str | None = Field(
        None,
        validate_default=True,
        description="AWS: CloudWatch log group that receives the aistack and cloud-init logs "
        "(T6); the GPU metrics go alongside (T3); required. GCP: the Ops Agent receiver, "
        f"so the Cloud Logging log name, of the aistack logs (default {DEFAULT_GCP_LOG_NAME}).",
    )
    metrics_namespace: str = Field(
        DEFAULT_METRICS_NAMESPACE, description="CloudWatch namespace of the node metrics."
    )

    @field_validator("scheduler")
    @classmethod
    def _scheduler(cls, value: str | None, info: ValidationInfo) -> str:
        cloud = info.data.get("cloud", "aws")
        allowed = _SCHEDULERS[cloud]
        if value is None:
            return allowed[0]
        if value not in allowed:
            raise ValueError(
                f"{value!r} does not run on {cloud}. Fix: use "
                + " or ".join(repr(a) for a in allowed)
                + f" with cloud {cloud!r}."
            )
        return value

    @field_validator(
        "checkpoint_flush_delay_seconds",
        "maintenance_flush_delay_seconds",
        "spot_poll_seconds",
        "spot_stop_timeout_seconds",
    )
    @classmethod
    def _flush_timing_default(cls, value: int | None, info: ValidationInfo) -> int:
        # The defaults differ by cloud because the notices do (aistack.contracts.preemption).
        if value is not None:
            return value
        timing = FLUSH_TIMING[info.data.get("cloud", "aws")]
        return {
            "checkpoint_flush_delay_seconds": timing.flush_delay_seconds,
            "maintenance_flush_delay_seconds": timing.maintenance_flush_delay_seconds,
            "spot_poll_seconds": timing.poll_seconds,
            "spot_stop_timeout_seconds": timing.stop_timeout_seconds,
        }[str(info.field_name)]

    @model_validator(mode="after")
    def _flush_fits_the_notice(self) -> NodeBootstrapConfig:
        problem = flush_budget_problem(
            self.cloud,
            poll_seconds=int(self.spot_poll_seconds or 0),
            flush_delay_seconds=int(self.checkpoint_flush_delay_seconds or 0),
            stop_timeout_seconds=self.spot_stop_timeout_seconds,
        )
        if problem:
            raise ValueError(
                f"checkpoint_flush_delay_seconds / spot_poll_seconds: {problem} (T1, "
                f"{PREEMPTION_NOTICE_SECONDS[self.cloud]} s notice on {self.cloud}). Fix: "
                "shorten the delay or the poll, and have the trainer upload checkpoints "
                "periodically."
            )
        return self

    @field_validator("instance_group")
    @classmethod
    def _instance_group(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            if info.data.get("scheduler") == "mig":
                raise ValueError(
                    "is required with scheduler 'mig': an idle VM deletes itself through its "
                    "group, or the group recreates it. Fix: name the managed instance group."
                )
            return value
        return _check(
            _GCE_NAME, value, "an instance group name", "use the group's name, e.g. 'pool-mig'."
        )

    @field_validator("dataset_uri", "checkpoint_uri")
    @classmethod
    def _s3_uri(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return value
        if info.data.get("cloud") == "gcp":
            return _check(
                _GS_URI, value, "a gs://bucket/prefix URI", "write it as gs://bucket/prefix."
            )
        return _check(
            _S3_URI, value, "an s3://bucket/prefix URI", "write it as s3://bucket/prefix."
        )

    @field_validator("region")
    @classmethod
    def _region(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return value
        if info.data.get("cloud") == "gcp":
            return _check(_GCP_REGION, value, "a region name", "use a name like 'us-central1'.")
        return _check(_REGION, value, "a region name", "use a name like 'us-east-1'.")

    @field_validator("cache_dir", "checkpoint_dir")
    @classmethod
    def _absolute_path(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if ".." in value.split("/"):
            raise ValueError(f"{value!r} climbs with '..'. Fix: give the path without '..'.")
        return _check(
            _PATH, value, "an absolute path", "use letters, digits, '.', '_', '-' and '/'."
        )

    @field_validator("dataset_version")
    @classmethod
    def _pinned_version(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            if info.data.get("dataset_uri"):
                raise ValueError(
                    "is required when dataset_uri is set. Fix: pin the version to sync, "
                    "e.g. 'v3'; the cache is keyed by it (D3, D4)."
                )
            return value
        if value.lower() == "latest":
            raise ValueError(
                "'latest' is not a pinned version: it can change under a running job. "
                "Fix: name the version, e.g. 'v3'."
            )
        return _check(_VERSION, value, "a version", "use letters, digits, '.', '_', '-'.")

    @field_validator("dataset_name")
    @classmethod
    def _dataset_name(cls, value: str | None) -> str | None:
        if value is None:
            return value
        return _check(_VERSION, value, "a dataset name", "use letters, digits, '.', '_', '-'.")

    @field_validator("log_group")
    @classmethod
    def _log_group(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("cloud") == "gcp":
            if value is None:
                return DEFAULT_GCP_LOG_NAME
            return _check(_LOG_NAME, value, "an Ops Agent receiver id", "use [A-Za-z0-9_].")
        if value is None:
            raise ValueError(
                "is required on AWS. Fix: name the CloudWatch log group the node logs go to."
            )
        return _check(
            _LOG_GROUP, value, "a log group name", "use letters, digits, '.', '_', '-', '/', '#'."
        )

    @field_validator("metrics_namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        if value.startswith("AWS/"):
            raise ValueError(f"{value!r} is reserved for AWS. Fix: use e.g. 'aistack/node'.")
        return _check(_NAMESPACE, value, "a metric namespace", "use e.g. 'aistack/node'.")

    @field_validator("trainer_container_label")
    @classmethod
    def _label(cls, value: str) -> str:
        if not value:
            return value
        return _check(_LABEL, value, "a docker label key", "use e.g. 'aistack.checkpoint-signal'.")

    @field_validator("trainer_process_name")
    @classmethod
    def _process_name(cls, value: str | None) -> str | None:
        if value is None:
            return value
        return _check(
            _PROCESS, value, "a process name", "use the name `pgrep -x` sees (<= 15 chars)."
        )

    @field_validator("host_packages")
    @classmethod
    def _package_names(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        for value in values:
            _check(_PACKAGE, value, "a package name", "use the name dnf or apt-get installs.")
        return values

    @field_validator("idle_process_names")
    @classmethod
    def _process_names(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        for value in values:
            _check(_PROCESS, value, "a process name", "use the name `pgrep -x` sees (<= 15 chars).")
        return values

    @field_validator("checkpoint_flush_command")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        # One line, so it cannot end the env file's heredoc; ASCII, as user data is 7-bit;
        # never the MIME boundary, so it cannot split a multi-part document.
        if value is not None and (
            not value.strip()
            or not value.isprintable()
            or not value.isascii()
            or _MIME_BOUNDARY in value
        ):
            raise ValueError(
                "must be one non-empty line of printable ASCII. Fix: chain commands with "
                "'&&' on one line, or put them in a script on the image."
            )
        return value

    def environment(self) -> dict[str, str]:
        """The `AISTACK_*` variables the node scripts read, as written to the env file."""
        env = {
            "AISTACK_SCHEDULER": self.scheduler,
            "AISTACK_REGION": self.region,
            "AISTACK_MAX_RUNTIME_MINUTES": self.max_runtime_minutes,
            "AISTACK_IDLE_MINUTES": self.idle_minutes,
            "AISTACK_IDLE_GPU_UTIL_PERCENT": self.idle_gpu_util_percent,
            "AISTACK_IDLE_PROCESS_NAMES": " ".join(self.idle_process_names),
            "AISTACK_CACHE_DIR": self.cache_dir,
            "AISTACK_CACHE_FS": self.cache_filesystem,
            "AISTACK_DATASET_URI": self.dataset_uri,
            "AISTACK_DATASET_VERSION": self.dataset_version,
            "AISTACK_DATASET_NAME": self.dataset_name,
            "AISTACK_SYNC_CONCURRENCY": self.sync_concurrency,
            "AISTACK_CHECKPOINT_DIR": self.checkpoint_dir or f"{self.cache_dir}/checkpoints",
            "AISTACK_CHECKPOINT_URI": self.checkpoint_uri,
            "AISTACK_CHECKPOINT_FLUSH_CMD": self.checkpoint_flush_command,
            "AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS": self.checkpoint_flush_delay_seconds,
            "AISTACK_TRAINER_SIGNAL": self.trainer_signal,
            "AISTACK_TRAINER_CONTAINER_LABEL": self.trainer_container_label,
            "AISTACK_TRAINER_PROCESS_NAME": self.trainer_process_name,
            "AISTACK_SPOT_ACT_ON_REBALANCE": int(self.act_on_rebalance),
            "AISTACK_SPOT_POLL_SECONDS": self.spot_poll_seconds,
            "AISTACK_SPOT_STOP_TIMEOUT_SECONDS": self.spot_stop_timeout_seconds,
            "AISTACK_HOST_PACKAGES": " ".join(self.host_packages) or None,
            "AISTACK_LOG_GROUP": self.log_group,
            "AISTACK_METRICS_NAMESPACE": self.metrics_namespace,
        }
        if self.cloud == "gcp":
            # Only on GCP, so an AWS node's env file stays as it was. The log name and the
            # metrics go in the Ops Agent config, not the environment.
            del env["AISTACK_LOG_GROUP"], env["AISTACK_METRICS_NAMESPACE"]
            env["AISTACK_CLOUD"] = self.cloud
            env["AISTACK_INSTANCE_GROUP"] = self.instance_group
            env["AISTACK_MAINTENANCE_FLUSH_DELAY_SECONDS"] = self.maintenance_flush_delay_seconds
        return {key: str(value) for key, value in env.items() if value is not None}

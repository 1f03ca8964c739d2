"""The checkpoint flush finishes within the platform's preemption notice, measured.

The real spot-watch.sh runs against stand-ins on a virtual clock: `sleep` advances the
clock instead of waiting (so a minute of node time takes milliseconds), the metadata
server shows the notice from a chosen instant, the trainer writes its checkpoint when it
is signalled, and the bucket stand-in (`gcloud storage rsync` / `aws s3 sync`) spends a
fixed share of the notice uploading it and records when it is done. The settings are the
ones aistack renders for the platform (`NodeBootstrapConfig.environment()`), so the test
judges what a node gets.

Platform facts (aistack/contracts/preemption.py has the sources): Compute Engine sets
`instance/preempted` TRUE and sends the ACPI soft-off at once, powering off 30 s later, so
the shutdown (systemd stopping the watch's unit: SIGTERM to its shell alone, KillMode=mixed)
starts with the notice; EC2 posts `spot/instance-action` two minutes before it stops the
instance. The upload is given half the notice (MIN_UPLOAD_SECONDS): a checkpoint that
takes that long still has to make it.

On the script and settings of before this change (30 s delay, 5 s poll, no stop handling)
the GCP cases fail: the flush ends 50 s after the notice, or never, because SIGTERM ends a
shell without a trap before it flushes.
"""

from __future__ import annotations

import pytest

from aistack.contracts.preemption import MIN_UPLOAD_SECONDS, PREEMPTION_NOTICE_SECONDS
from aistack.node import NodeBootstrapConfig

from .conftest import Node

#: The notice appears 1 ms after the first poll: the worst case, a whole poll interval
#: passes before the watch can see it.
NOTICE_AT_MS = 1
TRAINER = "trainer"
EC2_ACTION = '{"action": "terminate", "time": "2024-06-01T10:02:00Z"}'

# `sleep N` on the virtual clock ($STUB_DIR/clock, in ms). The first sleep that crosses the
# notice instant publishes the notice (the metadata stand-in then serves it) and, with
# $STUB_DIR/soft-off, stops the watch as systemd does at shutdown: SIGTERM to the shell that
# runs the script (this sleep's parent), while the sleep itself runs to its end.
SLEEP_STUB = r"""
clock=$STUB_DIR/clock notice_at=$(cat "$STUB_DIR/notice-at")
now=$(cat "$clock") end=$(( $(cat "$clock") + ${1%%.*} * 1000 ))
if (( now < notice_at && end >= notice_at )) && [[ ! -e $STUB_DIR/noticed ]]; then
  printf '%s\n' "$notice_at" >"$STUB_DIR/noticed"
  bash "$STUB_DIR/publish-notice"
  if [[ -e $STUB_DIR/soft-off ]]; then kill -TERM "$PPID"; fi
fi
printf '%s\n' "$end" >"$clock"
"""

# The trainer opted in by process name: `pkill --signal USR1 -x trainer` reaches it, and it
# writes its last checkpoint (named by the virtual instant) before the flush delay ends.
PKILL_STUB = r"""
printf 'step at %s ms\n' "$(cat "$STUB_DIR/clock")" >"$AISTACK_CHECKPOINT_DIR/last.ckpt"
exit 0
"""

# The bucket: copies the checkpoint directory into $BUCKET_ROOT/<bucket>/<path>, spending
# $STUB_DIR/upload-ms of virtual time, and records the instant the upload completed.
UPLOAD = r"""
args=()
for arg in "${@:3}"; do [[ $arg == -* ]] || args+=("$arg"); done
src=${args[0]} dest=${args[1]}
dest=$BUCKET_ROOT/${dest#*://}
clock=$STUB_DIR/clock
printf '%s\n' "$(( $(cat "$clock") + $(cat "$STUB_DIR/upload-ms") ))" >"$clock"
mkdir -p "$dest" && cp -R "$src/." "$dest/"
cat "$clock" >>"$STUB_DIR/flushed-at"
exit 0
"""
GCLOUD_STUB = "if [[ $1 == storage && $2 == rsync ]]; then\n" + UPLOAD + "fi\n"
AWS_STUB = "if [[ $1 == s3 && $2 == sync ]]; then\n" + UPLOAD + "fi\n"


def platform_settings(cloud: str) -> dict[str, str]:
    """The spot watch's settings as aistack renders them for `cloud`."""
    gcp = cloud == "gcp"
    config = NodeBootstrapConfig(
        cloud=cloud,  # type: ignore[arg-type]
        max_runtime_minutes=600,
        instance_group="train-mig" if gcp else None,
        log_group=None if gcp else "/aistack/training",
        checkpoint_uri="gs://team-checkpoints/runs" if gcp else "s3://team-checkpoints/runs",
        trainer_process_name=TRAINER,
    )
    env = config.environment()
    keep = (
        "AISTACK_CLOUD",
        "AISTACK_SCHEDULER",
        "AISTACK_CHECKPOINT_URI",
        "AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS",
        "AISTACK_MAINTENANCE_FLUSH_DELAY_SECONDS",
        "AISTACK_SPOT_POLL_SECONDS",
        "AISTACK_SPOT_STOP_TIMEOUT_SECONDS",
        "AISTACK_TRAINER_PROCESS_NAME",
        "AISTACK_TRAINER_SIGNAL",
        "AISTACK_SPOT_ACT_ON_REBALANCE",
    )
    return {key: env[key] for key in keep if key in env}


def clocked_node(node: Node, cloud: str, *, notice: str) -> dict[str, str]:
    """`node` on the virtual clock, with the stand-ins above; returns its settings."""
    settings = platform_settings(cloud)
    checkpoints = node.cache / "checkpoints"
    checkpoints.mkdir(parents=True)
    (node.stubs / "clock").write_text("0\n")
    (node.stubs / "notice-at").write_text(f"{NOTICE_AT_MS}\n")
    (node.stubs / "upload-ms").write_text(f"{MIN_UPLOAD_SECONDS[cloud] * 1000}\n")
    if cloud == "gcp":
        path = node.stubs / "gce" / "instance" / notice.split()[0]
        value = "TRUE" if notice == "preempted" else notice.split()[1]
    else:
        path = node.stubs / "imds" / "meta-data" / "spot" / "instance-action"
        value = EC2_ACTION
    (node.stubs / "publish-notice").write_text(
        f"mkdir -p '{path.parent}' && printf '%s' '{value}' >'{path}'\n"
    )
    node.stub("sleep", SLEEP_STUB)
    node.stub("pkill", PKILL_STUB)
    node.stub("gcloud" if cloud == "gcp" else "aws", GCLOUD_STUB if cloud == "gcp" else AWS_STUB)
    node.env.update(
        settings,
        AISTACK_CHECKPOINT_DIR=str(checkpoints),
        BUCKET_ROOT=str(node.root / "bucket"),
        AISTACK_MAX_ITERATIONS="40",
    )
    return settings


def flushed_seconds_after_notice(node: Node) -> list[float]:
    """When each upload completed, in seconds after the notice appeared."""
    path = node.stubs / "flushed-at"
    if not path.exists():
        return []
    return [(int(ms) - NOTICE_AT_MS) / 1000 for ms in path.read_text().split()]


def uploaded_checkpoint(node: Node, cloud: str) -> str:
    bucket = "team-checkpoints/runs"
    path = node.root / "bucket" / bucket / "last.ckpt"
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize("cloud", ["gcp", "aws"])
def test_a_notice_seen_by_the_poll_is_flushed_within_the_platforms_notice(node, cloud):
    """The poll path: the notice is seen up to one poll late, the trainer gets its signal
    and the flush delay, and the upload completes inside the notice (GCE 30 s, EC2 120 s)."""
    notice = "preempted" if cloud == "gcp" else "instance-action"
    clocked_node(node, cloud, notice=notice)
    node.run("spot-watch.sh")
    flushed = flushed_seconds_after_notice(node)
    assert flushed, f"no flush ran:\n{node.log('spot-watch')}"
    assert flushed[0] <= PREEMPTION_NOTICE_SECONDS[cloud], (
        f"the flush completed {flushed[0]} s after the notice; {cloud} gives "
        f"{PREEMPTION_NOTICE_SECONDS[cloud]} s"
    )
    # What the trainer wrote on the signal is what reached the bucket.
    assert uploaded_checkpoint(node, cloud).startswith("step at ")
    assert [call[:3] for call in node.calls("pkill")] == [["--signal", "USR1", "-x"]]


def test_a_gce_soft_off_flushes_on_the_units_stop_within_the_notice_and_the_stop_timeout(
    node,
):
    """The stop path: Compute Engine's soft-off starts the shutdown with the notice, and
    systemd stops the watch (SIGTERM to its shell) before its next poll. The watch acts on
    the notice from its stop handler; the upload completes inside the 30 s and inside the
    unit's TimeoutStopSec, after which systemd would kill it."""
    settings = clocked_node(node, "gcp", notice="preempted")
    (node.stubs / "soft-off").touch()
    result = node.run("spot-watch.sh", check=False)
    assert result.returncode == 0, result.stderr
    flushed = flushed_seconds_after_notice(node)
    assert flushed, f"the stop ended the watch before any flush:\n{result.stderr}"
    assert flushed[-1] <= PREEMPTION_NOTICE_SECONDS["gcp"]
    assert flushed[-1] <= int(settings["AISTACK_SPOT_STOP_TIMEOUT_SECONDS"])
    assert uploaded_checkpoint(node, "gcp").startswith("step at ")
    assert "stopping: the node is shutting down" in node.log("spot-watch")


def test_a_stop_without_a_notice_still_flushes_what_is_there(node):
    """A shutdown with no notice (an idle VM deleted through its group, a reboot) uploads
    the checkpoint directory once, with no signal and no delay."""
    clocked_node(node, "gcp", notice="preempted")
    (node.stubs / "notice-at").write_text("999999999\n")
    (node.cache / "checkpoints" / "last.ckpt").write_text("step 7\n")
    node.run("spot-watch.sh", "--once")
    assert flushed_seconds_after_notice(node) == []
    # SIGTERM between polls: the stand-in clock never reaches the notice.
    (node.stubs / "notice-at").write_text("1\n")
    (node.stubs / "clock").write_text("0\n")
    (node.stubs / "soft-off").touch()
    (node.stubs / "publish-notice").write_text("true\n")  # a stop, not a preemption
    node.run("spot-watch.sh")
    assert node.calls("pkill") == []
    assert uploaded_checkpoint(node, "gcp") == "step 7\n"


def test_the_host_maintenance_notice_keeps_its_longer_pause(node):
    """GCE's host-maintenance notice comes an hour ahead (GPU VMs cannot live-migrate), so
    the trainer gets the longer maintenance pause before the flush, not the Spot one."""
    settings = clocked_node(node, "gcp", notice="maintenance-event TERMINATE_ON_HOST_MAINTENANCE")
    node.run("spot-watch.sh")
    flushed = flushed_seconds_after_notice(node)
    poll = int(settings["AISTACK_SPOT_POLL_SECONDS"])
    pause = int(settings["AISTACK_MAINTENANCE_FLUSH_DELAY_SECONDS"])
    assert pause > int(settings["AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS"])
    assert flushed == [poll + pause + MIN_UPLOAD_SECONDS["gcp"] - NOTICE_AT_MS / 1000]


def test_the_settings_of_before_would_not_flush_in_time(node):
    """The measurement can fail: the former GCP settings (30 s delay after a 5 s poll)
    finish the upload 50 s after the notice, 20 s after the power-off."""
    clocked_node(node, "gcp", notice="preempted")
    node.run(
        "spot-watch.sh",
        AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS="30",
        AISTACK_SPOT_POLL_SECONDS="5",
    )
    assert flushed_seconds_after_notice(node) == [5 + 30 + 15 - NOTICE_AT_MS / 1000]
    assert flushed_seconds_after_notice(node)[0] > PREEMPTION_NOTICE_SECONDS["gcp"]

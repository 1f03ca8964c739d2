"""spot-watch.sh: an interruption notice signals the trainers that asked for it, then flushes
the checkpoint, once; a rebalance recommendation only flushes."""

from __future__ import annotations

import shutil
import subprocess

import pytest

ACTION = '{"action": "terminate", "time": "2024-06-01T10:02:00Z"}'
REBALANCE = '{"noticeTime": "2024-06-01T09:58:00Z"}'

# docker answers as the real CLI does: `docker ps -q` prints short ids, `docker inspect
# --format` prints the template once per container with the full id. The three containers:
# a trainer that opted in by label (an image LABEL or `docker run --label`), an AWS Batch job
# that opted in through its environment (Batch job definitions carry no docker labels), and
# a container that did not opt in (e.g. the ECS agent).
LABELLED, BATCH_JOB, BYSTANDER = "c0ffee000001", "c0ffee000002", "c0ffee000003"
DOCKER_STUB = r"""
case $1 in
  ps) cat "$STUB_DIR/docker-ps"; exit 0 ;;
  inspect) cat "$STUB_DIR/docker-inspect"; exit 0 ;;
esac
"""


def containers(node, *records: tuple[str, str, str]) -> None:
    """Running containers as (short id, label value, AISTACK_CHECKPOINT_SIGNAL value)."""
    (node.stubs / "docker-ps").write_text("".join(f"{short}\n" for short, _, _ in records))
    (node.stubs / "docker-inspect").write_text(
        "".join(f"{short}{'f' * 52}|{label}|{env}\n" for short, label, env in records)
    )


@pytest.fixture
def trainer_node(node):
    node.stub("docker", DOCKER_STUB)
    containers(node, (LABELLED, "USR1", ""), (BATCH_JOB, "", "USR2"), (BYSTANDER, "", ""))
    node.env.update(
        AISTACK_CHECKPOINT_DIR=str(node.cache / "checkpoints"),
        AISTACK_CHECKPOINT_URI="s3://team-checkpoints/run-7",
        AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS="0",
    )
    return node


def poll(node, **env: str):
    return node.run("spot-watch.sh", "--once", **env)


def kills(node) -> list[list[str]]:
    return [call for call in node.calls("docker") if call[0] == "kill"]


def test_sigusr1_ends_a_process_without_a_handler_with_status_138():
    # The platform fact behind opt-in: signal(7) gives SIGUSR1 the default action "Term",
    # and a shell reports a process ended by signal N as 128 + N (bash(1), EXIT STATUS),
    # as does docker-init (tini), the job's PID 1 with initProcessEnabled. Run for real.
    bash = shutil.which("bash")
    assert bash
    status = subprocess.run(
        [bash, "-c", f'{bash} -c "kill -USR1 \\$\\$; sleep 5"; echo $?'],
        capture_output=True,
        text=True,
        timeout=10,
    ).stdout.strip()
    assert status == "138"


def test_an_interruption_signals_only_the_containers_that_opted_in_and_flushes_once(
    trainer_node,
):
    trainer_node.imds("meta-data/spot/instance-action", ACTION)
    poll(trainer_node)
    poll(trainer_node)
    docker = trainer_node.calls("docker")
    assert docker[0] == ["ps", "-q"]
    assert docker[1][0] == "inspect" and docker[1][3:] == [LABELLED, BATCH_JOB, BYSTANDER]
    assert kills(trainer_node) == [
        ["kill", "--signal=USR1", LABELLED],
        ["kill", "--signal=USR2", BATCH_JOB],
    ], "a container that did not opt in must never get a signal: its default action is Term"
    assert trainer_node.calls("aws") == [
        [
            "s3",
            "sync",
            str(trainer_node.cache / "checkpoints"),
            "s3://team-checkpoints/run-7",
            "--only-show-errors",
        ]
    ]
    assert len(trainer_node.calls("curl")) >= 4, "both polls must have asked the metadata service"


def test_the_inspect_template_reads_the_opt_in_label_and_environment(trainer_node):
    trainer_node.imds("meta-data/spot/instance-action", ACTION)
    poll(trainer_node)
    template = trainer_node.calls("docker")[1][2]
    assert '{{index .Config.Labels "aistack.checkpoint-signal"}}' in template
    assert '"AISTACK_CHECKPOINT_SIGNAL"' in template and "{{range .Config.Env}}" in template


def test_without_an_opted_in_container_nothing_is_signalled_but_the_flush_still_runs(
    trainer_node,
):
    containers(trainer_node, (BYSTANDER, "", ""))
    trainer_node.imds("meta-data/spot/instance-action", ACTION)
    poll(trainer_node)
    assert kills(trainer_node) == []
    assert "no running container opted in" in trainer_node.log("spot-watch")
    assert len(trainer_node.calls("aws")) == 1


def test_a_label_that_names_no_signal_is_not_sent(trainer_node):
    containers(trainer_node, (LABELLED, "yes please", ""))
    trainer_node.imds("meta-data/spot/instance-action", ACTION)
    poll(trainer_node)
    assert kills(trainer_node) == []
    assert "not a signal name" in trainer_node.log("spot-watch")


def test_no_notice_does_nothing(trainer_node):
    poll(trainer_node)
    poll(trainer_node)
    assert trainer_node.calls("docker") == []
    assert trainer_node.calls("aws") == []
    asked = [c[-1] for c in trainer_node.calls("curl")]
    assert "http://169.254.169.254/latest/meta-data/spot/instance-action" in asked
    assert "http://169.254.169.254/latest/meta-data/events/recommendations/rebalance" in asked


def test_a_rebalance_recommendation_only_flushes_and_never_ends_the_run(trainer_node):
    trainer_node.stub("sleep")  # recorded, not slept
    trainer_node.imds("meta-data/events/recommendations/rebalance", REBALANCE)
    poll(trainer_node, AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS="30")
    assert trainer_node.calls("docker") == [], "a recommendation is not a reclaim"
    assert trainer_node.calls("sleep") == [], "nothing was signalled, so nothing to wait for"
    assert len(trainer_node.calls("aws")) == 1


def test_a_rebalance_flushes_and_a_later_interruption_signals_and_flushes_again(trainer_node):
    trainer_node.imds("meta-data/events/recommendations/rebalance", REBALANCE)
    poll(trainer_node)
    assert len(trainer_node.calls("aws")) == 1 and kills(trainer_node) == []
    trainer_node.imds("meta-data/spot/instance-action", ACTION)
    poll(trainer_node)
    poll(trainer_node)
    assert len(trainer_node.calls("aws")) == 2
    assert len(kills(trainer_node)) == 2  # the two opted-in containers, once


def test_two_notices_seen_together_act_once(trainer_node):
    trainer_node.imds("meta-data/events/recommendations/rebalance", REBALANCE)
    trainer_node.imds("meta-data/spot/instance-action", ACTION)
    poll(trainer_node)
    poll(trainer_node)
    assert len(trainer_node.calls("aws")) == 1
    assert len(kills(trainer_node)) == 2


def test_rebalance_can_be_ignored(trainer_node):
    trainer_node.imds("meta-data/events/recommendations/rebalance", REBALANCE)
    poll(trainer_node, AISTACK_SPOT_ACT_ON_REBALANCE="0")
    assert trainer_node.calls("aws") == []


def test_a_custom_flush_command_and_process_signal(trainer_node):
    trainer_node.unstub("docker")
    trainer_node.imds("meta-data/spot/instance-action", ACTION)
    flushed = trainer_node.root / "flushed"
    command = f"printf '%s\\n' \"$AISTACK_CHECKPOINT_URI\" >>{flushed}"
    poll(
        trainer_node,
        AISTACK_CHECKPOINT_FLUSH_CMD=command,
        AISTACK_TRAINER_SIGNAL="SIGUSR2",
        AISTACK_TRAINER_PROCESS_NAME="torchrun",
    )
    poll(trainer_node, AISTACK_CHECKPOINT_FLUSH_CMD=command)
    assert flushed.read_text() == "s3://team-checkpoints/run-7\n"
    assert trainer_node.calls("pkill") == [["--signal", "USR2", "-x", "--", "torchrun"]]
    assert trainer_node.calls("aws") == []


def test_an_unreachable_metadata_service_is_not_a_notice(trainer_node):
    (trainer_node.stubs / "imds-down").touch()
    result = trainer_node.run("spot-watch.sh", "--once", check=False)
    assert result.returncode == 1
    assert "metadata service unreachable" in result.stderr
    assert trainer_node.calls("docker") == trainer_node.calls("aws") == []


def test_the_trainer_is_signalled_first_and_given_the_flush_delay(trainer_node):
    """The trainer writes its checkpoint between the signal and the upload (T1)."""
    trainer_node.stub("sleep")  # recorded, not slept
    trainer_node.imds("meta-data/spot/instance-action", ACTION)
    poll(trainer_node, AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS="30")
    order = [
        call
        for call in trainer_node.calls()
        if call[0] in ("docker", "aws") or call[:2] == ["sleep", "30"]
    ]
    assert [call[:2] for call in order] == [
        ["docker", "ps"],
        ["docker", "inspect"],
        ["docker", "kill"],
        ["docker", "kill"],
        ["sleep", "30"],
        ["aws", "s3"],
    ]


def test_the_spot_watch_unit_stops_after_docker_with_its_flush_bounded(node):
    """The unit bootstrap writes lets the shutdown reach the watch's last flush: stopped
    before docker and the network (reverse start order, systemd.unit(5)), SIGTERM to the
    watch's shell alone (KillMode=mixed, systemd.kill(5)), within the platform's stop time
    (TimeoutStopSec, systemd.service(5); 25 s on GCP, inside the 30 s notice)."""
    from .test_bootstrap import prepare

    prepare(node)
    with (node.root / "node.env").open("a") as env:
        env.write("AISTACK_SPOT_STOP_TIMEOUT_SECONDS=25\n")
    node.run("bootstrap.sh", AISTACK_SERVICE_MANAGER="systemd")
    unit = (node.root / "systemd" / "aistack-spot-watch.service").read_text()
    assert "After=network-online.target docker.service\n" in unit
    assert "KillMode=mixed\nTimeoutStopSec=25\n" in unit
    other = (node.root / "systemd" / "aistack-idle-watchdog.service").read_text()
    assert "KillMode" not in other and "TimeoutStopSec" not in other

"""spot-watch.sh: a spot notice signals the trainer and flushes the checkpoint, once."""

from __future__ import annotations

import pytest

ACTION = '{"action": "terminate", "time": "2024-06-01T10:02:00Z"}'
REBALANCE = '{"noticeTime": "2024-06-01T09:58:00Z"}'


@pytest.fixture
def trainer_node(node):
    node.stub("docker")
    node.answer("docker", out="c0ffee1\nc0ffee2\n")
    node.env.update(
        AISTACK_CHECKPOINT_DIR=str(node.cache / "checkpoints"),
        AISTACK_CHECKPOINT_URI="s3://team-checkpoints/run-7",
        AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS="0",
    )
    return node


def poll(node, **env: str):
    return node.run("spot-watch.sh", "--once", **env)


def test_an_interruption_notice_signals_the_trainer_and_flushes_once(trainer_node):
    trainer_node.imds("meta-data/spot/instance-action", ACTION)
    poll(trainer_node)
    poll(trainer_node)
    docker = trainer_node.calls("docker")
    assert docker == [
        ["ps", "-q", "--filter", "label=aistack.trainer"],
        ["kill", "--signal=USR1", "c0ffee1", "c0ffee2"],
    ]
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


def test_no_notice_does_nothing(trainer_node):
    poll(trainer_node)
    poll(trainer_node)
    assert trainer_node.calls("docker") == []
    assert trainer_node.calls("aws") == []
    asked = [c[-1] for c in trainer_node.calls("curl")]
    assert "http://169.254.169.254/latest/meta-data/spot/instance-action" in asked
    assert "http://169.254.169.254/latest/meta-data/events/recommendations/rebalance" in asked


def test_a_rebalance_recommendation_acts_and_a_later_interruption_acts_again(trainer_node):
    trainer_node.imds("meta-data/events/recommendations/rebalance", REBALANCE)
    poll(trainer_node)
    assert len(trainer_node.calls("aws")) == 1
    trainer_node.imds("meta-data/spot/instance-action", ACTION)
    poll(trainer_node)
    poll(trainer_node)
    assert len(trainer_node.calls("aws")) == 2
    assert [c[0] for c in trainer_node.calls("docker")].count("kill") == 2


def test_two_notices_seen_together_act_once(trainer_node):
    trainer_node.imds("meta-data/events/recommendations/rebalance", REBALANCE)
    trainer_node.imds("meta-data/spot/instance-action", ACTION)
    poll(trainer_node)
    poll(trainer_node)
    assert len(trainer_node.calls("aws")) == 1


def test_rebalance_can_be_ignored(trainer_node):
    trainer_node.imds("meta-data/events/recommendations/rebalance", REBALANCE)
    poll(trainer_node, AISTACK_SPOT_ACT_ON_REBALANCE="0")
    assert trainer_node.calls("aws") == []


def test_a_custom_flush_command_and_process_signal(trainer_node):
    trainer_node.imds("meta-data/spot/instance-action", ACTION)
    flushed = trainer_node.root / "flushed"
    command = f"printf '%s\\n' \"$AISTACK_CHECKPOINT_URI\" >>{flushed}"
    poll(
        trainer_node,
        AISTACK_CHECKPOINT_FLUSH_CMD=command,
        AISTACK_TRAINER_SIGNAL="SIGUSR2",
        AISTACK_TRAINER_CONTAINER_LABEL="",
        AISTACK_TRAINER_PROCESS_NAME="torchrun",
    )
    poll(trainer_node, AISTACK_CHECKPOINT_FLUSH_CMD=command)
    assert flushed.read_text() == "s3://team-checkpoints/run-7\n"
    assert trainer_node.calls("pkill") == [["--signal", "USR2", "-x", "--", "torchrun"]]
    assert trainer_node.calls("docker") == []
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
        ["docker", "kill"],
        ["sleep", "30"],
        ["aws", "s3"],
    ]

"""idle-watchdog.sh: N idle checks in a row end the node; anything unreadable counts as busy."""

from __future__ import annotations

import os

import pytest

INSTANCE = "i-0123456789abcdef0"
TERMINATE = [
    "autoscaling",
    "terminate-instance-in-auto-scaling-group",
    "--instance-id",
    INSTANCE,
    "--should-decrement-desired-capacity",
]


@pytest.fixture
def idle_node(node):
    """Two idle GPUs, nothing running, nobody logged in."""
    node.answer("nvidia-smi", out="0\n3\n")
    node.answer("who", out="")
    return node


def check(node, times: int = 1, **env: str) -> None:
    for _ in range(times):
        node.run("idle-watchdog.sh", "--once", AISTACK_IDLE_MINUTES="3", **env)


def ended(node) -> bool:
    terminations = [call for call in node.calls("aws") if call[0] == "autoscaling"]
    return bool(terminations or node.calls("shutdown"))


def test_idle_for_n_checks_terminates_through_the_auto_scaling_group(idle_node):
    check(idle_node, 2)
    assert not ended(idle_node), "two idle checks of three must not end the node"
    check(idle_node)
    assert idle_node.calls("aws") == [TERMINATE]
    assert idle_node.calls("shutdown") == []
    assert idle_node.calls("nvidia-smi")[0] == [
        "--query-gpu=utilization.gpu",
        "--format=csv,noheader,nounits",
    ]


def test_the_instance_id_comes_from_imdsv2_with_a_session_token(idle_node):
    check(idle_node, 3)
    curls = idle_node.calls("curl")
    token_put = curls[0]
    assert "PUT" in token_put and token_put[-1] == "http://169.254.169.254/latest/api/token"
    assert "X-aws-ec2-metadata-token-ttl-seconds: 3600" in token_put
    gets = [c for c in curls if c[-1].endswith("/latest/meta-data/instance-id")]
    assert gets and "X-aws-ec2-metadata-token: TOKEN-1" in gets[0]


def test_a_busy_gpu_resets_the_count(idle_node):
    check(idle_node, 2)
    idle_node.answer("nvidia-smi", out="0\n97\n")
    check(idle_node)
    idle_node.answer("nvidia-smi", out="0\n0\n")
    check(idle_node, 2)
    assert not ended(idle_node)
    assert (idle_node.state / "idle-checks").read_text() == "2\n"
    check(idle_node)
    assert idle_node.calls("aws") == [TERMINATE]


@pytest.mark.parametrize(
    ("why", "setup"),
    [
        ("nvidia-smi fails", lambda n: n.answer("nvidia-smi", rc=9)),
        ("nvidia-smi is missing", lambda n: n.unstub("nvidia-smi")),
        ("nvidia-smi prints garbage", lambda n: n.answer("nvidia-smi", out="[N/A]\n")),
        ("nvidia-smi lists no GPU", lambda n: n.answer("nvidia-smi", out="")),
        ("someone is logged in", lambda n: n.answer("who", out="ubuntu pts/0 2024-06-01 10:00\n")),
        ("who fails", lambda n: n.answer("who", rc=1)),
        ("a container runs", lambda n: (n.stub("docker"), n.answer("docker", out="trainer\n"))),
        ("docker fails", lambda n: (n.stub("docker"), n.answer("docker", rc=1))),
        ("a watched process runs", lambda n: n.answer("pgrep", rc=0)),
        ("pgrep fails", lambda n: n.answer("pgrep", rc=3)),
        (
            "an SSH connection is open",
            lambda n: (
                n.stub("ss"),
                n.answer("ss", out="Recv-Q Send-Q Local Peer\n0 0 10.0.0.5:22 10.0.0.9:51234\n"),
            ),
        ),
        (
            "a live process holds the node",
            lambda n: (
                (n.state / "hold").mkdir(parents=True),
                (n.state / "hold" / "bootstrap.pid").write_text(f"{os.getpid()}\n"),
            ),
        ),
    ],
)
def test_the_node_is_busy_when(idle_node, why, setup):
    setup(idle_node)
    check(idle_node, 4)
    assert not ended(idle_node), f"the node was ended although {why}"
    assert idle_node.log("idle-watchdog").count("busy:") == 4


def test_what_does_not_make_the_node_busy(idle_node):
    idle_node.stub("docker")
    idle_node.answer("docker", out="ecs-agent\n")  # the ECS agent runs on every Batch node
    idle_node.stub("ss")
    idle_node.answer("ss", out="Recv-Q Send-Q Local Peer")  # header only: no connection
    (idle_node.state / "hold").mkdir(parents=True)
    (idle_node.state / "hold" / "gone.pid").write_text("999999999\n")  # a dead holder
    check(idle_node, 3)
    assert idle_node.calls("aws") == [TERMINATE]
    assert ["-x", "--", "ssm-session-worker"] in idle_node.calls("pgrep")


def test_a_batch_node_halts_instead(idle_node):
    check(idle_node, 3, AISTACK_SCHEDULER="batch")
    assert idle_node.calls("shutdown") == [["-h", "now"]]
    assert idle_node.calls("aws") == []


def test_a_failed_auto_scaling_call_still_halts_the_node(idle_node):
    idle_node.answer("aws", rc=255)
    check(idle_node, 3)
    assert idle_node.calls("aws") == [TERMINATE]
    assert idle_node.calls("shutdown") == [["-h", "now"]]


def test_termination_is_requested_once_not_every_minute(idle_node):
    check(idle_node, 5)
    assert idle_node.calls("aws") == [TERMINATE]


def test_the_loop_is_bounded_by_max_iterations(idle_node):
    idle_node.run(
        "idle-watchdog.sh",
        AISTACK_IDLE_MINUTES="3",
        AISTACK_IDLE_CHECK_SECONDS="1",
        AISTACK_MAX_ITERATIONS="1",
    )
    assert len(idle_node.calls("nvidia-smi")) == 1


def test_a_bad_setting_stops_the_watchdog_before_it_checks(idle_node):
    result = idle_node.run(
        "idle-watchdog.sh", "--once", check=False, AISTACK_IDLE_GPU_UTIL_PERCENT="five"
    )
    assert result.returncode == 2
    assert "AISTACK_IDLE_GPU_UTIL_PERCENT must be a whole number" in result.stderr
    assert idle_node.calls() == []

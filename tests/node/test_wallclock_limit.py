"""wallclock-limit.sh: past AISTACK_MAX_RUNTIME_MINUTES from first boot, the node ends."""

from __future__ import annotations

import time

TERMINATE = [
    "autoscaling",
    "terminate-instance-in-auto-scaling-group",
    "--instance-id",
    "i-0123456789abcdef0",
    "--should-decrement-desired-capacity",
]


def boot(node, minutes_ago: int) -> None:
    node.env["AISTACK_PROC_STAT"] = str(node.root / "proc-stat")
    (node.root / "proc-stat").write_text(
        f"cpu  1 2 3 4\nbtime {int(time.time()) - minutes_ago * 60}\nprocesses 42\n"
    )


def test_past_the_limit_the_node_is_terminated(node):
    boot(node, minutes_ago=61)
    node.run("wallclock-limit.sh", "--once", AISTACK_MAX_RUNTIME_MINUTES="60")
    assert node.calls("aws") == [TERMINATE]


def test_within_the_limit_nothing_happens_and_the_start_is_recorded(node):
    boot(node, minutes_ago=10)
    node.run("wallclock-limit.sh", "--once", AISTACK_MAX_RUNTIME_MINUTES="60")
    assert node.calls("aws") == node.calls("shutdown") == []
    recorded = int((node.state / "wallclock-start").read_text())
    assert abs(recorded - (time.time() - 600)) < 5


def test_a_reboot_does_not_reset_the_clock(node):
    boot(node, minutes_ago=50)
    node.run("wallclock-limit.sh", "--once", AISTACK_MAX_RUNTIME_MINUTES="60")
    boot(node, minutes_ago=1)  # rebooted: btime is recent, the recorded start is not
    (node.state / "wallclock-start").write_text(f"{int(time.time()) - 61 * 60}\n")
    node.run("wallclock-limit.sh", "--once", AISTACK_MAX_RUNTIME_MINUTES="60")
    assert node.calls("aws") == [TERMINATE]


def test_a_batch_node_halts_at_the_limit(node):
    boot(node, minutes_ago=200)
    node.run(
        "wallclock-limit.sh", "--once", AISTACK_MAX_RUNTIME_MINUTES="120", AISTACK_SCHEDULER="batch"
    )
    assert node.calls("shutdown") == [["-h", "now"]]
    assert node.calls("aws") == []


def test_the_limit_is_required(node):
    for value in ("", "0", "ten"):
        result = node.run(
            "wallclock-limit.sh", "--once", check=False, AISTACK_MAX_RUNTIME_MINUTES=value
        )
        assert result.returncode == 2
        assert "AISTACK_MAX_RUNTIME_MINUTES must be a whole number >= 1" in result.stderr
    assert node.calls() == []

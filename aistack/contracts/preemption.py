"""How long each cloud gives a Spot node between the notice and its end, and the timing of
the checkpoint flush that must fit in it (T1).

The node config (`aistack.node.NodeBootstrapConfig`) takes its per-platform defaults and
its limits from here, the spot watch (`aistack/node/scripts/spot-watch.sh`) runs them, and
rule AIS-T1-05 reads them back from the rendered node config in the graph: one set of
numbers, never copied.

Platform facts:

- Compute Engine: when it preempts a Spot VM, `instance/preempted` turns TRUE and the guest
  gets an ACPI G2 soft-off at once; an ACPI G3 mechanical off follows 30 s later if the VM
  has not stopped (docs.cloud.google.com/compute/docs/instances/spot, "Preemption
  process"; the Compute API's `Scheduling.skipGuestOsShutdown`: "there will be ... 30
  seconds for Spot VMs" between G2 and G3). The soft-off starts the guest's shutdown at
  the moment of the notice, so the flush has the 30 s on two paths: the watch's poll, and
  the stop of its systemd unit (which the shutdown begins).
- Compute Engine host maintenance: a GPU VM cannot live-migrate and gets
  `instance/maintenance-event` TERMINATE_ON_HOST_MAINTENANCE an hour before it is stopped
  (cloud.google.com/compute/docs/gpus/gpu-host-maintenance): time for a longer pause.
- EC2: "A Spot Instance interruption notice is a warning that is issued two minutes before
  Amazon EC2 stops or terminates your Spot Instance"; AWS recommends checking for it every
  5 seconds (docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-
  notices.html). The instance shuts down at the end of the two minutes, so on EC2 the poll
  is the path measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "FLUSH_TIMING",
    "MIN_UPLOAD_SECONDS",
    "PREEMPTION_NOTICE_SECONDS",
    "FlushTiming",
    "flush_budget_problem",
]

Cloud = Literal["aws", "gcp"]

#: Seconds from the notice to the node's end (sources in the module docstring).
PREEMPTION_NOTICE_SECONDS: dict[str, int] = {"gcp": 30, "aws": 120}

#: Seconds of the notice that must be left to the upload itself once the flush starts: half
#: the notice. What a flush can upload in that time is all that survives a preemption beyond
#: the trainer's periodic checkpoint uploads (docs/components/gcp/training-pool.md).
MIN_UPLOAD_SECONDS: dict[str, int] = {
    cloud: notice // 2 for cloud, notice in PREEMPTION_NOTICE_SECONDS.items()
}


@dataclass(frozen=True)
class FlushTiming:
    """The spot watch's defaults on one cloud."""

    #: Seconds between metadata polls: the worst wait before a notice is seen.
    poll_seconds: int
    #: Pause between signalling the trainer and the flush, on a Spot notice.
    flush_delay_seconds: int
    #: The same pause on GCP's host-maintenance notice (an hour's warning).
    maintenance_flush_delay_seconds: int
    #: TimeoutStopSec of the spot watch's unit: how long its last flush may take once the
    #: shutdown stops it.
    stop_timeout_seconds: int


FLUSH_TIMING: dict[str, FlushTiming] = {
    # GCE: 2 + 5 leaves 23 of the 30 s to the upload; the unit's stop (which the soft-off
    # starts with the notice) gets 25 s, ending before the G3 power-off at 30 s.
    "gcp": FlushTiming(
        poll_seconds=2,
        flush_delay_seconds=5,
        maintenance_flush_delay_seconds=30,
        stop_timeout_seconds=25,
    ),
    # EC2: AWS's recommended 5 s poll and 30 s for the trainer leave 85 of the 120 s; the
    # stop comes after the notice, so its timeout is systemd's default (DefaultTimeoutStopSec,
    # 90 s, systemd-system.conf(5)).
    "aws": FlushTiming(
        poll_seconds=5,
        flush_delay_seconds=30,
        maintenance_flush_delay_seconds=30,
        stop_timeout_seconds=90,
    ),
}


def flush_budget_problem(
    cloud: str, *, poll_seconds: int, flush_delay_seconds: int, stop_timeout_seconds: int | None
) -> str | None:
    """Why these settings cannot flush within `cloud`'s preemption notice, or None.

    Poll path: a notice seen up to `poll_seconds` late, then `flush_delay_seconds` before the
    upload starts, must leave MIN_UPLOAD_SECONDS of the notice. Stop path (GCP, where the
    soft-off comes with the notice): the unit's stop must end within the notice and leave the
    upload its seconds after the delay."""
    notice = PREEMPTION_NOTICE_SECONDS[cloud]
    upload = MIN_UPLOAD_SECONDS[cloud]
    start = poll_seconds + flush_delay_seconds
    if start + upload > notice:
        return (
            f"the flush starts up to {start} s after the notice (poll {poll_seconds} s + delay "
            f"{flush_delay_seconds} s), leaving {max(notice - start, 0)} s of the "
            f"{notice} s notice; at least {upload} s must be left for the upload"
        )
    if cloud == "gcp" and stop_timeout_seconds is not None:
        if stop_timeout_seconds > notice:
            return (
                f"the unit's stop may take {stop_timeout_seconds} s, past the G3 power-off "
                f"{notice} s after the notice"
            )
        if flush_delay_seconds + upload > stop_timeout_seconds:
            return (
                f"on the stop path the delay ({flush_delay_seconds} s) leaves "
                f"{max(stop_timeout_seconds - flush_delay_seconds, 0)} s of the unit's "
                f"{stop_timeout_seconds} s stop timeout; at least {upload} s must be left"
            )
    return None

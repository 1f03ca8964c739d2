#!/usr/bin/env bash
# wallclock-limit.sh: end this node once it has run AISTACK_MAX_RUNTIME_MINUTES (T5).
#
# The clock starts at the node's first boot (btime in /proc/stat, recorded in
# $AISTACK_STATE_DIR/wallclock-start on the first run, so a reboot does not reset it). Past
# the deadline the node ends itself the same way as the idle watchdog (terminate_node in
# lib.sh), whatever it is running: this is the hard limit behind every softer one.
#
# Usage: wallclock-limit.sh [--once]   (--once: one check, then exit)
#
# Environment:
#   AISTACK_MAX_RUNTIME_MINUTES      the limit in minutes (required, > 0)
#   AISTACK_WALLCLOCK_CHECK_SECONDS  seconds between checks                       (default 60)
#   AISTACK_PROC_STAT                where the boot time is read         (default /proc/stat)
#   AISTACK_SCHEDULER, AISTACK_TERMINATE_MODE, AISTACK_STATE_DIR, AISTACK_LOG_DIR,
#   AISTACK_MAX_ITERATIONS, AISTACK_IMDS_*: see lib.sh
# Commands: curl, aws, shutdown.

set -euo pipefail
AISTACK_SCRIPT=wallclock-limit
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

AISTACK_WALLCLOCK_CHECK_SECONDS=${AISTACK_WALLCLOCK_CHECK_SECONDS:-60}
AISTACK_PROC_STAT=${AISTACK_PROC_STAT:-/proc/stat}

boot_time() {
  local key value
  if [[ -r $AISTACK_PROC_STAT ]]; then
    while read -r key value _; do
      if [[ $key == btime && $value =~ ^[0-9]+$ ]]; then
        printf '%s' "$value"
        return 0
      fi
    done <"$AISTACK_PROC_STAT"
  fi
  now
}

# The epoch second the clock started: recorded on the first run, read back afterwards.
start_time() {
  local start
  start=$(state_get wallclock-start "")
  if ! [[ $start =~ ^[0-9]+$ ]]; then
    start=$(boot_time)
    state_set wallclock-start "$start"
  fi
  printf '%s' "$start"
}

check() {
  local deadline
  deadline=$(($(start_time) + 10#$AISTACK_MAX_RUNTIME_MINUTES * 60))
  if (($(now) >= deadline)); then
    terminate_node "wall-clock limit of $AISTACK_MAX_RUNTIME_MINUTES minutes reached"
  fi
}

main() {
  parse_args "$@"
  require_int AISTACK_MAX_RUNTIME_MINUTES 1
  require_int AISTACK_WALLCLOCK_CHECK_SECONDS 1
  terminate_mode >/dev/null
  prepare_dirs
  log "deadline: $AISTACK_MAX_RUNTIME_MINUTES minutes after $(start_time) (epoch seconds)"
  run_loop check "$AISTACK_WALLCLOCK_CHECK_SECONDS"
}

main "$@"

#!/usr/bin/env bash
# idle-watchdog.sh: end this node after it has been idle for N consecutive checks (C5).
#
# A check finds the node idle when every GPU is below the utilisation threshold, no
# container or configured process is running, nobody is logged in over SSH and no hold
# (see lib.sh) is alive. A signal that cannot be read (nvidia-smi missing or failing,
# docker failing) counts as busy: the watchdog never ends a node on a guess. An unreadable
# GPU is also reported at every check (node_report in lib.sh: a log line naming nvidia-smi
# and the fix, the boot-status state, a guest attribute on GCP or the NodeToolMissing
# metric on AWS), since such a node only ends at its wall clock. The count of
# consecutive idle checks survives restarts in $AISTACK_STATE_DIR/idle-checks. When it
# reaches AISTACK_IDLE_MINUTES the node ends itself (see terminate_node in lib.sh).
#
# Usage: idle-watchdog.sh [--once]   (--once: one check, then exit)
#
# Environment:
#   AISTACK_IDLE_MINUTES           idle checks in a row before the node ends      (default 30)
#   AISTACK_IDLE_GPU_UTIL_PERCENT  a GPU below this utilisation is idle            (default 5)
#   AISTACK_IDLE_CHECK_SECONDS     seconds between checks                         (default 60)
#   AISTACK_IDLE_PROCESS_NAMES     space-separated process names that mean busy
#                                                           (default ssm-session-worker)
#   AISTACK_IDLE_IGNORE_CONTAINERS space-separated container names that do not count
#                                  (default ecs-agent, always running on ECS/Batch nodes)
#   AISTACK_SSH_PORT               established connections to it mean busy        (default 22)
#   AISTACK_SCHEDULER, AISTACK_TERMINATE_MODE, AISTACK_STATE_DIR, AISTACK_LOG_DIR,
#   AISTACK_MAX_ITERATIONS, AISTACK_IMDS_*: see lib.sh
# Commands: nvidia-smi, docker (when installed), pgrep, who, ss (when installed), curl,
# aws, shutdown.

set -euo pipefail
AISTACK_SCRIPT=idle-watchdog
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

AISTACK_IDLE_MINUTES=${AISTACK_IDLE_MINUTES:-30}
AISTACK_IDLE_GPU_UTIL_PERCENT=${AISTACK_IDLE_GPU_UTIL_PERCENT:-5}
AISTACK_IDLE_CHECK_SECONDS=${AISTACK_IDLE_CHECK_SECONDS:-60}
AISTACK_IDLE_PROCESS_NAMES=${AISTACK_IDLE_PROCESS_NAMES-ssm-session-worker}
AISTACK_IDLE_IGNORE_CONTAINERS=${AISTACK_IDLE_IGNORE_CONTAINERS-ecs-agent}
AISTACK_SSH_PORT=${AISTACK_SSH_PORT:-22}

# Each *_busy function prints why the node is busy and succeeds, or fails when idle.

gpu_busy() {
  local out util
  if ! out=$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits 2>/dev/null)
  then
    echo "GPU utilisation unreadable (nvidia-smi missing or failing)"
    return 0
  fi
  if [[ -z ${out//[[:space:]]/} ]]; then
    echo "nvidia-smi listed no GPU"
    return 0
  fi
  while read -r util; do
    if ! [[ $util =~ ^[0-9]+$ ]]; then
      echo "GPU utilisation unreadable ('$util')"
      return 0
    fi
    if ((10#$util >= AISTACK_IDLE_GPU_UTIL_PERCENT)); then
      echo "a GPU is ${util}% utilised"
      return 0
    fi
  done <<<"$out"
  return 1
}

containers_busy() {
  local names name
  if ! command -v docker >/dev/null 2>&1; then
    return 1 # no container runtime, so no containers
  fi
  if ! names=$(docker ps --format '{{.Names}}' 2>/dev/null); then
    echo "docker ps failed"
    return 0
  fi
  for name in $names; do
    if [[ " $AISTACK_IDLE_IGNORE_CONTAINERS " != *" $name "* ]]; then
      echo "container $name is running"
      return 0
    fi
  done
  return 1
}

processes_busy() {
  local name status
  for name in $AISTACK_IDLE_PROCESS_NAMES; do
    status=0
    pgrep -x -- "$name" >/dev/null 2>&1 || status=$?
    case $status in
      0) echo "process $name is running"; return 0 ;;
      1) ;;
      *) echo "pgrep failed (status $status)"; return 0 ;;
    esac
  done
  return 1
}

ssh_busy() {
  local sessions
  if ! sessions=$(who 2>/dev/null); then
    echo "who failed"
    return 0
  fi
  if [[ -n $sessions ]]; then
    echo "someone is logged in"
    return 0
  fi
  if command -v ss >/dev/null 2>&1; then
    if ! sessions=$(ss -tn state established "( sport = :$AISTACK_SSH_PORT )" 2>/dev/null)
    then
      echo "ss failed"
      return 0
    fi
    # The first line is ss's header; any line after it is a connection.
    if [[ $sessions == *$'\n'* ]]; then
      echo "an SSH connection is open"
      return 0
    fi
  fi
  return 1
}

holds_busy() {
  local file pid
  for file in "$AISTACK_STATE_DIR"/hold/*.pid; do
    [[ -e $file ]] || continue
    read -r pid <"$file" || continue
    if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
      echo "held by ${file##*/}"
      return 0
    fi
  done
  return 1
}

busy_reason() {
  gpu_busy || containers_busy || processes_busy || ssh_busy || holds_busy
}

check() {
  local reason count
  if reason=$(busy_reason); then
    log "busy: $reason"
    # Busy on a guess is safe for a running job but keeps a node whose driver never loaded
    # alive until its wall clock: say so at every check, where the monitoring sees it.
    if [[ $reason == "GPU utilisation unreadable"* || $reason == "nvidia-smi listed no GPU" ]]
    then
      node_report degraded nvidia-smi "$reason: the idle watchdog counts this node busy" \
        "and never ends it; only the wall clock (T5) does" -- \
        "make the NVIDIA driver load (docs/real-boot.md: a boot image with the driver" \
        "built in and signed for Secure Boot), or delete the node by hand"
    fi
    state_set idle-checks 0
    return 0
  fi
  count=$(state_get idle-checks 0)
  [[ $count =~ ^[0-9]+$ ]] || count=0
  count=$((10#$count + 1))
  state_set idle-checks "$count"
  log "idle: check $count of $AISTACK_IDLE_MINUTES"
  if ((count >= AISTACK_IDLE_MINUTES)); then
    terminate_node "idle for $count consecutive checks"
  fi
}

main() {
  parse_args "$@"
  require_int AISTACK_IDLE_MINUTES 1
  require_int AISTACK_IDLE_GPU_UTIL_PERCENT 0
  require_int AISTACK_IDLE_CHECK_SECONDS 1
  terminate_mode >/dev/null
  prepare_dirs
  run_loop check "$AISTACK_IDLE_CHECK_SECONDS"
}

main "$@"

#!/usr/bin/env bash
# spot-watch.sh: on a spot interruption or rebalance notice, signal the trainer and flush
# its last checkpoint to durable storage (T1).
#
# Polls the instance metadata service (IMDSv2) for spot/instance-action and
# events/recommendations/rebalance; 404 means no notice. Each notice is acted on once
# (its text is recorded in $AISTACK_STATE_DIR/spot-notices): the trainer gets
# AISTACK_TRAINER_SIGNAL, then, after AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS for it to write
# its checkpoint, the checkpoint directory is flushed. A trainer should write checkpoints
# under a temporary name and rename them, so a flush never copies half a file.
#
# Usage: spot-watch.sh [--once]   (--once: one poll, then exit)
#
# Environment:
#   AISTACK_SPOT_POLL_SECONDS        seconds between polls                        (default 5)
#   AISTACK_SPOT_ACT_ON_REBALANCE    1: a rebalance recommendation counts too     (default 1)
#   AISTACK_TRAINER_SIGNAL           signal for the trainer                    (default USR1)
#   AISTACK_TRAINER_CONTAINER_LABEL  running containers with this label get it
#                                    (default aistack.trainer; empty: none)
#   AISTACK_TRAINER_PROCESS_NAME     processes with exactly this name get it (default: none)
#   AISTACK_CHECKPOINT_DIR           local checkpoint directory
#   AISTACK_CHECKPOINT_URI           s3:// destination of the flush
#   AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS  pause between the signal and the flush (default 30)
#   AISTACK_CHECKPOINT_FLUSH_CMD     flush command, run with bash -c (default, when the
#                                    dir and the URI are set:
#                                    aws s3 sync "$AISTACK_CHECKPOINT_DIR" "$AISTACK_CHECKPOINT_URI")
#   AISTACK_STATE_DIR, AISTACK_LOG_DIR, AISTACK_MAX_ITERATIONS, AISTACK_IMDS_*: see lib.sh
# Commands: curl, docker (when installed), pkill, aws, grep, sleep.

set -euo pipefail
AISTACK_SCRIPT=spot-watch
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

AISTACK_SPOT_POLL_SECONDS=${AISTACK_SPOT_POLL_SECONDS:-5}
AISTACK_SPOT_ACT_ON_REBALANCE=${AISTACK_SPOT_ACT_ON_REBALANCE:-1}
AISTACK_TRAINER_SIGNAL=${AISTACK_TRAINER_SIGNAL:-USR1}
AISTACK_TRAINER_SIGNAL=${AISTACK_TRAINER_SIGNAL#SIG}
AISTACK_TRAINER_CONTAINER_LABEL=${AISTACK_TRAINER_CONTAINER_LABEL-aistack.trainer}
AISTACK_TRAINER_PROCESS_NAME=${AISTACK_TRAINER_PROCESS_NAME:-}
AISTACK_CHECKPOINT_DIR=${AISTACK_CHECKPOINT_DIR:-}
AISTACK_CHECKPOINT_URI=${AISTACK_CHECKPOINT_URI:-}
AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS=${AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS:-30}
AISTACK_CHECKPOINT_FLUSH_CMD=${AISTACK_CHECKPOINT_FLUSH_CMD:-}
NOTICES_FILE=$AISTACK_STATE_DIR/spot-notices

# read_notice PATH: print the notice at metadata PATH; fail when there is none.
read_notice() {
  local body status=0
  body=$(imds_get "$1") || status=$?
  case $status in
    0) printf '%s' "${body//[$'\r\n']/}" ;;
    1) return 1 ;;
    *) log "cannot read metadata $1"; return 1 ;;
  esac
}

notice_handled() {
  [[ -r $NOTICES_FILE ]] && grep -qxF -- "$1" "$NOTICES_FILE"
}

signal_trainer() {
  local ids
  if [[ -n $AISTACK_TRAINER_CONTAINER_LABEL ]] && command -v docker >/dev/null 2>&1; then
    if ! ids=$(docker ps -q --filter "label=$AISTACK_TRAINER_CONTAINER_LABEL"); then
      log "docker ps failed; no container signalled"
    elif [[ -z $ids ]]; then
      log "no running container has label $AISTACK_TRAINER_CONTAINER_LABEL"
    else
      # shellcheck disable=SC2086 # one container id per word
      if docker kill --signal="$AISTACK_TRAINER_SIGNAL" $ids >/dev/null; then
        log "sent SIG$AISTACK_TRAINER_SIGNAL to containers:" $ids
      else
        log "docker kill --signal=$AISTACK_TRAINER_SIGNAL failed"
      fi
    fi
  fi
  if [[ -n $AISTACK_TRAINER_PROCESS_NAME ]]; then
    if pkill --signal "$AISTACK_TRAINER_SIGNAL" -x -- "$AISTACK_TRAINER_PROCESS_NAME"; then
      log "sent SIG$AISTACK_TRAINER_SIGNAL to processes named $AISTACK_TRAINER_PROCESS_NAME"
    else
      log "no process named $AISTACK_TRAINER_PROCESS_NAME was signalled"
    fi
  fi
}

flush_checkpoint() {
  if ((AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS > 0)); then
    sleep "$AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS"
  fi
  if [[ -n $AISTACK_CHECKPOINT_FLUSH_CMD ]]; then
    log "flushing checkpoints: $AISTACK_CHECKPOINT_FLUSH_CMD"
    "$BASH" -c "$AISTACK_CHECKPOINT_FLUSH_CMD" >&2
  elif [[ -n $AISTACK_CHECKPOINT_DIR && -n $AISTACK_CHECKPOINT_URI ]]; then
    log "flushing $AISTACK_CHECKPOINT_DIR to $AISTACK_CHECKPOINT_URI"
    aws s3 sync "$AISTACK_CHECKPOINT_DIR" "$AISTACK_CHECKPOINT_URI" --only-show-errors >&2
  else
    log "no checkpoint flush configured (AISTACK_CHECKPOINT_DIR and _URI, or _FLUSH_CMD)"
  fi
}

# One poll. New notices seen together are acted on once, then all recorded.
check() {
  local notice
  local -a fresh=()
  if ! imds_refresh_token; then
    log "metadata service unreachable; cannot see notices"
    return 1
  fi
  if notice=$(read_notice meta-data/spot/instance-action); then
    notice_handled "interruption $notice" || fresh+=("interruption $notice")
  fi
  if ((AISTACK_SPOT_ACT_ON_REBALANCE)) &&
    notice=$(read_notice meta-data/events/recommendations/rebalance); then
    notice_handled "rebalance $notice" || fresh+=("rebalance $notice")
  fi
  ((${#fresh[@]})) || return 0
  log "notice: ${fresh[*]}"
  signal_trainer
  if ! flush_checkpoint; then
    log "checkpoint flush failed"
  fi
  printf '%s\n' "${fresh[@]}" >>"$NOTICES_FILE"
}

main() {
  parse_args "$@"
  require_int AISTACK_SPOT_POLL_SECONDS 1
  require_int AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS 0
  [[ $AISTACK_SPOT_ACT_ON_REBALANCE =~ ^[01]$ ]] ||
    die "AISTACK_SPOT_ACT_ON_REBALANCE must be 0 or 1"
  [[ $AISTACK_TRAINER_SIGNAL =~ ^[A-Z][A-Z0-9]*$ ]] ||
    die "AISTACK_TRAINER_SIGNAL must be a signal name like USR1"
  prepare_dirs
  run_loop check "$AISTACK_SPOT_POLL_SECONDS"
}

main "$@"

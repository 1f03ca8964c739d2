#!/usr/bin/env bash
# spot-watch.sh: on a spot interruption notice, signal the trainers that asked for it and
# flush the last checkpoint to durable storage (T1); on a rebalance recommendation, flush.
#
# Polls the instance metadata service (IMDSv2) for spot/instance-action and
# events/recommendations/rebalance; 404 means no notice. Each notice is acted on once
# (its text is recorded in $AISTACK_STATE_DIR/spot-notices). An interruption notice sends
# each opted-in trainer its signal, then, after AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS for
# it to write its checkpoint, flushes the checkpoint directory. A rebalance recommendation
# only flushes: it is not a reclaim, and most are never followed by one, so it must not
# end a healthy run.
#
# Only containers that opt in are signalled: a signal's default action is to end the
# process (signal(7): SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGHUP are all "Term"), so a
# trainer without a handler would die at once (status 138 for SIGUSR1). A container opts in
# with the label AISTACK_TRAINER_CONTAINER_LABEL (on the image or the container) or the
# environment variable AISTACK_CHECKPOINT_SIGNAL (how an AWS Batch job does it), whose
# value names the signal, e.g. USR1. A trainer should write checkpoints under a temporary
# name and rename them, so a flush never copies half a file; after checkpointing on the
# signal it exits 138 (128 + SIGUSR1) to be run again, which the Batch job definition of
# aws.TrainingPool retries.
#
# On GCP (AISTACK_CLOUD=gcp) the interruption notice is the metadata server's
# instance/preempted turning TRUE or instance/maintenance-event reading
# TERMINATE_ON_HOST_MAINTENANCE (lib.sh, gce_interruption_notice); GCP has no rebalance
# recommendation, and the flush goes through `gcloud storage rsync` to a gs:// URI.
#
# Usage: spot-watch.sh [--once]   (--once: one poll, then exit)
#
# Environment:
#   AISTACK_SPOT_POLL_SECONDS        seconds between polls                        (default 5)
#   AISTACK_SPOT_ACT_ON_REBALANCE    1: flush on a rebalance recommendation too   (default 1)
#   AISTACK_TRAINER_CONTAINER_LABEL  label that opts a running container in; its value is
#                                    the signal (default aistack.checkpoint-signal; empty:
#                                    labels opt nothing in)
#   AISTACK_CHECKPOINT_SIGNAL        not read here: the container environment variable that
#                                    opts a container in; its value is the signal
#   AISTACK_TRAINER_SIGNAL           signal for AISTACK_TRAINER_PROCESS_NAME   (default USR1)
#   AISTACK_TRAINER_PROCESS_NAME     processes with exactly this name get it (default: none)
#   AISTACK_CHECKPOINT_DIR           local checkpoint directory
#   AISTACK_CHECKPOINT_URI           s3:// (gs:// on GCP) destination of the flush
#   AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS  pause between the signal and the flush (default 30)
#   AISTACK_CHECKPOINT_FLUSH_CMD     flush command, run with bash -c (default, when the
#                                    dir and the URI are set:
#                                    aws s3 sync "$AISTACK_CHECKPOINT_DIR" "$AISTACK_CHECKPOINT_URI")
#   AISTACK_STATE_DIR, AISTACK_LOG_DIR, AISTACK_MAX_ITERATIONS, AISTACK_IMDS_*,
#   AISTACK_CLOUD, AISTACK_GCE_METADATA: see lib.sh
# Commands: curl, docker (when installed), pkill, aws (gcloud on GCP), grep, sleep.

set -euo pipefail
AISTACK_SCRIPT=spot-watch
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

AISTACK_SPOT_POLL_SECONDS=${AISTACK_SPOT_POLL_SECONDS:-5}
AISTACK_SPOT_ACT_ON_REBALANCE=${AISTACK_SPOT_ACT_ON_REBALANCE:-1}
AISTACK_TRAINER_SIGNAL=${AISTACK_TRAINER_SIGNAL:-USR1}
AISTACK_TRAINER_SIGNAL=${AISTACK_TRAINER_SIGNAL#SIG}
AISTACK_TRAINER_CONTAINER_LABEL=${AISTACK_TRAINER_CONTAINER_LABEL-aistack.checkpoint-signal}
AISTACK_TRAINER_PROCESS_NAME=${AISTACK_TRAINER_PROCESS_NAME:-}
AISTACK_CHECKPOINT_DIR=${AISTACK_CHECKPOINT_DIR:-}
AISTACK_CHECKPOINT_URI=${AISTACK_CHECKPOINT_URI:-}
AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS=${AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS:-30}
AISTACK_CHECKPOINT_FLUSH_CMD=${AISTACK_CHECKPOINT_FLUSH_CMD:-}
NOTICES_FILE=$AISTACK_STATE_DIR/spot-notices
readonly OPT_IN_ENV=AISTACK_CHECKPOINT_SIGNAL
SIGNALLED=0

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

# opted_in_containers: "id signal" for each running container that asked for a signal, by
# its label or its environment. One `docker inspect` for all of them.
opted_in_containers() {
  local ids id label env_signal format=""
  ids=$(docker ps -q) || return 1
  [[ -n $ids ]] || return 0
  if [[ -n $AISTACK_TRAINER_CONTAINER_LABEL ]]; then
    format="{{index .Config.Labels \"$AISTACK_TRAINER_CONTAINER_LABEL\"}}"
  fi
  format="{{.Id}}|$format|{{range .Config.Env}}{{if eq (index (split . \"=\") 0) \"$OPT_IN_ENV\"}}"
  format+='{{index (split . "=") 1}}{{end}}{{end}}'
  # A container that stops meanwhile fails its part of the inspect; the others still count.
  # shellcheck disable=SC2086 # one container id per word
  { docker inspect --format "$format" $ids || log "docker inspect failed for a container"; } |
    while IFS='|' read -r id label env_signal; do
      [[ $label == "<no value>" ]] && label=""
      if [[ -n ${label:-$env_signal} ]]; then
        printf '%s %s\n' "${id:0:12}" "${label:-$env_signal}"
      fi
    done
}

signal_trainer() {
  local listing id signal
  if command -v docker >/dev/null 2>&1; then
    if ! listing=$(opted_in_containers); then
      log "listing the running containers failed; no container signalled"
    elif [[ -z $listing ]]; then
      log "no running container opted in (label $AISTACK_TRAINER_CONTAINER_LABEL or" \
        "environment $OPT_IN_ENV); none signalled"
    else
      while read -r id signal; do
        signal=${signal#SIG}
        if ! [[ $signal =~ ^[A-Z][A-Z0-9]*$ ]]; then
          log "container $id asks for '$signal', which is not a signal name; not signalled"
        elif docker kill --signal="$signal" "$id" >/dev/null; then
          log "sent SIG$signal to container $id"
          SIGNALLED=1
        else
          log "docker kill --signal=$signal $id failed"
        fi
      done <<<"$listing"
    fi
  fi
  if [[ -n $AISTACK_TRAINER_PROCESS_NAME ]]; then
    if pkill --signal "$AISTACK_TRAINER_SIGNAL" -x -- "$AISTACK_TRAINER_PROCESS_NAME"; then
      log "sent SIG$AISTACK_TRAINER_SIGNAL to processes named $AISTACK_TRAINER_PROCESS_NAME"
      SIGNALLED=1
    else
      log "no process named $AISTACK_TRAINER_PROCESS_NAME was signalled"
    fi
  fi
}

# flush_checkpoint: upload the checkpoint directory; after a signal, first give the trainer
# the flush delay to write its checkpoint.
flush_checkpoint() {
  if ((SIGNALLED && AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS > 0)); then
    sleep "$AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS"
  fi
  if [[ -n $AISTACK_CHECKPOINT_FLUSH_CMD ]]; then
    log "flushing checkpoints: $AISTACK_CHECKPOINT_FLUSH_CMD"
    "$BASH" -c "$AISTACK_CHECKPOINT_FLUSH_CMD" >&2
  elif [[ -n $AISTACK_CHECKPOINT_DIR && -n $AISTACK_CHECKPOINT_URI ]]; then
    log "flushing $AISTACK_CHECKPOINT_DIR to $AISTACK_CHECKPOINT_URI"
    # [gcp]
    if [[ $AISTACK_CLOUD == gcp ]]; then
      gcs_rsync "$AISTACK_CHECKPOINT_DIR" "$AISTACK_CHECKPOINT_URI"
      return
    fi
    # [/gcp]
    aws s3 sync "$AISTACK_CHECKPOINT_DIR" "$AISTACK_CHECKPOINT_URI" --only-show-errors >&2
  else
    log "no checkpoint flush configured (AISTACK_CHECKPOINT_DIR and _URI, or _FLUSH_CMD)"
  fi
}

# One poll. New notices seen together are acted on once, then all recorded.
check() {
  local notice interruption=0
  local -a fresh=()
  if ! imds_refresh_token; then
    log "metadata service unreachable; cannot see notices"
    return 1
  fi
  if notice=$(read_notice meta-data/spot/instance-action); then
    if ! notice_handled "interruption $notice"; then
      fresh+=("interruption $notice")
      interruption=1
    fi
  fi
  if ((AISTACK_SPOT_ACT_ON_REBALANCE)) &&
    notice=$(read_notice meta-data/events/recommendations/rebalance); then
    notice_handled "rebalance $notice" || fresh+=("rebalance $notice")
  fi
  ((${#fresh[@]})) || return 0
  log "notice: ${fresh[*]}"
  SIGNALLED=0
  if ((interruption)); then
    signal_trainer
  else
    log "a rebalance recommendation alone: flushing checkpoints, no trainer signalled"
  fi
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
  [[ $AISTACK_TRAINER_CONTAINER_LABEL =~ ^[A-Za-z0-9._/-]*$ ]] ||
    die "AISTACK_TRAINER_CONTAINER_LABEL must be a label key like aistack.checkpoint-signal"
  prepare_dirs
  run_loop check "$AISTACK_SPOT_POLL_SECONDS"
}

main "$@"

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
# The shutdown is the second path. When systemd stops the watch (its unit has KillMode=mixed,
# so only this shell gets SIGTERM and a running flush is not killed, and TimeoutStopSec
# bounds the rest; bootstrap.sh write_unit), the watch first acts on a notice it has not
# acted on yet, else makes a last flush, then exits. On a Compute Engine Spot VM this is the
# path that counts: the ACPI soft-off that starts the shutdown comes with the preemption
# notice, 30 s before the power-off (aistack/contracts/preemption.py), so the watch may be
# stopped before its next poll.
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
# recommendation, and the flush goes through `gcloud storage rsync` to a gs:// URI. The
# host-maintenance notice comes an hour ahead, so it has its own, longer, pause
# (AISTACK_MAINTENANCE_FLUSH_DELAY_SECONDS); a preemption gives 30 s in all.
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
#   AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS  pause between the signal and the flush (default 30;
#                                    NodeBootstrapConfig renders 5 on GCP)
#   AISTACK_MAINTENANCE_FLUSH_DELAY_SECONDS GCP: the pause on a host-maintenance notice
#                                    (default: the flush delay)
#   AISTACK_CHECKPOINT_FLUSH_CMD     flush command, run with bash -c (default, when the
#                                    dir and the URI are set:
#                                    aws s3 sync "$AISTACK_CHECKPOINT_DIR" "$AISTACK_CHECKPOINT_URI")
#   AISTACK_SCHEDULER                batch: the flush runs with the role of a running job of
#                                    this pool, never the instance role's (adopt_job_credentials)
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
# What the watch is acting on (the notices, the pause, when the trainer was signalled), so
# a stop that interrupts it finishes that action instead of starting another.
ACTING=0
ACTED=0
ACTING_DELAY=0
SIGNALLED_AT=0
declare -a ACTING_ON=()

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

# flush_checkpoint [DELAY]: upload the checkpoint directory; after a signal, first give
# the trainer DELAY seconds to write its checkpoint.
flush_checkpoint() {
  local delay=${1:-0}
  if ((SIGNALLED && delay > 0)); then
    sleep "$delay"
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

# adopt_job_credentials: on an AWS Batch host, hand the flush the job role's credentials.
# Batch runs ECS jobs in host networking, so any job can read the instance role from the
# metadata service; the instance role therefore holds no checkpoint write, the job role
# does. The ECS agent serves a job's credentials at 169.254.170.2 under the path in the job
# container's AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (amazon-ecs-agent agent/api/task/
# task.go), and ecs-init's nat OUTPUT rule sends the host's own requests for that address
# to the agent too (ecs-init/exec/iptables/iptables.go). The agent drops them once the job
# stops (agent/engine/task_manager.go, cleanupCredentials), so they are taken at the
# notice, before the trainer is signalled and exits, from a running job of this pool (its
# AISTACK_CHECKPOINT_URI is the host's). Without one the flush runs with the instance role
# and fails visibly. Elsewhere a no-op.
adopt_job_credentials() {
  local ids id relative checkpoint creds key value
  local env_of='{{range .Config.Env}}{{if eq (index (split . "=") 0) "%s"}}{{index (split . "=") 1}}{{end}}{{end}}'
  [[ $AISTACK_SCHEDULER == batch ]] || return 0
  unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_CREDENTIAL_EXPIRATION
  ids=$(docker ps -q) && [[ -n $ids ]] || return 1
  # shellcheck disable=SC2059,SC2086 # the template is the format; one container id per word
  while IFS='|' read -r id relative checkpoint; do
    [[ -n $relative && $checkpoint == "$AISTACK_CHECKPOINT_URI" ]] && break
    relative=""
  done < <(docker inspect --format "{{.Id}}|$(printf "$env_of" AWS_CONTAINER_CREDENTIALS_RELATIVE_URI)|$(printf "$env_of" AISTACK_CHECKPOINT_URI)" $ids)
  [[ -n $relative ]] || return 1
  creds=$(AWS_CONTAINER_CREDENTIALS_RELATIVE_URI=$relative \
    aws configure export-credentials --format env-no-export) || return 1
  while IFS='=' read -r key value; do
    case $key in
      AWS_ACCESS_KEY_ID | AWS_SECRET_ACCESS_KEY | AWS_SESSION_TOKEN | AWS_CREDENTIAL_EXPIRATION)
        export "$key=$value" ;;
    esac
  done <<<"$creds"
  [[ -n ${AWS_ACCESS_KEY_ID:-} ]] || return 1
  log "the checkpoint flush runs with the role of job container ${id:0:12}"
}

# flush_delay NOTICE...: the pause for these notices: the host-maintenance one on GCP when
# that is all they are, else the Spot notice's.
flush_delay() {
  # [gcp]
  if [[ $AISTACK_CLOUD == gcp && $* == "interruption maintenance "* && $* != *preempted* ]]; then
    printf '%s' "${AISTACK_MAINTENANCE_FLUSH_DELAY_SECONDS:-$AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS}"
    return 0
  fi
  # [/gcp]
  printf '%s' "$AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS"
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
  act_on "$interruption" "${fresh[@]}"
}

# act_on INTERRUPTION NOTICE...: signal the trainers (for an interruption), flush, and
# record the notices as handled.
act_on() {
  local interruption=$1
  shift
  ACTING=1 ACTED=1 ACTING_ON=("$@") SIGNALLED=0 SIGNALLED_AT=$SECONDS
  ACTING_DELAY=$(flush_delay "$@")
  log "notice: $*"
  adopt_job_credentials || log "no running job of this pool lent its credentials to the flush"
  if ((interruption)); then
    signal_trainer
    SIGNALLED_AT=$SECONDS
  else
    log "a rebalance recommendation alone: flushing checkpoints, no trainer signalled"
  fi
  if ! flush_checkpoint "$ACTING_DELAY"; then
    log "checkpoint flush failed"
  fi
  printf '%s\n' "$@" >>"$NOTICES_FILE"
  ACTING=0
}

# on_stop: systemd stops the watch (the node is shutting down). Finish the action under way
# (the shell runs this trap once its current command ends: a sleep of the loop, a signal or
# a flush), else act on a notice not yet seen (a Compute Engine preemption), else flush what
# is there, so the last checkpoint the trainer wrote leaves with the node. Then exit.
on_stop() {
  local left
  trap - TERM INT
  log "stopping: the node is shutting down; a last checkpoint flush"
  if ((ACTING)); then
    left=$((ACTING_DELAY - (SECONDS - SIGNALLED_AT)))
    ((left > 0)) || left=0
    flush_checkpoint "$left" || log "checkpoint flush failed"
    printf '%s\n' "${ACTING_ON[@]}" >>"$NOTICES_FILE"
  else
    ACTED=0
    check || true
    if ((!ACTED)); then
      SIGNALLED=0
      adopt_job_credentials || log "no running job of this pool lent its credentials to the flush"
      flush_checkpoint || log "checkpoint flush failed"
    fi
  fi
  log "stopped"
  exit 0
}

main() {
  parse_args "$@"
  require_int AISTACK_SPOT_POLL_SECONDS 1
  require_int AISTACK_CHECKPOINT_FLUSH_DELAY_SECONDS 0
  # [gcp]
  if [[ -n ${AISTACK_MAINTENANCE_FLUSH_DELAY_SECONDS:-} ]]; then
    require_int AISTACK_MAINTENANCE_FLUSH_DELAY_SECONDS 0
  fi
  # [/gcp]
  [[ $AISTACK_SPOT_ACT_ON_REBALANCE =~ ^[01]$ ]] ||
    die "AISTACK_SPOT_ACT_ON_REBALANCE must be 0 or 1"
  [[ $AISTACK_TRAINER_SIGNAL =~ ^[A-Z][A-Z0-9]*$ ]] ||
    die "AISTACK_TRAINER_SIGNAL must be a signal name like USR1"
  [[ $AISTACK_TRAINER_CONTAINER_LABEL =~ ^[A-Za-z0-9._/-]*$ ]] ||
    die "AISTACK_TRAINER_CONTAINER_LABEL must be a label key like aistack.checkpoint-signal"
  prepare_dirs
  trap on_stop TERM INT
  run_loop check "$AISTACK_SPOT_POLL_SECONDS"
}

main "$@"

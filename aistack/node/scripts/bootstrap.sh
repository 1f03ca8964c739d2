#!/usr/bin/env bash
# bootstrap.sh: prepare a GPU training node; the cloud-init user data runs it at first boot.
#
# In order: start the guards (wall-clock limit, spot watch, idle watchdog) so that a node
# whose later steps fail still ends itself; install AISTACK_HOST_PACKAGES when a command
# the scripts use is missing; check the tools (check_host_tools: without the cloud CLI or a
# working NVIDIA driver the boot stops with status 3, without the monitoring agent or
# docker it goes on degraded, both saying so in a line "AISTACK BOOT FAILED|DEGRADED:",
# a state file and a marker the monitoring reads, see node_report in lib.sh);
# give the CloudWatch agent its config (GPU metrics and log shipping, T3/T6) when the agent
# is installed; mount the NVMe cache; sync the dataset. On GCP (AISTACK_CLOUD=gcp) gcloud
# takes the aws CLI's place and the Ops Agent the CloudWatch agent's: bootstrap installs
# the agent config that render_startup_script packed (ops-agent.yaml) and restarts it, and
# after the dataset sync the last flushed checkpoint is pulled onto the local SSD. The node is held busy (see lib.sh) until then, so the idle watchdog does not
# count a long download as idle time.
#
# Environment:
#   AISTACK_ENV_FILE           node settings, KEY=value lines (default /etc/aistack/node.env)
#   AISTACK_DATASET_URI        when set, dataset-sync.sh copies the dataset into the cache
#   AISTACK_LOG_GROUP          when set and the agent is installed, metrics and logs ship
#   AISTACK_METRICS_NAMESPACE  CloudWatch namespace of the metrics       (default aistack/node)
#   AISTACK_CLOUDWATCH_CONFIG  where the agent config is written
#                                                (default /etc/aistack/cloudwatch-agent.json)
#   AISTACK_CWAGENT_CTL        the agent's control command (default amazon-cloudwatch-agent-ctl
#                              on PATH, else /opt/aws/amazon-cloudwatch-agent/bin/...)
#   AISTACK_SERVICE_MANAGER    systemd | background: how the guards run
#                                                 (default systemd when systemd is running)
#   AISTACK_SYSTEMD_DIR        where unit files are written      (default /etc/systemd/system)
#   AISTACK_SPOT_STOP_TIMEOUT_SECONDS  TimeoutStopSec of the spot watch's unit, its last
#                              flush at shutdown                               (default 90)
#   AISTACK_HOST_PACKAGES      packages installed with dnf (or apt-get) when aws, mdadm or
#                              the CloudWatch agent is missing, e.g. "awscli-2
#                              amazon-cloudwatch-agent mdadm" on the ECS-optimised AL2023
#                              AMI, which has none of them                  (default: none)
#   AISTACK_CHECKPOINT_URI, AISTACK_CHECKPOINT_DIR  GCP: the checkpoints restored at boot,
#                              under <URI>/<run id> (the VM's aistack-run-id metadata)
#   AISTACK_OPS_AGENT_CONFIG   GCP: where the Ops Agent reads its config
#                                (default /etc/google-cloud-ops-agent/config.yaml)
#   AISTACK_OPS_AGENT_DIR      GCP, without systemctl: the directory that shows the Ops
#                              Agent is installed        (default /etc/google-cloud-ops-agent)
#   AISTACK_CACHE_DIR, AISTACK_STATE_DIR, AISTACK_LOG_DIR, AISTACK_CLOUD and what the
#   other scripts read.
# Commands: systemctl or setsid, sed, the agent's ctl, dnf or apt-get (with
# AISTACK_HOST_PACKAGES), and those of the other scripts.

set -euo pipefail
export AISTACK_ENV_FILE=${AISTACK_ENV_FILE:-/etc/aistack/node.env}
AISTACK_SCRIPT=bootstrap
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

AISTACK_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AISTACK_CACHE_DIR=${AISTACK_CACHE_DIR:-/mnt/nvme}
AISTACK_METRICS_NAMESPACE=${AISTACK_METRICS_NAMESPACE:-aistack/node}
AISTACK_CLOUDWATCH_CONFIG=${AISTACK_CLOUDWATCH_CONFIG:-/etc/aistack/cloudwatch-agent.json}
AISTACK_SYSTEMD_DIR=${AISTACK_SYSTEMD_DIR:-/etc/systemd/system}
# On AWS Batch hosts only the spot watch runs: Batch owns the host's life (it scales idle
# hosts in) and job timeouts bound each run (T5); a host clock would kill a job that
# started late on a reused host, and an idle host halting itself races Batch's scale-in.
if [[ ${AISTACK_SCHEDULER:-asg} == batch ]]; then
  readonly GUARDS=(spot-watch)
else
  readonly GUARDS=(wallclock-limit spot-watch idle-watchdog)
fi

service_manager() {
  local manager=${AISTACK_SERVICE_MANAGER:-}
  if [[ -z $manager ]]; then
    if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null 2>&1; then
      manager=systemd
    else
      manager=background
    fi
  fi
  case $manager in
    systemd | background) printf '%s' "$manager" ;;
    *) die "AISTACK_SERVICE_MANAGER must be systemd or background (got '$manager')" ;;
  esac
}

# write_unit NAME: the guard's systemd unit. The spot watch's also makes the last checkpoint
# flush when the node shuts down (spot-watch.sh on_stop): on a Compute Engine Spot VM the
# preemption's ACPI soft-off starts the shutdown with the notice and the power-off follows
# 30 s later (aistack/contracts/preemption.py). Units stop in the reverse of their start
# order (systemd.unit(5), Before=/After=), so ordered after docker and the network it stops
# while the trainer's container and the network still run; KillMode=mixed sends SIGTERM to
# the watch's shell alone, so a flush under way is not killed, and SIGKILL to the rest only
# at TimeoutStopSec (systemd.kill(5)); TimeoutStopSec (AISTACK_SPOT_STOP_TIMEOUT_SECONDS:
# 25 on GCP, inside the 30 s) bounds the stop (systemd.service(5)).
write_unit() {
  local after=network-online.target stop=""
  if [[ $1 == spot-watch ]]; then
    after+=" docker.service"
    stop=$'KillMode=mixed\nTimeoutStopSec='"${AISTACK_SPOT_STOP_TIMEOUT_SECONDS:-90}"$'\n'
  fi
  cat >"$AISTACK_SYSTEMD_DIR/aistack-$1.service" <<UNIT
[Unit]
Description=aistack node guard: $1
Wants=network-online.target
After=$after

[Service]
Environment=AISTACK_ENV_FILE=$AISTACK_ENV_FILE
ExecStart=$BASH $AISTACK_HOME/$1.sh
Restart=always
RestartSec=30
${stop}
[Install]
WantedBy=multi-user.target
UNIT
}

start_guards_systemd() {
  local name
  local -a units=()
  mkdir -p "$AISTACK_SYSTEMD_DIR" || return 1
  for name in "${GUARDS[@]}"; do
    write_unit "$name" || return 1
    units+=("aistack-$name.service")
  done
  systemctl daemon-reload && systemctl enable --now "${units[@]}" || return 1
  log "started systemd units: ${units[*]}"
}

start_guard_background() {
  local name=$1 pid
  local pidfile=$AISTACK_STATE_DIR/$name.pid
  if [[ -r $pidfile ]] && read -r pid <"$pidfile" && kill -0 "$pid" 2>/dev/null; then
    log "$name is running already (pid $pid)"
    return 0
  fi
  setsid "$BASH" "$AISTACK_HOME/$name.sh" </dev/null >/dev/null \
    2>>"$AISTACK_LOG_DIR/$name.stderr" &
  printf '%s\n' "$!" >"$pidfile"
  log "started $name in the background (pid $!)"
}

start_guards() {
  local name
  if [[ $(service_manager) == systemd ]]; then
    if start_guards_systemd; then
      return 0
    fi
    log "starting the guards under systemd failed; running them in the background"
  fi
  for name in "${GUARDS[@]}"; do
    start_guard_background "$name"
  done
}

# Fill in cloudwatch-agent.json. The values are restricted to characters that are safe in
# both the sed replacement and a JSON string.
render_cloudwatch_config() {
  local value
  for value in "$AISTACK_LOG_GROUP" "$AISTACK_METRICS_NAMESPACE" "$AISTACK_LOG_DIR" \
    "$AISTACK_CACHE_DIR"; do
    if ! [[ $value =~ ^[A-Za-z0-9._/#:-]+$ ]]; then
      log "'$value' has characters the CloudWatch agent config cannot take"
      return 1
    fi
  done
  sed -e "s|@AISTACK_LOG_GROUP@|$AISTACK_LOG_GROUP|g" \
    -e "s|@AISTACK_METRICS_NAMESPACE@|$AISTACK_METRICS_NAMESPACE|g" \
    -e "s|@AISTACK_LOG_DIR@|$AISTACK_LOG_DIR|g" \
    -e "s|@AISTACK_CACHE_DIR@|$AISTACK_CACHE_DIR|g" \
    "$AISTACK_HOME/cloudwatch-agent.json"
}

configure_cloudwatch() {
  local ctl config=$AISTACK_CLOUDWATCH_CONFIG
  if [[ -z ${AISTACK_LOG_GROUP:-} ]]; then
    log "AISTACK_LOG_GROUP is not set: no GPU metrics or log shipping"
    return 0
  fi
  if ! ctl=$(cloudwatch_ctl); then
    log "the CloudWatch agent is not installed: no GPU metrics or log shipping"
    return 0
  fi
  mkdir -p "$(dirname "$config")" &&
    render_cloudwatch_config >"$config.tmp" &&
    mv -f "$config.tmp" "$config" &&
    "$ctl" -a fetch-config -m ec2 -s -c "file:$config" >&2 &&
    log "CloudWatch agent started with $config (log group $AISTACK_LOG_GROUP)"
}

# ensure_host_tools: install AISTACK_HOST_PACKAGES when a command the node scripts use is
# missing, then check_host_tools.
ensure_host_tools() {
  local -a missing=()
  # [gcp]
  if [[ $AISTACK_CLOUD == gcp ]]; then
    command -v gcloud >/dev/null 2>&1 || missing+=(gcloud)
    command -v mdadm >/dev/null 2>&1 || missing+=(mdadm)
    ops_agent_installed || missing+=(google-cloud-ops-agent)
  else
  # [/gcp]
  command -v aws >/dev/null 2>&1 || missing+=(aws)
  command -v mdadm >/dev/null 2>&1 || missing+=(mdadm)
  cloudwatch_ctl >/dev/null || missing+=(amazon-cloudwatch-agent)
  # [gcp]
  fi
  # [/gcp]
  if ((${#missing[@]})) && [[ -n ${AISTACK_HOST_PACKAGES:-} ]]; then
    log "missing on this image: ${missing[*]}; installing $AISTACK_HOST_PACKAGES"
    # shellcheck disable=SC2086 # one package per word
    if command -v dnf >/dev/null 2>&1; then
      dnf install -y -q $AISTACK_HOST_PACKAGES >&2 || log "dnf install failed"
    elif command -v apt-get >/dev/null 2>&1; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q $AISTACK_HOST_PACKAGES >&2 ||
        log "apt-get install failed"
    else
      log "neither dnf nor apt-get is installed; cannot install $AISTACK_HOST_PACKAGES"
    fi
  elif ((${#missing[@]})); then
    log "missing on this image: ${missing[*]} (AISTACK_HOST_PACKAGES is empty)"
  fi
  check_host_tools
}

# check_host_tools: what is still missing after the install either stops the boot (the
# cloud CLI, a working NVIDIA driver: without them the node cannot do its work or end
# itself) or leaves it degraded (the monitoring agent, docker), each with node_report's
# line, state and published marker (lib.sh). Every later step runs only on a node that
# passed. mdadm is judged by nvme-cache.sh, which alone knows whether there are disks to
# stripe. The guards started before this, so a failed node still ends itself.
check_host_tools() {
  local why
  # [gcp]
  if [[ $AISTACK_CLOUD == gcp ]]; then
    command -v gcloud >/dev/null 2>&1 || boot_fail gcloud \
      "the Google Cloud CLI is not installed: no dataset cache (D3), no checkpoint flush" \
      "(T1), no deletion through the instance group" -- \
      "use a boot image with it (every Deep Learning VM image has it); the network reaches" \
      "no package repository to install it at boot"
    ops_agent_installed || node_report degraded google-cloud-ops-agent \
      "the Ops Agent is not installed: no GPU metrics (the idle and starvation alerts see" \
      "no data) and no node logs in Cloud Logging" -- \
      "use a boot image with the Ops Agent (install it when building the image: its" \
      "repository, packages.cloud.google.com, is outside this network's private zones)"
  else
  # [/gcp]
  command -v aws >/dev/null 2>&1 || boot_fail aws \
    "the aws CLI is not installed: no dataset cache (D3), no checkpoint flush (T1), no" \
    "self-termination" -- \
    "use an image with it, or set AISTACK_HOST_PACKAGES (the node needs a package" \
    "mirror it can reach)"
  if [[ -n ${AISTACK_LOG_GROUP:-} ]] && ! cloudwatch_ctl >/dev/null; then
    node_report degraded amazon-cloudwatch-agent \
      "the CloudWatch agent is not installed: no GPU metrics or log shipping (T3, T6)" -- \
      "use an image with it, or add amazon-cloudwatch-agent to AISTACK_HOST_PACKAGES"
  fi
  # [gcp]
  fi
  # [/gcp]
  command -v docker >/dev/null 2>&1 || node_report degraded docker \
    "docker is not installed: no trainer container runs here and the spot watch signals" \
    "none" -- \
    "use a boot image with docker and the NVIDIA container toolkit"
  if ! why=$(gpu_check); then
    boot_fail nvidia-smi "$why: the GPUs cannot be used, and the idle watchdog cannot" \
      "read them" -- \
      "use a boot image whose NVIDIA driver is built in and loads with Secure Boot on (a" \
      "Deep Learning VM -nvidia-5xx image on GCP; the DLAMI or the ECS GPU AMI on AWS);" \
      "check with mokutil --sb-state and nvidia-smi"
  fi
}

# [gcp]
# scope_checkpoints_to_run: make AISTACK_CHECKPOINT_URI the run's own prefix,
# <checkpoints>/<run id>. A run's VM is created by the pool's submit command with the
# stateful metadata aistack-run-id (custom metadata, read at instance/attributes/<key>:
# cloud.google.com/compute/docs/metadata/querying-metadata), which autohealing keeps on the
# VM it recreates (.../instance-groups/preserved-state), so the replacement restores and
# flushes that run's checkpoints and never another run's. A VM without it (created some
# other way) is its own run, under its name. The result is exported for the guards started
# here and appended to the env file, whose last line wins in every later script; the
# startup script rewrites the file at each boot.
scope_checkpoints_to_run() {
  local run_id
  if [[ -z ${AISTACK_CHECKPOINT_URI:-} ]]; then
    return 0
  fi
  if ! run_id=$(gce_metadata_get instance/attributes/aistack-run-id) ||
    [[ ! $run_id =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]]; then
    # Not fatal before the guards start: the host name is the VM's name on Compute Engine.
    run_id=$(gce_metadata_get instance/name) || run_id=${HOSTNAME%%.*}
  fi
  export AISTACK_RUN_ID=$run_id
  if [[ ${AISTACK_CHECKPOINT_URI%/} != */"$run_id" ]]; then
    export AISTACK_CHECKPOINT_URI=${AISTACK_CHECKPOINT_URI%/}/$run_id
  fi
  if [[ -w $AISTACK_ENV_FILE ]]; then
    printf "AISTACK_RUN_ID='%s'\nAISTACK_CHECKPOINT_URI='%s'\n" "$AISTACK_RUN_ID" \
      "$AISTACK_CHECKPOINT_URI" >>"$AISTACK_ENV_FILE"
  elif [[ -e $AISTACK_ENV_FILE ]]; then
    log "cannot write $AISTACK_ENV_FILE: the guards keep its checkpoint prefix"
  fi
  log "run $AISTACK_RUN_ID: checkpoints under $AISTACK_CHECKPOINT_URI"
}

# restore_checkpoint: pull the last flushed checkpoint onto the local SSD. The managed
# instance group replaces a preempted VM with a fresh one whose local SSDs are empty, so
# the trainer finds its checkpoint where it writes them (AISTACK_CHECKPOINT_DIR). A URI
# with nothing under it yet (the first run) is no error.
restore_checkpoint() {
  if [[ -z ${AISTACK_CHECKPOINT_URI:-} || -z ${AISTACK_CHECKPOINT_DIR:-} ]]; then
    return 0
  fi
  mkdir -p "$AISTACK_CHECKPOINT_DIR"
  if gcs_rsync "$AISTACK_CHECKPOINT_URI" "$AISTACK_CHECKPOINT_DIR"; then
    log "restored checkpoints from $AISTACK_CHECKPOINT_URI into $AISTACK_CHECKPOINT_DIR"
  else
    log "no checkpoint restored from $AISTACK_CHECKPOINT_URI (none yet, or unreadable)"
  fi
}

# ops_agent_installed: the Ops Agent's unit is on this VM (its package installs
# google-cloud-ops-agent.service; `systemctl cat` fails for a unit that does not exist).
# Without systemctl, its config directory stands in.
ops_agent_installed() {
  if command -v systemctl >/dev/null 2>&1; then
    systemctl cat google-cloud-ops-agent.service >/dev/null 2>&1
  else
    [[ -d ${AISTACK_OPS_AGENT_DIR:-/etc/google-cloud-ops-agent} ]]
  fi
}

# configure_ops_agent: put the packed Ops Agent config in place and restart the agent, which
# merges it with its built-in defaults (host and NVML GPU metrics).
configure_ops_agent() {
  local config=${AISTACK_OPS_AGENT_CONFIG:-/etc/google-cloud-ops-agent/config.yaml}
  if ! ops_agent_installed; then
    return 0 # check_host_tools has reported it
  fi
  if [[ ! -r $AISTACK_HOME/ops-agent.yaml ]]; then
    log "no ops-agent.yaml next to the scripts: the Ops Agent keeps its own config"
    return 0
  fi
  if ! command -v systemctl >/dev/null 2>&1; then
    log "systemctl is missing: the Ops Agent is not configured"
    return 0
  fi
  mkdir -p "$(dirname "$config")" &&
    cp "$AISTACK_HOME/ops-agent.yaml" "$config.tmp" &&
    mv -f "$config.tmp" "$config" &&
    systemctl restart google-cloud-ops-agent >&2 &&
    log "Ops Agent restarted with $config"
}
# [/gcp]

main() {
  parse_args "$@"
  prepare_dirs
  hold_acquire bootstrap
  trap 'hold_release bootstrap' EXIT
  log "bootstrapping from $AISTACK_HOME"
  # [gcp]
  if [[ $AISTACK_CLOUD == gcp ]]; then
    scope_checkpoints_to_run
  fi
  # [/gcp]
  start_guards
  ensure_host_tools
  # [gcp]
  if [[ $AISTACK_CLOUD == gcp ]]; then
    configure_ops_agent || log "configuring the Ops Agent failed; going on without it"
  else
  # [/gcp]
  configure_cloudwatch || log "configuring the CloudWatch agent failed; going on without it"
  # [gcp]
  fi
  # [/gcp]
  "$BASH" "$AISTACK_HOME/nvme-cache.sh"
  if [[ -n ${AISTACK_DATASET_URI:-} ]]; then
    "$BASH" "$AISTACK_HOME/dataset-sync.sh" >/dev/null
  fi
  # [gcp]
  if [[ $AISTACK_CLOUD == gcp ]]; then
    restore_checkpoint
  fi
  # [/gcp]
  log "bootstrap complete"
}

main "$@"

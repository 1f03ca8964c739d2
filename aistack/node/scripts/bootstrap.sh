#!/usr/bin/env bash
# bootstrap.sh: prepare a GPU training node; the cloud-init user data runs it at first boot.
#
# In order: start the guards (wall-clock limit, spot watch, idle watchdog) so that a node
# whose later steps fail still ends itself; give the CloudWatch agent its config (GPU
# metrics and log shipping, T3/T6) when the agent is installed; mount the NVMe cache; sync
# the dataset. The node is held busy (see lib.sh) until then, so the idle watchdog does not
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
#   AISTACK_CACHE_DIR, AISTACK_STATE_DIR, AISTACK_LOG_DIR and what the other scripts read.
# Commands: systemctl or setsid, sed, the agent's ctl, and those of the other scripts.

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

write_unit() {
  cat >"$AISTACK_SYSTEMD_DIR/aistack-$1.service" <<UNIT
[Unit]
Description=aistack node guard: $1
Wants=network-online.target
After=network-online.target

[Service]
Environment=AISTACK_ENV_FILE=$AISTACK_ENV_FILE
ExecStart=$BASH $AISTACK_HOME/$1.sh
Restart=always
RestartSec=30

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

main() {
  parse_args "$@"
  prepare_dirs
  hold_acquire bootstrap
  trap 'hold_release bootstrap' EXIT
  log "bootstrapping from $AISTACK_HOME"
  start_guards
  configure_cloudwatch || log "configuring the CloudWatch agent failed; going on without it"
  "$BASH" "$AISTACK_HOME/nvme-cache.sh"
  if [[ -n ${AISTACK_DATASET_URI:-} ]]; then
    "$BASH" "$AISTACK_HOME/dataset-sync.sh" >/dev/null
  fi
  log "bootstrap complete"
}

main "$@"

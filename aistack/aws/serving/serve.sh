#!/usr/bin/env bash
# serve.sh: boot and run an aistack serving node: the model server on loopback behind the
# nginx gateway (S2-S4), watched, and held out of the load balancer until it answers.
#
# `serve.sh boot` runs once, from cloud-init. In order: ship logs and GPU metrics (CloudWatch
# agent, when installed); mount the NVMe cache (nvme-cache.sh); copy the pinned model
# version from S3 onto it (dataset-sync.sh); pull the images; start the model server and
# wait until it answers its health path; start the gateway and wait for its health path;
# start the watch; then tell the auto scaling group the node may join the target group
# (lifecycle action CONTINUE). If any step fails the action is ABANDON and the group
# replaces the node, so a node with a broken model never receives traffic.
#
# `serve.sh model`, `serve.sh gateway` and `serve.sh watch` are what the systemd units run:
# the model server container, nginx (on the host, or from AISTACK_GATEWAY_IMAGE), and a loop
# that marks the instance unhealthy once the model server stops answering, so the group
# replaces it (the gateway answers the load balancer's health checks itself).
#
# On a GCE VM (gcp.InferenceTier, AISTACK_CLOUD=gcp) the GCP blocks apply (aws.
# InferenceTier's user data drops them): the Ops Agent instead of the CloudWatch agent,
# Artifact Registry login with the VM's token, docker's gcplogs driver, no lifecycle hook
# (the load balancer's health check is the gateway's health path, which answers only once
# the model does), and the watch stops the gateway when the model server dies, so the
# group's autohealing recreates the VM.
#
# Environment:
#   AISTACK_ENV_FILE                  settings, KEY=value lines
#                                                   (default /etc/aistack/serving.env)
#   AISTACK_RUNTIME_IMAGE             model server image, by digest
#   AISTACK_RUNTIME_PORT              loopback port the model server answers on
#   AISTACK_RUNTIME_HEALTH_PATH       its health path, e.g. /health
#   AISTACK_GATEWAY_IMAGE             nginx image by digest; empty: the host's nginx,
#                                     installed with apt-get or dnf when missing
#   AISTACK_GATEWAY_CONF              the rendered nginx.conf
#   AISTACK_GATEWAY_PORT              port the gateway listens on (the target group's)
#   AISTACK_GATEWAY_HEALTH_PATH       path the gateway answers itself
#   AISTACK_GATEWAY_DIRS              directories nginx needs, space-separated
#   AISTACK_GATEWAY_CACHE_DIR         the response cache, mounted as tmpfs
#   AISTACK_GATEWAY_CACHE_MB          size of that tmpfs; 0 when the cache is off
#   AISTACK_GATEWAY_TLS_CERT, AISTACK_GATEWAY_TLS_KEY  the gateway's certificate and key
#                                     (PEM) when it listens with TLS; made self-signed at
#                                     boot when missing. Empty: plain HTTP
#   AISTACK_LOG_GROUP                 log group of the tier; empty: no log shipping
#   AISTACK_CLOUDWATCH_CONFIG         where the agent config is
#                                         (default: cloudwatch-agent.json next to serve.sh)
#   AISTACK_CWAGENT_CTL               the agent's control command (default: found on PATH
#                                     or in /opt/aws/amazon-cloudwatch-agent/bin)
#   AISTACK_LIFECYCLE_HOOK            launch lifecycle hook to complete; empty: none
#   AISTACK_MODEL_LOAD_TIMEOUT_SECONDS  how long the model server may take to answer
#   AISTACK_WATCH_INTERVAL_SECONDS    seconds between the watch's health checks (default 10)
#   AISTACK_WATCH_FAILURES            failed checks in a row before the node is marked
#                                     unhealthy (default 6)
#   AISTACK_SYSTEMD_DIR               where unit files are written (default /etc/systemd/system)
#   AISTACK_DOCKER_WAIT_SECONDS       how long boot waits for the docker daemon (default 120)
#   AISTACK_DATASET_URI, AISTACK_DATASET_VERSION, AISTACK_DATASET_NAME: the model, as
#     dataset-sync.sh reads them; AISTACK_CACHE_DIR and AISTACK_STATE_DIR, AISTACK_LOG_DIR
#     and the rest of lib.sh.
# Files next to serve.sh: lib.sh, nvme-cache.sh, dataset-sync.sh, runtime.args (docker run
# arguments of the model server, one per line), cloudwatch-agent.json.
# Commands: aws, docker, curl, systemctl, mount, mountpoint, nginx (host gateway),
# openssl (TLS gateway).

set -euo pipefail
export AISTACK_ENV_FILE=${AISTACK_ENV_FILE:-/etc/aistack/serving.env}
AISTACK_SCRIPT=serve
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

AISTACK_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AISTACK_SYSTEMD_DIR=${AISTACK_SYSTEMD_DIR:-/etc/systemd/system}
AISTACK_CLOUDWATCH_CONFIG=${AISTACK_CLOUDWATCH_CONFIG:-$AISTACK_HOME/cloudwatch-agent.json}
AISTACK_WATCH_INTERVAL_SECONDS=${AISTACK_WATCH_INTERVAL_SECONDS:-10}
AISTACK_WATCH_FAILURES=${AISTACK_WATCH_FAILURES:-6}
AISTACK_DOCKER_WAIT_SECONDS=${AISTACK_DOCKER_WAIT_SECONDS:-120}
readonly MODEL_CONTAINER=aistack-model GATEWAY_CONTAINER=aistack-gateway
readonly ECR_HOST='^[0-9]{12}\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com$'

runtime_url() {
  printf 'http://127.0.0.1:%s%s' "$AISTACK_RUNTIME_PORT" "$AISTACK_RUNTIME_HEALTH_PATH"
}

gateway_url() {
  local scheme=http
  [[ -z ${AISTACK_GATEWAY_TLS_CERT:-} ]] || scheme=https
  printf '%s://127.0.0.1:%s%s' "$scheme" "$AISTACK_GATEWAY_PORT" "$AISTACK_GATEWAY_HEALTH_PATH"
}

instance_id() {
  local id
  id=$(state_get instance-id "")
  if [[ -z $id ]]; then
    imds_refresh_token || return 1
    id=$(imds_get meta-data/instance-id) || return 1
    state_set instance-id "$id"
  fi
  printf '%s' "$id"
}

# answers URL: the URL answers 2xx right now.
answers() {
  # -k: on loopback the gateway's own self-signed certificate is expected.
  curl -fsSk --max-time 5 -o /dev/null "$1" 2>/dev/null
}

# wait_until_answers URL SECONDS WHAT
wait_until_answers() {
  local url=$1 deadline=$((SECONDS + $2))
  while ! answers "$url"; do
    if ((SECONDS >= deadline)); then
      log "$3 did not answer $url within $2 seconds"
      return 1
    fi
    sleep 5
  done
  log "$3 answers $url"
}

configure_cloudwatch() {
  local ctl
  # [gcp]
  # On GCP the Ops Agent ships the logs and GPU metrics: install the config the startup
  # script packed (ops-agent.yaml, rendered by aistack.node.ops_agent_config) and restart it.
  if [[ $AISTACK_CLOUD == gcp ]]; then
    local config=${AISTACK_OPS_AGENT_CONFIG:-/etc/google-cloud-ops-agent/config.yaml}
    [[ -r $AISTACK_HOME/ops-agent.yaml ]] || return 0
    mkdir -p "$(dirname "$config")" && cp "$AISTACK_HOME/ops-agent.yaml" "$config" &&
      systemctl restart google-cloud-ops-agent >&2 && log "Ops Agent configured"
    return
  fi
  # [/gcp]
  if [[ -z ${AISTACK_LOG_GROUP:-} ]]; then
    log "AISTACK_LOG_GROUP is not set: no log shipping"
    return 0
  fi
  if ! ctl=$(cloudwatch_ctl); then
    log "the CloudWatch agent is not installed: gateway and node logs stay on the node;" \
      "the model server's logs still reach $AISTACK_LOG_GROUP through docker"
    return 0
  fi
  "$ctl" -a fetch-config -m ec2 -s -c "file:$AISTACK_CLOUDWATCH_CONFIG" >&2 &&
    log "CloudWatch agent started (log group $AISTACK_LOG_GROUP)"
}

wait_for_docker() {
  local deadline=$((SECONDS + AISTACK_DOCKER_WAIT_SECONDS))
  until docker info >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "docker did not start within $AISTACK_DOCKER_WAIT_SECONDS s"
    sleep 2
  done
}

# pull IMAGE: log in first when the image lives in a private ECR registry.
pull() {
  local image=$1 host=${1%%/*}
  # [gcp]
  # Artifact Registry: docker logs in with the VM service account's access token.
  if [[ $AISTACK_CLOUD == gcp && $host == *-docker.pkg.dev ]]; then
    gcloud auth print-access-token |
      docker login --username oauth2accesstoken --password-stdin "https://$host" >&2
  fi
  # [/gcp]
  if [[ $host =~ $ECR_HOST ]]; then
    aws ecr get-login-password --region "${BASH_REMATCH[1]}" |
      docker login --username AWS --password-stdin "$host" >&2
  fi
  log "pulling $image"
  docker pull --quiet "$image" >&2
}

write_unit() {
  local name=$1 description=$2
  cat >"$AISTACK_SYSTEMD_DIR/aistack-$name.service" <<UNIT
[Unit]
Description=aistack serving: $description
Wants=network-online.target docker.service
After=network-online.target docker.service

[Service]
Environment=AISTACK_ENV_FILE=$AISTACK_ENV_FILE
ExecStart=$BASH $AISTACK_HOME/serve.sh $name
Restart=always
RestartSec=5

[Install]
WantedBy=multi-user.target
UNIT
}

start_unit() {
  mkdir -p "$AISTACK_SYSTEMD_DIR"
  write_unit "$1" "$2"
  systemctl daemon-reload
  systemctl enable --now "aistack-$1.service"
  log "started aistack-$1.service"
}

ensure_host_nginx() {
  if command -v nginx >/dev/null 2>&1; then
    return 0
  fi
  log "nginx is not installed; installing it (needs a package mirror the node can reach)"
  if command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        nginx-light >&2
  elif command -v dnf >/dev/null 2>&1; then
    dnf install -y -q nginx >&2
  else
    die "no nginx, and neither apt-get nor dnf to install it: set gatewayImage"
  fi
  # The distribution's own nginx service would hold port 80; the gateway is ours.
  systemctl disable --now nginx.service >/dev/null 2>&1 || true
}

# gateway_certificate: a self-signed certificate for the TLS hop from the load balancer.
# An Application Load Balancer does not validate its targets' certificates, so a
# self-signed one serves (ELB user guide, "Target groups for your Application Load
# Balancers", routing configuration: docs.aws.amazon.com/elasticloadbalancing/latest/
# application/load-balancer-target-groups.html). Made once per node; the key, readable
# by root only, never leaves it.
gateway_certificate() {
  local cert=${AISTACK_GATEWAY_TLS_CERT:-} key=${AISTACK_GATEWAY_TLS_KEY:-}
  [[ -n $cert ]] || return 0
  [[ -n $key ]] || die "AISTACK_GATEWAY_TLS_CERT is set without AISTACK_GATEWAY_TLS_KEY"
  [[ -s $cert && -s $key ]] && return 0
  command -v openssl >/dev/null 2>&1 ||
    die "openssl is missing: the gateway cannot make its TLS certificate"
  mkdir -p "$(dirname "$cert")" "$(dirname "$key")"
  (umask 077 && openssl req -x509 -newkey rsa:2048 -nodes -days 825 -subj "/CN=${HOSTNAME:-aistack-gateway}" \
    -keyout "$key" -out "$cert" 2>/dev/null) ||
    die "openssl could not make the gateway's certificate"
  log "made the gateway's self-signed TLS certificate $cert"
}

prepare_gateway() {
  local dir
  for dir in $AISTACK_GATEWAY_DIRS; do
    mkdir -p "$dir"
  done
  # The cache holds prompts, answers and client keys: memory only, never the disk.
  mkdir -p "$AISTACK_GATEWAY_CACHE_DIR"
  if ((AISTACK_GATEWAY_CACHE_MB > 0)) && ! mountpoint -q "$AISTACK_GATEWAY_CACHE_DIR"; then
    mount -t tmpfs -o "size=${AISTACK_GATEWAY_CACHE_MB}m,mode=0700,noexec,nosuid,nodev" \
      tmpfs "$AISTACK_GATEWAY_CACHE_DIR"
  fi
  gateway_certificate
  if [[ -n ${AISTACK_GATEWAY_IMAGE:-} ]]; then
    pull "$AISTACK_GATEWAY_IMAGE"
  else
    ensure_host_nginx
    nginx -t -q -c "$AISTACK_GATEWAY_CONF" >&2
  fi
}

# complete_lifecycle CONTINUE|ABANDON: let the node join the target group, or have the
# group replace it. Retried: the role's policy may be younger than the node.
complete_lifecycle() {
  local result=$1 id group attempt
  if [[ -z ${AISTACK_LIFECYCLE_HOOK:-} ]]; then
    return 0
  fi
  id=$(instance_id) || { log "cannot read the instance id; lifecycle not completed"; return 1; }
  for attempt in 1 2 3 4 5 6; do
    if group=$(aws autoscaling describe-auto-scaling-instances --instance-ids "$id" \
      --query 'AutoScalingInstances[0].AutoScalingGroupName' --output text) &&
      [[ -n $group && $group != None ]] &&
      aws autoscaling complete-lifecycle-action --lifecycle-hook-name "$AISTACK_LIFECYCLE_HOOK" \
        --auto-scaling-group-name "$group" --instance-id "$id" \
        --lifecycle-action-result "$result" >&2; then
      log "lifecycle action $result sent to $group"
      return 0
    fi
    log "completing the lifecycle action failed (attempt $attempt); retrying"
    sleep $((attempt * 5))
  done
  return 1
}

BOOTED=0

# Whatever fails during boot, the group must learn of it rather than wait for the hook's
# timeout with a node that will never serve.
on_boot_exit() {
  if ((BOOTED == 0)); then
    complete_lifecycle ABANDON || true
  fi
}

boot() {
  prepare_dirs
  require_int AISTACK_RUNTIME_PORT 1
  require_int AISTACK_GATEWAY_PORT 1
  require_int AISTACK_MODEL_LOAD_TIMEOUT_SECONDS 60
  require_int AISTACK_GATEWAY_CACHE_MB 0
  trap on_boot_exit EXIT
  log "booting serving node for ${AISTACK_DATASET_NAME:-model}" \
    "version ${AISTACK_DATASET_VERSION:-unset}"
  instance_id >/dev/null || log "cannot read the instance id yet"
  configure_cloudwatch || log "configuring the CloudWatch agent failed; going on without it"
  "$BASH" "$AISTACK_HOME/nvme-cache.sh"
  "$BASH" "$AISTACK_HOME/dataset-sync.sh" >/dev/null
  wait_for_docker
  pull "$AISTACK_RUNTIME_IMAGE"
  start_unit model "model server"
  wait_until_answers "$(runtime_url)" "$AISTACK_MODEL_LOAD_TIMEOUT_SECONDS" "the model server"
  prepare_gateway
  start_unit gateway "nginx gateway"
  wait_until_answers "$(gateway_url)" 120 "the gateway"
  start_unit watch "model server watch"
  complete_lifecycle CONTINUE
  BOOTED=1
  log "serving"
}

run_model() {
  local id
  local -a args
  mapfile -t args <"$AISTACK_HOME/runtime.args"
  id=$(instance_id) || id=unknown
  docker rm -f "$MODEL_CONTAINER" >/dev/null 2>&1 || true
  # [gcp]
  # On GCP docker's gcplogs driver (runtime.args) names the VM itself: no stream option.
  if [[ $AISTACK_CLOUD == gcp ]]; then
    exec docker run --name "$MODEL_CONTAINER" "${args[@]}"
  fi
  # [/gcp]
  exec docker run --name "$MODEL_CONTAINER" --log-opt "awslogs-stream=$id/model" "${args[@]}"
}

run_gateway() {
  local dir
  local -a mounts=()
  if [[ -z ${AISTACK_GATEWAY_IMAGE:-} ]]; then
    exec nginx -c "$AISTACK_GATEWAY_CONF" -g 'daemon off;'
  fi
  for dir in $AISTACK_GATEWAY_DIRS "$AISTACK_GATEWAY_CACHE_DIR"; do
    mounts+=(--volume "$dir:$dir")
  done
  docker rm -f "$GATEWAY_CONTAINER" >/dev/null 2>&1 || true
  # Host networking: the gateway listens on the node's port and reaches the model server
  # on the node's loopback.
  exec docker run --name "$GATEWAY_CONTAINER" --network host \
    --volume "$AISTACK_GATEWAY_CONF:$AISTACK_GATEWAY_CONF:ro" "${mounts[@]}" \
    "$AISTACK_GATEWAY_IMAGE" nginx -c "$AISTACK_GATEWAY_CONF" -g 'daemon off;'
}

# One check of the watch: count failed health checks in a row; at the limit, ask the group
# to replace this node.
check_model() {
  local failures id
  if answers "$(runtime_url)"; then
    state_set model-failures 0
    return 0
  fi
  failures=$(($(state_get model-failures 0) + 1))
  state_set model-failures "$failures"
  log "the model server did not answer ($failures of $AISTACK_WATCH_FAILURES)"
  if ((failures < AISTACK_WATCH_FAILURES)); then
    return 0
  fi
  if [[ $(state_get marked-unhealthy 0) == 1 ]]; then
    return 0 # The group knows; it is replacing the node.
  fi
  # [gcp]
  # On GCP the group's autohealing probes the gateway's health path: stopping the gateway
  # fails it, the load balancer stops sending here and the group recreates the VM.
  if [[ $AISTACK_CLOUD == gcp ]]; then
    systemctl stop aistack-gateway.service >&2
    state_set marked-unhealthy 1
    log "stopped the gateway: autohealing recreates this VM"
    return 0
  fi
  # [/gcp]
  id=$(instance_id) || return 1
  aws autoscaling set-instance-health --instance-id "$id" --health-status Unhealthy \
    --no-should-respect-grace-period >&2
  state_set marked-unhealthy 1
  log "marked $id unhealthy: its auto scaling group replaces it"
}

watch() {
  require_int AISTACK_WATCH_INTERVAL_SECONDS 1
  require_int AISTACK_WATCH_FAILURES 1
  prepare_dirs
  state_set model-failures 0
  run_loop check_model "$AISTACK_WATCH_INTERVAL_SECONDS"
}

main() {
  local command=${1:-boot}
  (($# == 0)) || shift
  case $command in
    boot) parse_args "$@"; boot ;;
    model) run_model ;;
    gateway) run_gateway ;;
    watch) parse_args "$@"; watch ;;
    -h | --help) usage ;;
    *) die "unknown command '$command': use boot, model, gateway or watch" ;;
  esac
}

main "$@"

# shellcheck shell=bash
# lib.sh: helpers shared by the aistack node scripts. Sourced by each of them, never run.
#
# Environment (all optional):
#   AISTACK_ENV_FILE        KEY=value file sourced first when set; systemd units and
#                           bootstrap.sh point it at /etc/aistack/node.env. Its values win
#                           over the process environment.
#   AISTACK_STATE_DIR       state files (counters, deadlines, handled notices)
#                                                               (default /var/lib/aistack)
#   AISTACK_LOG_DIR         log files; the CloudWatch agent ships *.log from here
#                                                               (default /var/log/aistack)
#   AISTACK_IMDS_ENDPOINT   instance metadata service        (default http://169.254.169.254)
#   AISTACK_IMDS_TIMEOUT    seconds allowed per metadata request                (default 2)
#   AISTACK_SCHEDULER       asg | batch (AWS) | mig (GCP): what launched this node
#                                                                       (default asg)
#   AISTACK_TERMINATE_MODE  asg | mig | shutdown: how the node ends itself; asg asks its
#                           auto scaling group to terminate it and lower the desired
#                           capacity, mig deletes the VM through its managed instance group
#                           (default asg or mig after AISTACK_SCHEDULER, else shutdown)
#   AISTACK_REGION          region for aws and gcloud calls
#                                                 (default: the node's, from metadata)
#   AISTACK_MAX_ITERATIONS  stop a polling loop after this many checks  (default 0: never)
#   AISTACK_CLOUD           aws | gcp: the cloud the node runs on               (default aws)
#   AISTACK_GCE_METADATA    GCP metadata server
#                            (default http://metadata.google.internal/computeMetadata/v1)
#   AISTACK_INSTANCE_GROUP  GCP: the regional managed instance group that owns this VM
#
# One set of scripts serves both clouds. What differs is in the blocks between "# [gcp]"
# and "# [/gcp]": they run only when AISTACK_CLOUD=gcp, and render_user_data drops them,
# so an AWS node gets byte for byte the scripts it had before GCP support (the AWS lines
# stay as they were). The scripts ask for metadata by its EC2 path; on GCP, imds_get
# answers the same questions from the GCP metadata server (below).
#
# Every external command is looked up on PATH, so tests put stubs first on PATH.

if [[ -n ${AISTACK_ENV_FILE:-} && -r $AISTACK_ENV_FILE ]]; then
  set -a
  # shellcheck source=/dev/null
  . "$AISTACK_ENV_FILE"
  set +a
fi

AISTACK_SCRIPT=${AISTACK_SCRIPT:-aistack}
AISTACK_STATE_DIR=${AISTACK_STATE_DIR:-/var/lib/aistack}
AISTACK_LOG_DIR=${AISTACK_LOG_DIR:-/var/log/aistack}
AISTACK_IMDS_ENDPOINT=${AISTACK_IMDS_ENDPOINT:-http://169.254.169.254}
AISTACK_IMDS_TIMEOUT=${AISTACK_IMDS_TIMEOUT:-2}
AISTACK_SCHEDULER=${AISTACK_SCHEDULER:-asg}
AISTACK_MAX_ITERATIONS=${AISTACK_MAX_ITERATIONS:-0}
AISTACK_ONCE=0
if [[ -n ${AISTACK_REGION:-} ]]; then
  export AWS_DEFAULT_REGION=$AISTACK_REGION
fi

log() {
  local line
  printf -v line '%(%Y-%m-%dT%H:%M:%S%z)T %s[%d]: %s' -1 "$AISTACK_SCRIPT" "$$" "$*"
  printf '%s\n' "$line" >&2
  printf '%s\n' "$line" 2>/dev/null >>"$AISTACK_LOG_DIR/$AISTACK_SCRIPT.log" || true
}

die() {
  log "error: $*"
  exit 2
}

# The comment block at the top of the running script is its usage text. The copies that
# render_user_data installs have no comments, so there it points at the documented ones.
usage() {
  local line shown=0
  {
    read -r _
    while IFS= read -r line && [[ $line == '#'* ]]; do
      line=${line#'#'}
      printf '%s\n' "${line# }"
      shown=1
    done
  } <"$0"
  if ((!shown)); then
    printf 'usage: %s [--once]\nDocumented in aistack/node/scripts/%s in the aistack package.\n' \
      "${0##*/}" "${0##*/}"
  fi
}

parse_args() {
  while (($#)); do
    case $1 in
      --once) AISTACK_ONCE=1 ;;
      -h | --help) usage; exit 0 ;;
      *) die "unknown argument '$1' (try --help)" ;;
    esac
    shift
  done
}

# require_int NAME MIN: the variable NAME holds a whole number >= MIN, or the script stops.
require_int() {
  local name=$1 min=$2 value=${!1:-}
  if ! [[ $value =~ ^[0-9]+$ ]] || ((10#$value < min)); then
    die "$name must be a whole number >= $min (got '$value')"
  fi
}

now() {
  printf '%(%s)T' -1
}

prepare_dirs() {
  mkdir -p "$AISTACK_STATE_DIR" "$AISTACK_LOG_DIR"
}

# state_get NAME DEFAULT: the first line of state file NAME, or DEFAULT when there is none.
state_get() {
  local value
  if [[ -r $AISTACK_STATE_DIR/$1 ]] && read -r value <"$AISTACK_STATE_DIR/$1"; then
    printf '%s' "$value"
  else
    printf '%s' "$2"
  fi
}

# state_set NAME VALUE, atomically: a reader never sees half a file.
state_set() {
  printf '%s\n' "$2" >"$AISTACK_STATE_DIR/$1.tmp"
  mv -f "$AISTACK_STATE_DIR/$1.tmp" "$AISTACK_STATE_DIR/$1"
}

# A hold is a pid file under $AISTACK_STATE_DIR/hold: while that process lives the idle
# watchdog counts the node as busy. bootstrap.sh holds the node while it syncs data;
# a trainer that idles its GPUs on purpose can do the same.
hold_acquire() {
  mkdir -p "$AISTACK_STATE_DIR/hold"
  printf '%s\n' "$$" >"$AISTACK_STATE_DIR/hold/$1.pid"
}

hold_release() {
  rm -f "$AISTACK_STATE_DIR/hold/$1.pid"
}

_imds_token=""
_imds_token_at=0

# imds_refresh_token: fetch an IMDSv2 session token unless the cached one is fresh. Call it
# in the main shell before imds_get, which often runs in a command substitution.
imds_refresh_token() {
  if [[ -n $_imds_token ]] && ((SECONDS - _imds_token_at < 3000)); then
    return 0
  fi
  _imds_token=$(curl -sSf -X PUT --max-time "$AISTACK_IMDS_TIMEOUT" \
    -H "X-aws-ec2-metadata-token-ttl-seconds: 3600" \
    "$AISTACK_IMDS_ENDPOINT/latest/api/token") || {
    _imds_token=""
    return 1
  }
  _imds_token_at=$SECONDS
}

# imds_get PATH: print the metadata at /latest/PATH. Returns 1 when it does not exist (404),
# 2 when the metadata service cannot be read.
imds_get() {
  local out code
  imds_refresh_token || return 2
  out=$(curl -sS --max-time "$AISTACK_IMDS_TIMEOUT" \
    -H "X-aws-ec2-metadata-token: $_imds_token" \
    -w '\n%{http_code}' "$AISTACK_IMDS_ENDPOINT/latest/$1") || return 2
  code=${out##*$'\n'}
  case $code in
    200) printf '%s\n' "${out%$'\n'*}" ;;
    404) return 1 ;;
    *) return 2 ;;
  esac
}

terminate_mode() {
  local mode=${AISTACK_TERMINATE_MODE:-}
  # [gcp]
  if [[ -z $mode && $AISTACK_SCHEDULER == mig ]]; then mode=mig; fi
  if [[ $mode == mig ]]; then
    printf '%s' "$mode"
    return 0
  fi
  # [/gcp]
  if [[ -z $mode ]]; then
    if [[ $AISTACK_SCHEDULER == asg ]]; then mode=asg; else mode=shutdown; fi
  fi
  case $mode in
    asg | shutdown) printf '%s' "$mode" ;;
    *) die "AISTACK_TERMINATE_MODE must be asg or shutdown (got '$mode')" ;;
  esac
}

ensure_region() {
  local region
  if [[ -z ${AWS_DEFAULT_REGION:-} ]] && region=$(imds_get meta-data/placement/region); then
    export AWS_DEFAULT_REGION=$region
  fi
}

# terminate_node REASON: end this node. On an auto scaling node the group terminates it and
# lowers its desired capacity, so it is not replaced; if that call fails the node halts
# anyway, because a node that has decided to stop must not keep billing.
terminate_node() {
  local reason=$1 mode instance_id requested
  mode=$(terminate_mode)
  requested=$(state_get terminating 0)
  if [[ $requested =~ ^[0-9]+$ ]] && (($(now) - requested < 600)); then
    log "termination already requested at $requested; waiting for it"
    return 0
  fi
  log "ending this node ($mode): $reason"
  # [gcp]
  # A VM that halts inside a managed instance group is recreated: the group keeps its
  # target size. Deleting it through the group lowers the target, so it stays gone.
  if [[ $mode == mig ]]; then
    if gce_delete_through_group; then
      state_set terminating "$(now)"
      return 0
    fi
    log "deleting through the instance group failed; halting with shutdown -h now instead"
  fi
  # [/gcp]
  if [[ $mode == asg ]]; then
    imds_refresh_token || true
    ensure_region
    if instance_id=$(imds_get meta-data/instance-id) &&
      aws autoscaling terminate-instance-in-auto-scaling-group \
        --instance-id "$instance_id" --should-decrement-desired-capacity >/dev/null; then
      state_set terminating "$(now)"
      return 0
    fi
    log "auto scaling termination failed; halting with shutdown -h now instead"
  fi
  if shutdown -h now; then
    state_set terminating "$(now)"
    return 0
  fi
  log "shutdown -h now failed"
  return 1
}

# run_loop CHECK SECONDS: run CHECK every SECONDS; once with --once, or
# AISTACK_MAX_ITERATIONS times. A failed check is logged and the loop goes on.
run_loop() {
  local check=$1 interval=$2 iteration=0 status
  while :; do
    status=0
    "$check" || status=$?
    if ((status != 0)); then
      log "$check failed with status $status"
    fi
    iteration=$((iteration + 1))
    if ((AISTACK_ONCE)); then
      return "$status"
    fi
    if ((AISTACK_MAX_ITERATIONS > 0 && iteration >= AISTACK_MAX_ITERATIONS)); then
      return 0
    fi
    sleep "$interval"
  done
}

# A tool the node needs that is missing or broken must be seen, never only implied by what
# later goes wrong (docs/real-boot.md). node_report LEVEL TOOL WHAT... -- FIX... says so in one line,
# "AISTACK BOOT FAILED|DEGRADED: <tool>: <what breaks>. Fix: <fix>", on stderr (cloud-init
# copies user data's stderr to the console output; on GCE the startup script's output goes
# to the journal of google-startup-scripts) and in the log; keeps it in the state files
# boot-status (failed wins over degraded) and missing-tools; and publishes it where the
# cloud's monitoring can read it (node_publish). LEVEL failed: the caller then stops the
# boot (boot_fail); degraded: the node works without the tool, and says what it lacks.
# The words before "--" say what breaks, those after it the fix.
node_report() {
  local level=$1 tool=$2 what="" fix="" status tools
  shift 2
  while (($#)) && [[ $1 != -- ]]; do what+=${what:+ }$1; shift; done
  (($#)) && shift
  fix="$*"
  log "AISTACK BOOT ${level^^}: $tool: $what. Fix: $fix"
  mkdir -p "$AISTACK_STATE_DIR" 2>/dev/null || return 0
  status=$(state_get boot-status ok)
  if [[ $level == failed || $status != failed ]]; then
    state_set boot-status "$level"
  fi
  tools=$(state_get missing-tools "")
  if [[ " $tools " != *" $tool "* ]]; then
    tools=${tools:+$tools }$tool
    state_set missing-tools "$tools"
  fi
  node_publish "$(state_get boot-status "$level")" "$tools" "$tool" ||
    log "could not publish the boot status to the cloud's monitoring"
}

# boot_fail TOOL WHAT... -- FIX...: node_report failed, then stop with status 3. The guards are
# started before any tool check, so a node whose boot failed still ends itself.
boot_fail() {
  node_report failed "$@"
  exit 3
}

# node_publish STATUS TOOLS TOOL: on AWS, the metric NodeToolMissing (1, dimensions
# InstanceId and Tool) in the node's CloudWatch namespace, which the node role may write
# (cloudwatch:PutMetricData, conditioned on that namespace); nothing to publish with when
# the aws CLI itself is what is missing.
node_publish() {
  local instance_id
  command -v aws >/dev/null 2>&1 || return 0
  imds_refresh_token || return 1
  ensure_region
  instance_id=$(imds_get meta-data/instance-id) || return 1
  aws cloudwatch put-metric-data --namespace "${AISTACK_METRICS_NAMESPACE:-aistack/node}" \
    --metric-name NodeToolMissing --unit Count --value 1 \
    --dimensions "InstanceId=$instance_id,Tool=$3" >&2
}

# gpu_check: nvidia-smi answers, or print why not and fail. nvidia-smi exits 9 when it
# "couldn't communicate with the NVIDIA driver" (the module did not load, e.g. an unsigned
# DKMS build under Secure Boot) and 127 when it is not installed.
gpu_check() {
  local out status=0
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    printf 'nvidia-smi is not installed (no NVIDIA driver on this image)'
    return 1
  fi
  out=$(nvidia-smi -L 2>&1) || status=$?
  if ((status != 0)); then
    printf 'nvidia-smi exited %d: %s' "$status" "${out%%$'\n'*}"
    return 1
  fi
}

# cloudwatch_ctl: the CloudWatch agent's control command, or status 1 when it is absent.
cloudwatch_ctl() {
  local default=/opt/aws/amazon-cloudwatch-agent/bin/amazon-cloudwatch-agent-ctl
  if [[ -n ${AISTACK_CWAGENT_CTL:-} ]]; then
    printf '%s' "$AISTACK_CWAGENT_CTL"
  elif command -v amazon-cloudwatch-agent-ctl >/dev/null 2>&1; then
    printf '%s' amazon-cloudwatch-agent-ctl
  elif [[ -x $default ]]; then
    printf '%s' "$default"
  else
    return 1
  fi
}
# [gcp]
# Google Cloud. The metadata server answers plain GETs that carry Metadata-Flavor: Google
# (https://cloud.google.com/compute/docs/metadata/querying-metadata); there is no session
# token as with IMDSv2.
AISTACK_CLOUD=${AISTACK_CLOUD:-aws}
AISTACK_GCE_METADATA=${AISTACK_GCE_METADATA:-http://metadata.google.internal/computeMetadata/v1}
AISTACK_INSTANCE_GROUP=${AISTACK_INSTANCE_GROUP:-}
case $AISTACK_CLOUD in
  aws | gcp) ;;
  *) die "AISTACK_CLOUD must be aws or gcp (got '$AISTACK_CLOUD')" ;;
esac

# gce_metadata_get PATH: print computeMetadata/v1/PATH. Returns 1 when it does not exist
# (404), 2 when the metadata server cannot be read.
gce_metadata_get() {
  local out code
  out=$(curl -sS --max-time "$AISTACK_IMDS_TIMEOUT" -H "Metadata-Flavor: Google" \
    -w '\n%{http_code}' "$AISTACK_GCE_METADATA/$1") || return 2
  code=${out##*$'\n'}
  case $code in
    200) printf '%s\n' "${out%$'\n'*}" ;;
    404) return 1 ;;
    *) return 2 ;;
  esac
}

# gce_region: the region, from instance/zone ("projects/NUMBER/zones/us-central1-a").
gce_region() {
  local zone
  zone=$(gce_metadata_get instance/zone) || return
  zone=${zone##*/}
  printf '%s\n' "${zone%-*}"
}

# gce_interruption_notice: print the notice when Compute Engine is about to stop this VM:
# a preemption ("instance/preempted" turns TRUE; Spot VMs get about 30 s) or a host
# maintenance event that stops it ("instance/maintenance-event" reads
# TERMINATE_ON_HOST_MAINTENANCE; GPU VMs cannot live-migrate and get an hour's notice,
# https://cloud.google.com/compute/docs/gpus/gpu-host-maintenance). Returns 1 without one.
# Polled rather than read with ?wait_for_change=true: the loop watches two keys, and a
# blocking wait on one would delay seeing the other.
gce_interruption_notice() {
  local value
  value=$(gce_metadata_get instance/preempted) || return
  if [[ $value == TRUE ]]; then
    printf 'preempted\n'
    return 0
  fi
  value=$(gce_metadata_get instance/maintenance-event) || return
  if [[ $value == TERMINATE_ON_HOST_MAINTENANCE ]]; then
    printf 'maintenance %s\n' "$value"
    return 0
  fi
  return 1
}

# gce_delete_through_group: delete this VM through its regional managed instance group,
# which lowers the group's target size so it does not create a replacement.
gce_delete_through_group() {
  local name region=${AISTACK_REGION:-}
  if [[ -z $AISTACK_INSTANCE_GROUP ]]; then
    log "AISTACK_INSTANCE_GROUP is not set: no group to delete this VM through"
    return 1
  fi
  name=$(gce_metadata_get instance/name) || return 1
  if [[ -z $region ]]; then
    region=$(gce_region) || return 1
  fi
  gcloud compute instance-groups managed delete-instances "$AISTACK_INSTANCE_GROUP" \
    --instances="$name" --region="$region" --quiet >&2
}

# gcs_rsync SOURCE DEST: make DEST a copy of SOURCE, one of them a gs:// URI.
gcs_rsync() {
  gcloud storage rsync --recursive "$1" "$2" >&2
}

if [[ $AISTACK_CLOUD == gcp ]]; then
  imds_refresh_token() {
    return 0
  }

  # imds_get PATH: the answer to the question the EC2 metadata PATH asks, from the GCP
  # metadata server; 1 where GCP has no such thing (a rebalance recommendation).
  imds_get() {
    case $1 in
      meta-data/spot/instance-action) gce_interruption_notice ;;
      meta-data/instance-id) gce_metadata_get instance/name ;;
      meta-data/placement/region) gce_region ;;
      *) return 1 ;;
    esac
  }

  # The CloudWatch agent has no place on GCP: the Ops Agent ships metrics and logs.
  cloudwatch_ctl() {
    return 1
  }

  # node_publish STATUS TOOLS TOOL: guest attributes aistack/boot-status and
  # aistack/missing-tools, which anyone with compute.instances.getGuestAttributes reads
  # without the VM (`gcloud compute instances get-guest-attributes VM --zone Z
  # --query-path=aistack/`). The VM writes them with a PUT to its metadata server when its
  # metadata has enable-guest-attributes=TRUE
  # (cloud.google.com/compute/docs/metadata/manage-guest-attributes).
  node_publish() {
    local status=0
    gce_guest_attribute_set boot-status "$1" || status=1
    gce_guest_attribute_set missing-tools "$2" || status=1
    return "$status"
  }
fi

# gce_guest_attribute_set KEY VALUE: set the guest attribute aistack/KEY.
gce_guest_attribute_set() {
  local code
  code=$(curl -sS -o /dev/null --max-time "$AISTACK_IMDS_TIMEOUT" -X PUT \
    -H "Metadata-Flavor: Google" --data "$2" -w '%{http_code}' \
    "$AISTACK_GCE_METADATA/instance/guest-attributes/aistack/$1") || return 1
  [[ $code == 2?? ]]
}
# [/gcp]

#!/usr/bin/env bash
# dataset-sync.sh: copy the pinned version of a dataset from S3 (Cloud Storage on GCP)
# into the node's cache (D3).
#
# The source is $AISTACK_DATASET_URI/$AISTACK_DATASET_VERSION/, the destination
# $AISTACK_CACHE_DIR/datasets/<name>/<version>. A marker file written only after a
# successful sync makes the next run with the same version a cache hit that does not call
# aws at all; another version syncs into its own directory; a failed sync leaves no marker.
# Prints the dataset directory on success and points datasets/<name>/current at it.
#
# Environment:
#   AISTACK_DATASET_URI         s3://bucket/prefix (gs://bucket/prefix on GCP) holding one
#                               sub-prefix per version                       (required)
#   AISTACK_DATASET_VERSION     the pinned version, e.g. v3 or 2024-06-01 (required)
#   AISTACK_DATASET_NAME        directory name in the cache (default: last part of the URI)
#   AISTACK_CACHE_DIR           cache root                                (default /mnt/nvme)
#   AISTACK_SYNC_CONCURRENCY    parallel S3 requests of the sync (AWS; `gcloud storage`
#                               sizes its own parallelism)                      (default 64)
#   AISTACK_SYNC_ATTEMPTS       tries before giving up                           (default 3)
#   AISTACK_SYNC_RETRY_SECONDS  pause between tries                             (default 15)
#   AISTACK_REGION, AISTACK_LOG_DIR, AISTACK_CLOUD  see lib.sh
# Commands: aws (gcloud on GCP), grep, mv, ln.

set -euo pipefail
AISTACK_SCRIPT=dataset-sync
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

AISTACK_CACHE_DIR=${AISTACK_CACHE_DIR:-/mnt/nvme}
AISTACK_SYNC_CONCURRENCY=${AISTACK_SYNC_CONCURRENCY:-64}
AISTACK_SYNC_ATTEMPTS=${AISTACK_SYNC_ATTEMPTS:-3}
AISTACK_SYNC_RETRY_SECONDS=${AISTACK_SYNC_RETRY_SECONDS:-15}
readonly MARKER=.aistack-complete

# dataset_name URI: the last part of an s3:// URI's path, or its bucket. A gs:// URI
# gives the same answer: only the part after the last '/' is kept.
dataset_name() {
  local path=${1#s3://}
  while [[ $path == */ ]]; do path=${path%/}; done
  printf '%s' "${path##*/}"
}

validate() {
  local uri=${AISTACK_DATASET_URI:-} version=${AISTACK_DATASET_VERSION:-}
  # [gcp]
  # Cloud Storage bucket names also take '_' (cloud.google.com/storage/docs/buckets#naming).
  if [[ $AISTACK_CLOUD == gcp ]]; then
    [[ $uri =~ ^gs://[a-z0-9][a-z0-9._-]+[a-z0-9](/[^[:space:]]*)?$ ]] ||
      die "AISTACK_DATASET_URI must be gs://bucket/prefix (got '$uri')"
  else
  # [/gcp]
  [[ $uri =~ ^s3://[a-z0-9][a-z0-9.-]+[a-z0-9](/[^[:space:]]*)?$ ]] ||
    die "AISTACK_DATASET_URI must be s3://bucket/prefix (got '$uri')"
  # [gcp]
  fi
  # [/gcp]
  [[ $version =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] ||
    die "AISTACK_DATASET_VERSION must be a version like v3 (got '$version')"
  [[ ${version,,} != latest ]] ||
    die "AISTACK_DATASET_VERSION must pin a version; 'latest' changes under a running job"
  [[ ${AISTACK_DATASET_NAME:-$(dataset_name "$uri")} =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] ||
    die "AISTACK_DATASET_NAME must be letters, digits, '.', '_' or '-'"
  require_int AISTACK_SYNC_CONCURRENCY 1
  require_int AISTACK_SYNC_ATTEMPTS 1
  require_int AISTACK_SYNC_RETRY_SECONDS 0
}

# is_complete DIR: DIR holds a finished sync of $AISTACK_DATASET_VERSION.
is_complete() {
  [[ -r $1/$MARKER ]] && grep -qxF "version=$AISTACK_DATASET_VERSION" "$1/$MARKER"
}

# sync_with_retries SOURCE DEST
sync_with_retries() {
  local attempt
  for ((attempt = 1; attempt <= AISTACK_SYNC_ATTEMPTS; attempt++)); do
    log "syncing $1 to $2 (attempt $attempt of $AISTACK_SYNC_ATTEMPTS)"
    # [gcp]
    if [[ $AISTACK_CLOUD == gcp ]]; then
      if gcs_rsync "$1" "$2"; then
        return 0
      fi
    else
    # [/gcp]
    if aws s3 sync "$1" "$2" --only-show-errors >&2; then
      return 0
    fi
    # [gcp]
    fi
    # [/gcp]
    if ((attempt < AISTACK_SYNC_ATTEMPTS && AISTACK_SYNC_RETRY_SECONDS > 0)); then
      sleep "$AISTACK_SYNC_RETRY_SECONDS"
    fi
  done
  return 1
}

write_marker() {
  local dest=$1 source=$2
  printf 'version=%s\nsource=%s\ncompleted_at=%(%Y-%m-%dT%H:%M:%SZ)T\n' \
    "$AISTACK_DATASET_VERSION" "$source" -1 >"$dest/$MARKER.tmp"
  mv -f "$dest/$MARKER.tmp" "$dest/$MARKER"
}

main() {
  local name source dest
  parse_args "$@"
  prepare_dirs
  validate
  name=${AISTACK_DATASET_NAME:-$(dataset_name "$AISTACK_DATASET_URI")}
  source=${AISTACK_DATASET_URI%/}/$AISTACK_DATASET_VERSION/
  dest=$AISTACK_CACHE_DIR/datasets/$name/$AISTACK_DATASET_VERSION
  if is_complete "$dest"; then
    log "cache hit: $name version $AISTACK_DATASET_VERSION is in $dest already"
  else
    mkdir -p "$dest"
    rm -f "$dest/$MARKER"
    # [gcp]
    if [[ $AISTACK_CLOUD != gcp ]]; then
    # [/gcp]
    aws configure set default.s3.max_concurrent_requests "$AISTACK_SYNC_CONCURRENCY"
    # [gcp]
    fi
    # [/gcp]
    if ! sync_with_retries "$source" "$dest"; then
      log "error: syncing $source failed; $dest has no completion marker"
      return 1
    fi
    write_marker "$dest" "$source"
    log "synced $name version $AISTACK_DATASET_VERSION into $dest"
  fi
  ln -sfn "$AISTACK_DATASET_VERSION" "$AISTACK_CACHE_DIR/datasets/$name/current"
  printf '%s\n' "$dest"
}

main "$@"

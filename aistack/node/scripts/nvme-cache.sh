#!/usr/bin/env bash
# nvme-cache.sh: put the node's instance-store NVMe disks behind $AISTACK_CACHE_DIR (D3).
#
# Instance-store disks are found by their model; EBS volumes, which are NVMe devices too on
# Nitro instances, have another model and are never touched. Two or more disks are striped
# into one RAID0 array, a single disk is formatted directly, and with none the cache is a
# plain directory on the root volume. Idempotent: a mounted cache is left alone and an
# existing filesystem is mounted, not reformatted.
#
# On GCP (AISTACK_CLOUD=gcp) the disks are the local SSDs, found by the symlinks Compute
# Engine makes for them, /dev/disk/by-id/google-local-nvme-ssd-N
# (https://cloud.google.com/compute/docs/disks/disk-symlinks); on machine types whose
# persistent disks are NVMe too (C3, A3) a model name would not tell them apart.
#
# Some images prepare the disks themselves before user data runs: the AWS Deep Learning AMIs
# put every instance-store disk into one LVM volume (vg.01/lv_ephemeral, ext4) mounted at
# /opt/dlami/nvme. When AISTACK_IMAGE_NVME_DIR is a mount point it is bind-mounted at the
# cache dir. A disk that another layer owns (it has holders or partitions, is mounted, or
# carries an LVM, RAID or other member signature) is never formatted or mounted: it is
# skipped, and with no free disk left the cache is a directory on the root volume.
#
# Environment:
#   AISTACK_CACHE_DIR    mount point                                       (default /mnt/nvme)
#   AISTACK_IMAGE_NVME_DIR  where the image mounts the instance store itself
#                                                            (default /opt/dlami/nvme)
#   AISTACK_CACHE_FS     xfs | ext4: filesystem made on the disks               (default xfs)
#   AISTACK_RAID_DEVICE  md device made from two or more disks             (default /dev/md0)
#   AISTACK_DEV_DIR      directory holding the disks' device nodes             (default /dev)
#   AISTACK_NVME_MODEL   model of instance-store disks, as `lsblk -o MODEL` prints it
#                                               (default "Amazon EC2 NVMe Instance Storage")
#   AISTACK_DISK_BY_ID   GCP: where the disk symlinks are          (default /dev/disk/by-id)
#   AISTACK_LOG_DIR, AISTACK_CLOUD  see lib.sh
# Commands: lsblk, mdadm, blkid, mkfs.xfs or mkfs.ext4, mount, mountpoint, findmnt, readlink.

set -euo pipefail
AISTACK_SCRIPT=nvme-cache
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

AISTACK_CACHE_DIR=${AISTACK_CACHE_DIR:-/mnt/nvme}
AISTACK_CACHE_FS=${AISTACK_CACHE_FS:-xfs}
AISTACK_RAID_DEVICE=${AISTACK_RAID_DEVICE:-/dev/md0}
AISTACK_DEV_DIR=${AISTACK_DEV_DIR:-/dev}
AISTACK_NVME_MODEL=${AISTACK_NVME_MODEL:-Amazon EC2 NVMe Instance Storage}
AISTACK_IMAGE_NVME_DIR=${AISTACK_IMAGE_NVME_DIR-/opt/dlami/nvme}

# Print the kernel names of the instance-store disks, one a line. Runs in a command
# substitution, where set -e does not reach, hence the explicit return.
instance_store_disks() {
  local listing name model
  listing=$(lsblk -dn -o NAME,MODEL) || return 1
  while read -r name model; do
    if [[ $model == "$AISTACK_NVME_MODEL" && $name =~ ^[A-Za-z0-9]+$ ]]; then
      printf '%s\n' "$name"
    fi
  done <<<"$listing"
}

# [gcp]
if [[ $AISTACK_CLOUD == gcp ]]; then
  AISTACK_DISK_BY_ID=${AISTACK_DISK_BY_ID:-/dev/disk/by-id}

  # The local SSDs' kernel names, one a line, in the order of their symlinks' numbers;
  # the -partN links of a partitioned disk are not disks.
  instance_store_disks() {
    local link target
    for link in "$AISTACK_DISK_BY_ID"/google-local-nvme-ssd-*; do
      [[ $link =~ /google-local-nvme-ssd-[0-9]+$ && -e $link ]] || continue
      target=$(readlink -f "$link") || return 1
      [[ ${target##*/} =~ ^[A-Za-z0-9]+$ ]] && printf '%s\n' "${target##*/}"
    done
    return 0
  }
fi
# [/gcp]

# disk_in_use DEVICE: DEVICE belongs to another layer; prints why. `lsblk -nP` lists the
# disk and, below it, whatever holds it (partitions, LVM volumes, md arrays), one
# KEY="value" line each. A disk that cannot be inspected counts as in use.
disk_in_use() {
  local device=$1 listing first fstype="" mounted_at="" lines
  listing=$(lsblk -nP -o NAME,FSTYPE,MOUNTPOINT "$device") || {
    printf 'lsblk cannot inspect it'
    return 0
  }
  first=${listing%%$'\n'*}
  lines=$(grep -c . <<<"$listing") || lines=0
  [[ $first =~ FSTYPE=\"([^\"]*)\" ]] && fstype=${BASH_REMATCH[1]}
  [[ $first =~ MOUNTPOINT=\"([^\"]*)\" ]] && mounted_at=${BASH_REMATCH[1]}
  if ((lines > 1)); then
    printf 'it has holders or partitions'
  elif [[ -n $mounted_at ]]; then
    printf 'it is mounted at %s' "$mounted_at"
  elif [[ $fstype == *_member ]]; then
    printf 'it carries an %s signature' "$fstype"
  else
    return 1
  fi
}

# use_image_mount: when the image has mounted the instance store itself, bind-mount that
# at the cache dir instead of touching the disks.
use_image_mount() {
  local image_source
  if [[ -z $AISTACK_IMAGE_NVME_DIR || $AISTACK_IMAGE_NVME_DIR == "$AISTACK_CACHE_DIR" ]] ||
    ! mountpoint -q "$AISTACK_IMAGE_NVME_DIR"; then
    return 1
  fi
  image_source=$(findmnt -n -o SOURCE "$AISTACK_IMAGE_NVME_DIR" 2>/dev/null) ||
    image_source="a volume"
  log "the image mounted $image_source at $AISTACK_IMAGE_NVME_DIR; the cache uses it, no disk" \
    "is formatted"
  mkdir -p "$AISTACK_CACHE_DIR"
  mount --bind "$AISTACK_IMAGE_NVME_DIR" "$AISTACK_CACHE_DIR"
  log "bind-mounted $AISTACK_IMAGE_NVME_DIR at $AISTACK_CACHE_DIR"
}

# make_raid0 DEVICE...: stripe the devices into $AISTACK_RAID_DEVICE unless it exists.
make_raid0() {
  if [[ -b $AISTACK_RAID_DEVICE ]]; then
    log "$AISTACK_RAID_DEVICE exists already; reusing it"
    return 0
  fi
  # Without mdadm the disks cannot be one cache, and one disk alone may not hold the
  # dataset: the boot stops here, saying so (Google's local SSD guide installs mdadm
  # before it stripes: cloud.google.com/compute/docs/disks/add-local-ssd).
  command -v mdadm >/dev/null 2>&1 || boot_fail mdadm \
    "mdadm is not installed: the $# local disks cannot be striped into the cache" -- \
    "use a boot image with mdadm, or set AISTACK_HOST_PACKAGES=mdadm where a package" \
    "mirror is reachable"
  log "striping $# instance-store disks into RAID0 $AISTACK_RAID_DEVICE: $*"
  mdadm --create "$AISTACK_RAID_DEVICE" --run --level=0 --raid-devices="$#" "$@" >&2
}

# ensure_filesystem DEVICE: format DEVICE unless it already holds a filesystem.
ensure_filesystem() {
  local device=$1 existing
  existing=$(blkid -o value -s TYPE "$device" 2>/dev/null) || existing=""
  if [[ -n $existing ]]; then
    log "keeping the $existing filesystem on $device"
    return 0
  fi
  log "formatting $device as $AISTACK_CACHE_FS"
  case $AISTACK_CACHE_FS in
    xfs) mkfs.xfs -f -q -K -L aistack "$device" >&2 ;;
    ext4) mkfs.ext4 -F -q -m 0 -L aistack "$device" >&2 ;;
  esac
}

main() {
  local listing device name why
  local -a found=() disks=()
  parse_args "$@"
  prepare_dirs
  case $AISTACK_CACHE_FS in
    xfs | ext4) ;;
    *) die "AISTACK_CACHE_FS must be xfs or ext4 (got '$AISTACK_CACHE_FS')" ;;
  esac
  if mountpoint -q "$AISTACK_CACHE_DIR"; then
    log "$AISTACK_CACHE_DIR is mounted already; nothing to do"
    return 0
  fi
  if use_image_mount; then
    return 0
  fi
  listing=$(instance_store_disks)
  if [[ -n $listing ]]; then
    mapfile -t found <<<"$listing"
  fi
  for name in "${found[@]}"; do
    # Our own array from an earlier boot holds its members: keep them for make_raid0.
    if ((${#found[@]} > 1)) && [[ -b $AISTACK_RAID_DEVICE ]]; then
      disks+=("$name")
    elif why=$(disk_in_use "$AISTACK_DEV_DIR/$name"); then
      log "leaving $AISTACK_DEV_DIR/$name alone: $why"
    else
      disks+=("$name")
    fi
  done
  case ${#disks[@]} in
    0)
      if ((${#found[@]})); then
        log "every instance-store disk is in use by another layer; the cache is a" \
          "directory on the root volume"
      else
        log "no instance-store NVMe disks; the cache is a directory on the root volume"
      fi
      mkdir -p "$AISTACK_CACHE_DIR"
      return 0
      ;;
    1)
      device=$AISTACK_DEV_DIR/${disks[0]}
      log "one instance-store disk, $device; no RAID"
      ;;
    *)
      make_raid0 "${disks[@]/#/$AISTACK_DEV_DIR/}"
      device=$AISTACK_RAID_DEVICE
      ;;
  esac
  ensure_filesystem "$device"
  mkdir -p "$AISTACK_CACHE_DIR"
  mount -o noatime "$device" "$AISTACK_CACHE_DIR"
  log "mounted $device at $AISTACK_CACHE_DIR"
}

main "$@"

"""nvme-cache.sh: instance-store disks striped, formatted and mounted; EBS never touched."""

from __future__ import annotations

import pytest

EBS = "nvme0n1     Amazon Elastic Block Store              \n"
STORE = "Amazon EC2 NVMe Instance Storage        "


def touched(node, device: str) -> list[list[str]]:
    return [call for call in node.calls() if any(device in arg for arg in call[1:])]


def test_two_or_more_instance_store_disks_become_one_raid0_array(node):
    node.answer("lsblk", out=f"{EBS}nvme1n1     {STORE}\nnvme2n1     {STORE}\nnvme3n1 {STORE}\n")
    node.run("nvme-cache.sh")
    md = str(node.dev / "md0")
    disks = [str(node.dev / f"nvme{i}n1") for i in (1, 2, 3)]
    assert node.calls("lsblk") == [
        ["-dn", "-o", "NAME,MODEL"],
        *(["-nP", "-o", "NAME,FSTYPE,MOUNTPOINT", disk] for disk in disks),
    ]
    assert node.calls("mdadm") == [
        ["--create", md, "--run", "--level=0", "--raid-devices=3", *disks]
    ]
    assert node.calls("mkfs.xfs") == [["-f", "-q", "-K", "-L", "aistack", md]]
    assert node.calls("mount") == [["-o", "noatime", md, str(node.cache)]]
    assert touched(node, "nvme0n1") == [], "the EBS root volume must never be touched"


def test_one_instance_store_disk_is_formatted_directly_without_raid(node):
    node.answer("lsblk", out=f"{EBS}nvme1n1 {STORE}\n")
    node.run("nvme-cache.sh")
    disk = str(node.dev / "nvme1n1")
    assert node.calls("mdadm") == []
    assert node.calls("mkfs.xfs") == [["-f", "-q", "-K", "-L", "aistack", disk]]
    assert node.calls("mount") == [["-o", "noatime", disk, str(node.cache)]]
    assert touched(node, "nvme0n1") == []


def test_no_instance_store_disk_falls_back_to_a_directory_on_the_root_volume(node):
    node.answer("lsblk", out=EBS + "nvme1n1 Amazon Elastic Block Store\n")
    node.run("nvme-cache.sh")
    assert node.cache.is_dir()
    assert "directory on the root volume" in node.log("nvme-cache")
    for command in ("mdadm", "mkfs.xfs", "mkfs.ext4", "mount", "blkid"):
        assert node.calls(command) == [], f"{command} must not run without instance storage"


def test_an_already_mounted_cache_is_left_alone(node):
    node.answer("mountpoint", rc=0)
    node.answer("lsblk", out=f"nvme1n1 {STORE}\nnvme2n1 {STORE}\n")
    node.run("nvme-cache.sh")
    assert [call[0] for call in node.calls()] == ["mountpoint"]
    assert node.calls("mountpoint") == [["-q", str(node.cache)]]


def test_an_existing_filesystem_is_mounted_not_reformatted(node):
    node.answer("lsblk", out=f"nvme1n1 {STORE}\n")
    node.answer("blkid", out="xfs\n", rc=0)
    node.run("nvme-cache.sh")
    assert node.calls("mkfs.xfs") == []
    assert node.calls("mount") == [["-o", "noatime", str(node.dev / "nvme1n1"), str(node.cache)]]


def test_ext4_is_made_when_asked_for(node):
    node.answer("lsblk", out=f"nvme1n1 {STORE}\nnvme2n1 {STORE}\n")
    node.run("nvme-cache.sh", AISTACK_CACHE_FS="ext4")
    assert node.calls("mkfs.ext4") == [
        ["-F", "-q", "-m", "0", "-L", "aistack", str(node.dev / "md0")]
    ]
    assert node.calls("mkfs.xfs") == []


def test_a_failing_disk_listing_stops_the_script_before_anything_is_formatted(node):
    node.answer("lsblk", rc=32)
    result = node.run("nvme-cache.sh", check=False)
    assert result.returncode != 0
    assert node.calls("mdadm") == node.calls("mkfs.xfs") == node.calls("mount") == []


def test_an_unknown_filesystem_is_refused(node):
    result = node.run("nvme-cache.sh", check=False, AISTACK_CACHE_FS="btrfs")
    assert result.returncode == 2
    assert "AISTACK_CACHE_FS must be xfs or ext4" in result.stderr
    assert node.calls() == []


# ---- the Deep Learning AMI: the image has already put the instance store into LVM -------------
#
# Platform fact (AWS DLAMI release notes, e.g. "Deep Learning Base OSS Nvidia Driver GPU AMI
# (Ubuntu 22.04)", docs.aws.amazon.com/dlami/latest/devguide, "nvme_location:
# /opt/dlami/nvme"): before user data runs, the image's dlami-nvme.service has made every
# instance-store disk an LVM physical volume of volume group vg.01, created lv_ephemeral on
# it, formatted that ext4 and mounted it at /opt/dlami/nvme. The unit follows AWS
# ParallelCluster's setup-ephemeral-drives.sh (aws/aws-parallelcluster-cookbook:
# LVM_VG_NAME="vg.01", LVM_NAME="lv_ephemeral", FS_TYPE="ext4"). util-linux then answers:
#   lsblk -nP -o NAME,FSTYPE,MOUNTPOINT /dev/nvme1n1   the disk, then its holder
#   findmnt -n -o SOURCE /opt/dlami/nvme               /dev/mapper/vg.01-lv_ephemeral
#   mountpoint -q /opt/dlami/nvme                      status 0 (status 1 for the cache dir)
# and mounting the member disk itself fails (mount: unknown filesystem type 'LVM2_member',
# status 32), which is what ended every serving boot before.
DLAMI_DISK = (
    'NAME="nvme1n1" FSTYPE="LVM2_member" MOUNTPOINT=""\n'
    'NAME="vg.01-lv_ephemeral" FSTYPE="ext4" MOUNTPOINT="/opt/dlami/nvme"\n'
)
DLAMI_MOUNT = "/opt/dlami/nvme"
DLAMI_VOLUME = "/dev/mapper/vg.01-lv_ephemeral"


def dlami_boot_state(node, *, image_mounted: bool = True) -> None:
    """The DLAMI's disks and mounts, as util-linux reports them before user data."""
    node.answer("lsblk", out=f"{EBS}nvme1n1     {STORE}\n")
    (node.stubs / "lsblk-dev").mkdir()
    (node.stubs / "lsblk-dev" / "nvme1n1").write_text(DLAMI_DISK)
    # blkid reads the signature on the disk itself.
    node.answer("blkid", out="LVM2_member\n", rc=0)
    mounted = DLAMI_MOUNT if image_mounted else "/nowhere"
    node.stub("mountpoint", f'[[ ${{*: -1}} == "{mounted}" ]] || exit 1')
    node.stub("findmnt", f'[[ ${{*: -1}} == "{mounted}" ]] && echo {DLAMI_VOLUME} || exit 1')
    # The real mount refuses a member disk; the stub does too, so a regression shows.
    node.stub(
        "mount",
        "for arg; do [[ $arg != *nvme1n1 ]] || "
        "{ echo \"mount: unknown filesystem type 'LVM2_member'\" >&2; exit 32; }; done",
    )


def test_on_the_dlami_the_cache_is_the_images_volume_bind_mounted_and_nothing_is_formatted(
    node,
):
    dlami_boot_state(node)
    node.run("nvme-cache.sh")
    assert node.calls("mount") == [["--bind", DLAMI_MOUNT, str(node.cache)]]
    for command in ("mdadm", "mkfs.xfs", "mkfs.ext4"):
        assert node.calls(command) == [], f"{command} must not run on the DLAMI's disks"
    assert touched(node, "nvme1n1") == [], "the LVM member disk is never touched"
    assert f"the image mounted {DLAMI_VOLUME} at {DLAMI_MOUNT}" in node.log("nvme-cache")


@pytest.mark.parametrize(
    ("listing", "why"),
    [
        (DLAMI_DISK, "it has holders or partitions"),
        ('NAME="nvme1n1" FSTYPE="LVM2_member" MOUNTPOINT=""\n', "an LVM2_member signature"),
        ('NAME="nvme1n1" FSTYPE="xfs" MOUNTPOINT="/scratch"\n', "it is mounted at /scratch"),
        ('NAME="nvme1n1" FSTYPE="linux_raid_member" MOUNTPOINT=""\n', "linux_raid_member"),
    ],
)
def test_a_disk_another_layer_owns_is_never_formatted_or_mounted(node, listing, why):
    dlami_boot_state(node, image_mounted=False)
    (node.stubs / "lsblk-dev" / "nvme1n1").write_text(listing)
    node.run("nvme-cache.sh")
    assert node.cache.is_dir()
    for command in ("mdadm", "mkfs.xfs", "mkfs.ext4", "mount"):
        assert node.calls(command) == [], f"{command} must not touch a disk in use"
    log = node.log("nvme-cache")
    assert why in log and "in use by another layer" in log


def test_only_the_free_disks_are_striped_when_one_is_in_use(node):
    node.answer("lsblk", out=f"nvme1n1 {STORE}\nnvme2n1 {STORE}\nnvme3n1 {STORE}\n")
    (node.stubs / "lsblk-dev").mkdir()
    (node.stubs / "lsblk-dev" / "nvme2n1").write_text(
        'NAME="nvme2n1" FSTYPE="ext4" MOUNTPOINT="/data"\n'
    )
    node.run("nvme-cache.sh")
    md = str(node.dev / "md0")
    free = [str(node.dev / "nvme1n1"), str(node.dev / "nvme3n1")]
    assert node.calls("mdadm") == [
        ["--create", md, "--run", "--level=0", "--raid-devices=2", *free]
    ]

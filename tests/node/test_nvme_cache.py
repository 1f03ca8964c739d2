"""nvme-cache.sh: instance-store disks striped, formatted and mounted; EBS never touched."""

from __future__ import annotations

EBS = "nvme0n1     Amazon Elastic Block Store              \n"
STORE = "Amazon EC2 NVMe Instance Storage        "


def touched(node, device: str) -> list[list[str]]:
    return [call for call in node.calls() if any(device in arg for arg in call[1:])]


def test_two_or_more_instance_store_disks_become_one_raid0_array(node):
    node.answer("lsblk", out=f"{EBS}nvme1n1     {STORE}\nnvme2n1     {STORE}\nnvme3n1 {STORE}\n")
    node.run("nvme-cache.sh")
    md = str(node.dev / "md0")
    disks = [str(node.dev / f"nvme{i}n1") for i in (1, 2, 3)]
    assert node.calls("lsblk") == [["-dn", "-o", "NAME,MODEL"]]
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

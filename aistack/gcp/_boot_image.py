"""The boot image of a GCP GPU VM (gcp.TrainingPool, gcp.InferenceTier): one rule, one place.

An instance template takes the image by name, never by `family/`: a family reference
resolves to the family's newest image each time the group creates a VM, so the driver and
the OS would change under a running pool (E1). Find the current name of a family with
`gcloud compute images describe-from-family FAMILY --project deeplearning-platform-release
--format='value(name)'`.

A Deep Learning VM image (project `deeplearning-platform-release`) is named
`<framework>-<cuda>-<os>[-py<ver>][-nvidia-<driver>]-v<YYYYMMDD>`: the DLVM docs' own
example is `pytorch-2-9-cu129-ubuntu-2204-nvidia-580-v20260416`
(docs.cloud.google.com/deep-learning-vm/docs/images), and public configs boot e.g.
`common-cu129-ubuntu-2204-nvidia-580-v20260909` (image id 3612508179781164991, recorded
in two unrelated projects' configs) or pass the family `common-cu129-ubuntu-2204-nvidia-580`.
Only the `-nvidia-<driver>` images have the driver built in; the others install it at
first boot when the metadata says `install-nvidia-driver=True`, which needs the internet
(Google's installer: "Access to Internet (the script needs to download the driver...)",
GoogleCloudPlatform/compute-gpu-installation linux/README.md) and builds an unsigned DKMS
module that Secure Boot refuses unless signing keys are enrolled
(linux/cuda_installer/os_installers/ubuntu.py @ 1213997c, `cuda-drivers` via apt with
optional DKMS MOK keys). The VMs here boot with Secure Boot on and no internet path, so a
DLVM image must be one of the `-nvidia-<driver>` images (docs/real-boot.md). Images of
other projects (a team's own) are taken as named: aistack cannot read their recipe.
"""

from __future__ import annotations

import re

__all__ = ["DLVM_PROJECT", "pinned_boot_image"]

DLVM_PROJECT = "deeplearning-platform-release"
_IMAGE = re.compile(
    r"projects/(?P<project>[a-z][-a-z0-9.:]*[a-z0-9])/global/images/"
    r"(?P<name>[a-z]([-a-z0-9]*[a-z0-9])?)"
)
#: A dated DLVM image with its driver built in: ...-<os>[-py<ver>]-nvidia-<driver>-v<date>.
_DLVM_WITH_DRIVER = re.compile(
    r"[a-z0-9-]+-(ubuntu-\d{4}|debian-\d{2})(-py\d{2,3})?-nvidia-\d{3}-v\d{8}"
)
_FAMILY_HINT = (
    "find the current image of a driver family with `gcloud compute images "
    "describe-from-family common-cu129-ubuntu-2204-nvidia-580 --project "
    f"{DLVM_PROJECT} --format='value(name)'` and write "
    f"projects/{DLVM_PROJECT}/global/images/<that name>"
)


def pinned_boot_image(image: str) -> str:
    """`image` if it is a boot image pinned by name that can run the GPUs; else ValueError
    with the fix (pydantic turns it into the field's ConfigError)."""
    if "/global/images/family/" in image:
        raise ValueError(
            f"{image!r} is an image family: the group would boot the family's newest image "
            f"at each VM creation, so the driver changes under the pool (E1). Fix: "
            f"{_FAMILY_HINT}."
        )
    match = _IMAGE.fullmatch(image)
    if match is None:
        raise ValueError(
            f"{image!r} is not an image pinned by name (E1). Fix: write "
            "projects/<project>/global/images/<image name>."
        )
    if match["project"] == DLVM_PROJECT and not _DLVM_WITH_DRIVER.fullmatch(match["name"]):
        raise ValueError(
            f"{match['name']!r} is not a Deep Learning VM image with the NVIDIA driver built "
            "in: those are named <framework>-<cuda>-<os>-nvidia-<driver>-v<YYYYMMDD>, and "
            "any other would build the driver at boot, which these VMs cannot (no internet "
            "path; an unsigned module under Secure Boot). Fix: " + _FAMILY_HINT + "."
        )
    return image

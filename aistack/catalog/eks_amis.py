"""EKS-optimized AL2023 AMI releases that matter to a Karpenter GPU pool (checklist E1).

Karpenter's `al2023@<version>` alias (karpenter-provider-aws v1.14.1,
`pkg/providers/amifamily/al2023.go`, `DescribeImageQuery`) reads one SSM parameter per
variant, `/aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/<arch>/<variant>/
amazon-eks-node-al2023-<arch>-<variant>-<k8s>-<version>/image_id` (`resolvePath`), and
skips the variants it cannot find (`if err != nil { continue }`). The standard variant
carries the requirement `karpenter.k8s.aws/instance-gpu-count DoesNotExist` and the NVIDIA
variant `Exists` (`pkg/providers/amifamily/types.go`, `Variant.Requirements`). So with a
release that has no NVIDIA image no discovered AMI is compatible with a GPU instance type:
NodeClaims for a GPU pool never launch, and GPU pods stay Pending.

Versions are awslabs/amazon-eks-ami release tags, `vYYYYMMDD`; zero-padded dates of one
length, so they order as strings.

Checked 2026-12-02 against awslabs/amazon-eks-ami `CHANGELOG.md` (the release notes, one
`# AMI Release vYYYYMMDD` section each, newest first; the line numbers below are of that
file at commit 81fec2e8, tag v20260724, 2026-07-23, whose newest section is v20260714).
A release ships images only for the Kubernetes versions EKS supported when it was built:
pin one that lists the cluster's version (the `aws ssm get-parameter` check in
docs/components/aws/karpenter-gpu-pool.md).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

__all__ = [
    "AL2023_RELEASES",
    "CHECKED",
    "EXAMPLE_RELEASE",
    "FIRST_NVIDIA_RELEASE",
    "FIRST_NVIDIA_RELEASE_FOR_KUBERNETES",
    "Al2023Release",
    "alias_version",
    "has_nvidia",
]

#: The day the table below was last checked against its sources.
CHECKED = datetime.date(2026, 12, 2)

_RELEASE = re.compile(r"v[0-9]{8}")


@dataclass(frozen=True)
class Al2023Release:
    """One amazon-eks-ami release: the Kubernetes versions it ships an AL2023 NVIDIA image
    for, per architecture, and where that is written."""

    version: str
    nvidia_x86_64: tuple[str, ...]
    nvidia_arm64: tuple[str, ...]
    note: str
    source: str


def _minors(first: int, last: int) -> tuple[str, ...]:
    return tuple(f"1.{minor}" for minor in range(first, last + 1))


#: The releases that mark a change for GPU pools, oldest first.
AL2023_RELEASES: tuple[Al2023Release, ...] = (
    Al2023Release(
        "v20240917",
        (),
        (),
        "The last release without an AL2023 NVIDIA image: AMI types AL2023_ARM_64_STANDARD, "
        "AL2023_x86_64_STANDARD and AL2 only. The AL2023 NVIDIA build scripts were added "
        "after v20240807 (commit a943086a, #1924, 2024-08-29: v20240807's tree has no "
        "templates/al2023/provisioners/install-nvidia-driver.sh).",
        "CHANGELOG.md:65501 (# AMI Release v20240917), AMI Details :65515-65531",
    ),
    Al2023Release(
        "v20240924",
        _minors(23, 31),
        (),
        "The first release with AL2023 x86_64 NVIDIA images (aws/containers-roadmap#2391: "
        "'we have them now ... releases/tag/v20240924', 2024-09-28; 'And now launched', "
        "2024-10-16). Until v20241016 (:61158) their AMI names carry the driver branch, "
        "amazon-eks-node-al2023-x86_64-nvidia-560-<k8s>-<version>; from v20241024 (:60116) "
        "they are amazon-eks-node-al2023-x86_64-nvidia-<k8s>-<version>, the name Karpenter's "
        "alias builds. Whether the SSM parameters of v20240924-v20241016 followed the AMI "
        "name was not verified: prefer a release from v20241024 on.",
        "CHANGELOG.md:64343 (# AMI Release v20240924), AL2023_x86_64_NVIDIA :64373, "
        "amazon-eks-node-al2023-x86_64-nvidia-560-1.31-v20240924 :64402",
    ),
    Al2023Release(
        "v20241024",
        _minors(24, 31),
        (),
        "The first release whose NVIDIA AMI names have the form Karpenter's alias resolves.",
        "CHANGELOG.md:60045 (# AMI Release v20241024), "
        "amazon-eks-node-al2023-x86_64-nvidia-1.31-v20241024 :60116",
    ),
    Al2023Release(
        "v20250403",
        _minors(25, 32),
        _minors(25, 32),
        "The first release with AL2023 arm64 NVIDIA images (g5g; Karpenter resolves them "
        "from v1.4, aws/karpenter-provider-aws#7996).",
        "CHANGELOG.md:40808 (# AMI Release v20250403), AL2023_ARM_64_NVIDIA :40830",
    ),
    Al2023Release(
        "v20260714",
        _minors(30, 36),
        _minors(30, 36),
        "The example release: x86_64 and arm64 NVIDIA images for every Kubernetes version "
        "Karpenter v1.14 supports (1.30-1.36, website/content/en/docs/upgrading/"
        "compatibility.md).",
        "CHANGELOG.md:5 (# AMI Release v20260714), amazon-eks-node-al2023-x86_64-nvidia-"
        "1.36-v20260714 :66, -1.34- :228, -1.33- :309, -1.31- :479, -1.30- :568",
    ),
)

#: The first release with any AL2023 NVIDIA image: an alias older than this never finds
#: an AMI for a GPU instance type.
FIRST_NVIDIA_RELEASE = "v20240924"

#: The release the docs, the example stack and the error messages pin.
EXAMPLE_RELEASE = "v20260714"

#: The first release with an AL2023 x86_64 NVIDIA image for each Kubernetes version
#: Karpenter v1.14 supports (CHANGELOG.md: 1.30 and 1.31 :64343, 1.32 :52290 v20241225,
#: 1.33 :33705 v20250519, 1.34 :22945 v20250915, 1.35 :11443 v20260114, 1.36 :1939
#: v20260610; each the oldest section naming amazon-eks-node-al2023-x86_64-nvidia-*-<k8s>-v*).
FIRST_NVIDIA_RELEASE_FOR_KUBERNETES: dict[str, str] = {
    "1.30": "v20240924",
    "1.31": "v20240924",
    "1.32": "v20241225",
    "1.33": "v20250519",
    "1.34": "v20250915",
    "1.35": "v20260114",
    "1.36": "v20260610",
}


def alias_version(alias: str) -> str | None:
    """The release an `al2023@vYYYYMMDD` alias pins, or None for any other alias."""
    family, _, version = alias.partition("@")
    return version if family == "al2023" and _RELEASE.fullmatch(version) else None


def has_nvidia(version: str) -> bool:
    """Whether an amazon-eks-ami release (`vYYYYMMDD`) is recent enough to ship AL2023
    NVIDIA images at all (for which Kubernetes versions: `AL2023_RELEASES`)."""
    return version >= FIRST_NVIDIA_RELEASE

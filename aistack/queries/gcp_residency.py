"""Which Google Cloud resources hold state, for residency (C4) and the third parties that
see it (G6)."""

from __future__ import annotations

from aistack.queries.gcp import WORKBENCH_INSTANCE

__all__ = ["STATEFUL"]

STATEFUL = {
    "gcp:storage/bucket:Bucket",
    "gcp:kms/keyRing:KeyRing",
    "gcp:kms/cryptoKey:CryptoKey",
    "gcp:artifactregistry/repository:Repository",
    "gcp:pubsub/topic:Topic",
    "gcp:logging/projectBucketConfig:ProjectBucketConfig",
    "gcp:container/cluster:Cluster",
    "gcp:container/nodePool:NodePool",
    # A notebook's boot and data disks hold its users' work.
    WORKBENCH_INSTANCE,
}

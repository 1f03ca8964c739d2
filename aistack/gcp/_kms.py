"""A customer-managed Cloud KMS key for one component, and the service agent's grant on it.

Shared by the GCP components that encrypt with CMEK (DatasetBucket, ContainerRegistry): the
service encrypts on the resource's behalf through its service agent, which must hold
Encrypter/Decrypter on the key BEFORE the resource names the key, or the create fails
(Cloud Storage and Artifact Registry docs, "Use customer-managed encryption keys").
"""

from __future__ import annotations

from collections.abc import Callable

import pulumi
import pulumi_gcp as gcp

__all__ = ["KMS_ENCRYPTER", "KEY_ROTATION", "compute_disk_key", "customer_key"]

KMS_ENCRYPTER = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
#: Key rotation: 90 days, the interval CIS GCP 1.10 asks for at most.
KEY_ROTATION = "7776000s"


def customer_key(
    name: str,
    *,
    project: str,
    location: str,
    labels: dict[str, str],
    deletion_policy: str,
    opts: Callable[[], pulumi.ResourceOptions],
) -> tuple[gcp.kms.KeyRing, gcp.kms.CryptoKey]:
    """A key ring and a rotating key in `location` (CMEK keys must be in the location of
    what they encrypt). Key rings and keys can never be deleted (a retained name returns
    409 on the next create): autonamed, so a destroy then up does not collide. `opts`
    makes each resource's options (retained with the data it encrypts)."""
    key_ring = gcp.kms.KeyRing(f"{name}-keyring", project=project, location=location, opts=opts())
    crypto_key = gcp.kms.CryptoKey(
        f"{name}-key",
        key_ring=key_ring.id,
        purpose="ENCRYPT_DECRYPT",
        rotation_period=KEY_ROTATION,
        labels=labels,
        deletion_policy=deletion_policy,
        opts=opts(),
    )
    return key_ring, crypto_key


def stack_key(
    name: str,
    given: str | None,
    *,
    project: str,
    location: str,
    labels: dict[str, str],
    deletion_policy: str,
    opts: Callable[[], pulumi.ResourceOptions],
) -> tuple[gcp.kms.KeyRing | None, gcp.kms.CryptoKey | None, pulumi.Output[str]]:
    """The key a component encrypts with: the one `given` (a key id from the Args), or a
    `customer_key` of its own. Returns the key ring and key it made (None, None when given)
    and the key's id."""
    if given:
        return None, None, pulumi.Output.from_input(given)
    key_ring, crypto_key = customer_key(
        name,
        project=project,
        location=location,
        labels=labels,
        deletion_policy=deletion_policy,
        opts=opts,
    )
    return key_ring, crypto_key, crypto_key.id


def compute_disk_key(
    owner: pulumi.Resource,
    name: str,
    *,
    project: str,
    region: str,
    labels: dict[str, str],
    depends_on: list[pulumi.Resource],
) -> tuple[pulumi.Output[str], gcp.kms.CryptoKeyIAMMember]:
    """A key for the persistent disks of a component's VMs (boot disks), in their region,
    and Encrypter/Decrypter on it for the Compute Engine service agent, which encrypts the
    disks (service-<NUMBER>@compute-system.iam.gserviceaccount.com; Compute Engine docs,
    "Protect resources by using Cloud KMS keys"). Whatever is created from the disks'
    template waits for the grant. The disks die with their VMs, and the key with the stack."""
    _, key = customer_key(
        f"{name}-disks",
        project=project,
        location=region,
        labels=labels,
        deletion_policy="DELETE",
        opts=lambda: pulumi.ResourceOptions(parent=owner, depends_on=depends_on),
    )
    number = gcp.organizations.get_project_output(
        project_id=project,
        opts=pulumi.InvokeOutputOptions(parent=owner, depends_on=depends_on),
    ).number
    grant = gcp.kms.CryptoKeyIAMMember(
        f"{name}-disks-key-compute",
        crypto_key_id=key.id,
        role=KMS_ENCRYPTER,
        member=pulumi.Output.format(
            "serviceAccount:service-{0}@compute-system.iam.gserviceaccount.com", number
        ),
        opts=pulumi.ResourceOptions(parent=owner, depends_on=depends_on),
    )
    return key.id, grant

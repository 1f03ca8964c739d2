"""Cloud KMS in the simulated GCP: key rings and crypto keys, named by their resource paths
(`projects/<p>/locations/<l>/keyRings/<ring>[/cryptoKeys/<key>]`)."""

from __future__ import annotations

from typing import Any

__all__ = ["kms_resource"]


def kms_resource(
    typ: str, project: str, region: str, name: str, inputs: dict[str, Any], out: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    """The id and outputs of a key ring or crypto key; None for other types."""
    if typ == "gcp:kms/keyRing:KeyRing":
        location = str(inputs.get("location") or region)
        resource_id = f"projects/{project}/locations/{location}/keyRings/{name}"
        out.update(name=name, location=location)
        return resource_id, out
    if typ == "gcp:kms/cryptoKey:CryptoKey":
        resource_id = f"{inputs.get('keyRing', '')}/cryptoKeys/{name}"
        out.update(name=name)
        return resource_id, out
    return None

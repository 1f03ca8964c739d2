"""Cloud Storage in the simulated GCP: buckets and objects, as the Storage JSON API returns them.

- a bucket's id is its name, its `url` is `gs://<name>`, its `selfLink` is the JSON API's
  `https://www.googleapis.com/storage/v1/b/<name>`, and its `location` comes back
  UPPERCASE ("EUROPE-WEST4"), as the Storage API returns it;
- `deletionPolicy` reads back "DELETE" when the program left it unset (pulumi-gcp 10's
  provider-side default, set for every type in `resources._DELETION_POLICY`): a rule can
  tell an explicit "PREVENT" from the default;
- a bucket name GCS would refuse fails the registration, as the API's 400 fails `up`.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from aistack.engine.gcp_cloud.project import SimulatedGcpError, project_number

__all__ = ["storage_resource"]

#: GCS bucket naming (Cloud Storage docs, "Bucket naming requirements"): 3-63 characters
#: of lowercase letters, digits, `-`, `_` and `.`, starting and ending with a letter or
#: digit; no "goog" prefix and no "google" anywhere.
_BUCKET_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]")


def storage_resource(
    typ: str, project: str, name: str, logical: str, inputs: dict[str, Any], out: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    """The id and outputs of a bucket or bucket object; None for other types."""
    if typ == "gcp:storage/bucket:Bucket":
        _check_bucket_name(name, logical)
        location = str(inputs.get("location") or "US")
        out.update(
            name=name,
            url=f"gs://{name}",
            # Storage JSON API: bucket resource `selfLink`.
            selfLink=f"https://www.googleapis.com/storage/v1/b/{name}",
            location=location.upper(),
            projectNumber=project_number(project),
            storageClass=inputs.get("storageClass") or "STANDARD",
        )
        return name, out
    if typ == "gcp:storage/bucketObject:BucketObject":
        bucket = str(inputs.get("bucket", ""))
        out.update(
            name=name,
            selfLink=f"https://www.googleapis.com/storage/v1/b/{bucket}/o/{quote(name, safe='')}",
            mediaLink=(
                f"https://storage.googleapis.com/download/storage/v1/b/{bucket}/o/"
                f"{quote(name, safe='')}?alt=media"
            ),
            outputName=name,
            generation=1,
        )
        return f"{bucket}-{name}", out
    return None


def _check_bucket_name(name: str, logical: str) -> None:
    if (
        not _BUCKET_NAME.fullmatch(name)
        or name.startswith("goog")
        or "google" in name
        or ".." in name
    ):
        raise SimulatedGcpError(
            f"Google Cloud Storage refuses the bucket name {name!r} (resource {logical!r}): "
            "names are 3-63 lowercase letters, digits, '-', '_' or '.', start and end with "
            "a letter or digit, and contain no 'google' nor start with 'goog'."
        )
